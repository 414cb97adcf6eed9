//! One MCP session's state: the server it serves, its tools, the token
//! its calls are cancelled by when its client goes, and the host's output
//! schemas for a forwarding server.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::Tool;
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

use super::server::{Commands, McpServer};
use super::tools;
use crate::ipc::AsyncIpcClient;
use crate::sync::LockUnpoisoned;
use crate::tool::{Manifest, OutputSchema};

/// Ties a session's `gone` token to the HTTP session a call came in.
pub(super) type AdoptSession =
    Box<dyn Fn(&RequestContext<RoleServer>, &CancellationToken) + Send + Sync>;

/// One MCP session (a stream, or an HTTP client's `initialize`): the
/// server it serves and what its calls share. rmcp's `ServerHandler` is
/// implemented for it in `serve`.
pub(super) struct Session {
    pub(super) server: McpServer,
    /// A local router's tools (they do not change while it serves).
    pub(super) tools: Arc<Vec<Tool>>,
    /// Cancelled when the client has gone (an HTTP session closed):
    /// running calls are cancelled with `CancelReason::CallerGone`.
    pub(super) gone: CancellationToken,
    /// Over HTTP, how `gone` learns that the session closed: called with
    /// each call's request context.
    pub(super) adopt_session: Option<AdoptSession>,
    /// A forwarding server's: the output schemas of the host's tools.
    pub(super) host_outputs: HostOutputs,
}

impl Session {
    /// A session's handler of `server`'s commands, whose calls `gone`
    /// cancels.
    pub(super) fn new(server: McpServer, gone: CancellationToken) -> Self {
        let tools = match &server.commands {
            Commands::Local(router) => Arc::new(tools::tools(router)),
            Commands::Host(_) => Arc::new(Vec::new()),
        };
        Session {
            server,
            tools,
            gone,
            adopt_session: None,
            host_outputs: HostOutputs::default(),
        }
    }
}

/// The output schemas of the host's commands, as its last list gave them
/// (what `tools/list` answered), so a forwarded call's answer is structured
/// as its tool said it would be.
#[derive(Debug, Default)]
pub(super) struct HostOutputs(Mutex<Option<HashMap<String, Option<OutputSchema>>>>);

impl HostOutputs {
    /// Remembers the output schemas of `manifest`'s commands.
    pub(super) fn remember(&self, manifest: &Manifest) {
        let outputs = manifest
            .commands
            .iter()
            .map(|command| (command.name.to_string(), command.output_schema.clone()))
            .collect();
        *self.0.lock_unpoisoned() = Some(outputs);
    }

    /// The output schema of the host's command `name`; the host's list is
    /// asked for when the client called a tool it has not listed.
    pub(super) async fn of(&self, client: &AsyncIpcClient, name: &str) -> Option<OutputSchema> {
        if let Some(outputs) = &*self.0.lock_unpoisoned()
            && let Some(output) = outputs.get(name)
        {
            return output.clone();
        }
        // A host that cannot list answers as an unstructured tool would.
        let manifest = client.list().await.ok()?;
        self.remember(&manifest);
        manifest.command(name)?.output_schema.clone()
    }
}
