//! How an MCP server over HTTP may be reached: remote clients allowed or
//! not, the bearer token, the opt-out from it. Set through
//! `McpServer::{allow_remote, bearer_token, allow_unauthenticated}`.

use std::fmt;
use std::sync::Arc;

/// How [`McpServer::serve_http`](crate::mcp::McpServer::serve_http) may be reached.
#[derive(Clone, Default)]
pub(super) struct HttpSettings {
    /// Whether a non-loopback address may be served.
    pub(super) allow_remote: bool,
    /// What `Authorization: Bearer` must carry, when set.
    pub(super) bearer_token: Option<Arc<[u8]>>,
    /// Whether serving without a token was asked for.
    pub(super) allow_unauthenticated: bool,
}

impl fmt::Debug for HttpSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The token is a secret: never in a log.
        f.debug_struct("HttpSettings")
            .field("allow_remote", &self.allow_remote)
            .field("bearer_token", &self.bearer_token.as_ref().map(|_| "<set>"))
            .field("allow_unauthenticated", &self.allow_unauthenticated)
            .finish()
    }
}
