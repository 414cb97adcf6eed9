//! [`McpServer`]: what it serves (a router in this process, or a gangway
//! host's commands forwarded) and how: its settings, its guard and audit
//! log; and the keep-alive a forwarding server sends its host.

use std::sync::Arc;
use std::time::Duration;

use super::authority::Authority;
#[cfg(feature = "mcp-http")]
use super::http_settings::HttpSettings;
use crate::ipc::{AsyncIpcClient, AuditSink, CallGuard, IpcRouter};

/// A router's commands served as MCP tools, or a gangway host's commands
/// forwarded to it ([`McpServer::forwarding`], what `gangway mcp` runs in
/// a sandbox).
#[derive(Debug, Clone)]
#[must_use]
pub struct McpServer {
    pub(super) commands: Commands,
    pub(super) name: String,
    pub(super) version: String,
    pub(super) cancel_grace: Duration,
    pub(super) call_timeout: Option<Duration>,
    /// Who decides on calls, and what records them.
    pub(super) authority: Authority,
    /// How `serve_http` may be reached.
    #[cfg(feature = "mcp-http")]
    pub(super) http: HttpSettings,
}

impl McpServer {
    /// Serves `router`'s commands, naming the server `gangway` and this
    /// crate's version in the `initialize` answer.
    pub fn new(router: IpcRouter) -> Self {
        McpServer::serving(
            Commands::Local(Arc::new(router)),
            Some(Duration::from_secs(300)),
        )
    }

    fn serving(commands: Commands, call_timeout: Option<Duration>) -> Self {
        McpServer {
            commands,
            name: "gangway".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            cancel_grace: Duration::from_secs(2),
            call_timeout,
            authority: Authority::default(),
            #[cfg(feature = "mcp-http")]
            http: HttpSettings::default(),
        }
    }

    /// Serves the commands `client`'s host lets it call, as tools, and
    /// forwards each call to the host over `client`'s connection: what an
    /// agent inside a sandbox runs (`gangway mcp` is this on the sandbox's
    /// `GANGWAY_ENDPOINT` and `GANGWAY_TOKEN`). A scoped sandbox sees only
    /// its scope's commands; the host binds the JSON arguments, applies its
    /// guard, audit log and timeouts (this side sets none unless
    /// [`with_call_timeout`](McpServer::with_call_timeout) says so), and a
    /// cancelled tool call cancels the host's call. The tool list is asked
    /// of the host at every `tools/list`. Serving ends, with an error of
    /// kind [`ConnectionAborted`](std::io::ErrorKind::ConnectionAborted), when
    /// the host's connection is lost: the agent's client sees the server
    /// go rather than an error at every call.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = gangway::ipc::AsyncIpcClient::from_env().await?;
    /// gangway::mcp::McpServer::forwarding(client).serve_stdio().await?;
    /// # Ok(()) }
    /// ```
    pub fn forwarding(client: AsyncIpcClient) -> Self {
        McpServer::serving(Commands::Host(client), None)
    }

    /// How long one call may run (5 minutes by default; `None` for no
    /// limit) unless its command sets its own (`#[ipc(timeout = "...")]`);
    /// past it the handler is cancelled (`CancelReason::TimedOut`), given
    /// the grace, and the result is an error. Forwarding (no limit by
    /// default: the host's own timeouts apply), the host's call is
    /// cancelled at this limit and the result is the same error.
    pub fn with_call_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// The name and version the server gives in its `initialize` answer.
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// How long a cancelled call's handler may take to finish once its
    /// context says so, before it is dropped (2 seconds by default).
    /// Forwarding, the host's grace applies, and this one only for a host
    /// that does not publish its own: a cancelled call waits that long
    /// (and a second more) for the host's answer, then gives up on it.
    pub fn with_cancel_grace(mut self, grace: Duration) -> Self {
        self.cancel_grace = grace;
        self
    }
}

/// Sends the host a `list` within each stretch of its idle timeout (a
/// third of it), so a quiet session's connection stays open; never ends.
pub(crate) async fn keep_alive(host: &AsyncIpcClient) {
    let Some(idle) = host.idle_timeout() else {
        return std::future::pending().await;
    };
    let every = (idle / 3).max(Duration::from_millis(10));
    loop {
        tokio::time::sleep(every).await;
        let _ = host.list().await;
    }
}

/// Where a server's tools come from and where its calls go.
#[derive(Debug, Clone)]
pub(super) enum Commands {
    /// A router in this process.
    Local(Arc<IpcRouter>),
    /// A gangway host, through a connection to it.
    Host(AsyncIpcClient),
}

impl McpServer {
    /// Asks `guard` about every call, after its arguments are bound and
    /// before its handler runs, as
    /// [`IpcServerBuilder::guard`](crate::ipc::IpcServerBuilder::guard)
    /// does (the same [`CallGuard`]; its [`CallInfo`](crate::ipc::CallInfo)
    /// has the scope `mcp` and no peer). A denial is a tool result with
    /// `isError` and the reason. For a router served in this process: a
    /// forwarding server's calls are its host's to decide.
    pub fn guard(mut self, guard: impl CallGuard) -> Self {
        self.authority.set_guard(Arc::new(guard));
        self
    }

    /// Sends an [`AuditRecord`](crate::ipc::AuditRecord) to `sink` for every call when it ends, as
    /// [`IpcServerBuilder::audit`](crate::ipc::IpcServerBuilder::audit)
    /// does: the same sinks, the same fields, the scope `mcp`, no `pid` or
    /// `uid`. The sink's thread starts when the server starts serving, and
    /// belongs to the first server serving from this one or a clone; every
    /// record is written before [`serve_io`](McpServer::serve_io) returns
    /// (waiting at most 5 seconds for a slow sink). For a
    /// router served in this process: a forwarding server's calls are
    /// recorded by its host.
    pub fn audit(mut self, sink: impl AuditSink) -> Self {
        self.authority.set_sink(Box::new(sink));
        self
    }
}
