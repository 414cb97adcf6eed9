//! Every command as a Model Context Protocol tool: [`McpServer`] serves a
//! router's commands to an agent over MCP, built on `rmcp`, the official
//! Rust SDK, which does the protocol and the transport. The tools come from
//! the commands' compile-time schemas; a call goes through the same binder
//! as shell words and the same handler path, so a command behaves the same
//! from a sandboxed shell and from an agent.
//!
//! Transports: standard input and output ([`McpServer::serve_stdio`]), any
//! byte stream ([`McpServer::serve_io`]), and with the `mcp-http` feature
//! Streamable HTTP (`McpServer::serve_http`, at `/mcp`: loopback only
//! unless allowed, a bearer token required unless opted out of on
//! loopback). Each connection or HTTP
//! session has its own state. When an HTTP session closes, its running
//! calls are cancelled at once (`CancelReason::CallerGone`); when a
//! stream's input ends, rmcp gives them 5 seconds to answer, then cancels
//! them.
//!
//! - `tools/list`: each command's name, its doc comment as the description,
//!   and its JSON Schema as `inputSchema` (an object root, no null unions,
//!   no `$ref`).
//! - `tools/call`: the arguments are bound by the command's schema (types
//!   checked, "did you mean" for a misspelt name); a stdin argument is an
//!   ordinary argument: a string, or for bytes (`Vec<u8>`, `ByteBuf`,
//!   `InputStream`, given whole) a string or `{"base64": "..."}` for bytes
//!   that are not text. A handler's error, a binding error, an
//!   unknown tool and a timeout are results with `isError: true` and the
//!   message, so the model can read it and try again, never protocol
//!   errors. A `String` response is text content; any other is its JSON as
//!   text; what the handler streamed (`ctx.stdout` and `ctx.stderr`, in the
//!   order written, at most 1 MiB) comes first in the text.
//! - Typed results: a command with `#[ipc(output_schema)]` (its response
//!   type implements `schemars::JsonSchema`) has an `outputSchema` (an
//!   object root, a non-object answer wrapped as `{"result": ...}`,
//!   inlined, no null unions: see [`OutputSchema`](crate::tool::OutputSchema)),
//!   and each successful result carries `structuredContent` and the same
//!   JSON as a text block (what the handler streamed is a text block before
//!   it). The structured answer is the JSON `serde_json` writes of the
//!   success value (decoded from the answer by the command's type, on the
//!   host, so an `IpAddr` is its text and a unit struct `null`), with a
//!   `None` property left out. An error result never carries
//!   `structuredContent`. Not matched to their schema: `None` items of a
//!   list (kept as `null`, which a schema without null unions cannot
//!   describe) and 128-bit integers past `u64`.
//!   A forwarding server takes each tool's output schema from the host's
//!   list.
//! - The command's timeout (`#[ipc(timeout = "...")]`), else the server's
//!   (5 minutes), applies as it does over the socket, and so do a guard
//!   and an audit log ([`McpServer::guard`], [`McpServer::audit`]: the same
//!   as [`IpcServer`](crate::ipc::IpcServer)'s, the records' scope `mcp`).
//! - `notifications/cancelled` cancels the running handler
//!   (`ctx.cancelled()` completes with `CancelReason::Interrupted`); it then
//!   has the cancel grace (2 s) to finish.
//! - `ctx.progress(...)` becomes `notifications/progress` when the request
//!   carried a `progressToken`.
//!
//! [`McpServer::forwarding`] serves a gangway host's commands instead (what
//! `gangway mcp` runs inside a sandbox): the tools are those the sandbox's
//! token may call, as the host lists them, and each call runs on the host,
//! so the host's binder, guard, audit log, timeouts and cancel grace apply
//! there; this side adds only what [`McpServer::with_call_timeout`] sets.
//! It ends when the host's connection is lost.
//!
//! ```no_run
//! # async fn demo(router: gangway::ipc::IpcRouter) -> std::io::Result<()> {
//! gangway::mcp::McpServer::new(router).serve_stdio().await
//! # }
//! ```

mod authority;
mod call;
mod forward;
#[cfg(feature = "mcp-http")]
mod http;
mod progress;
mod structured;
mod tools;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::ipc::{AsyncIpcClient, IpcRouter};

#[cfg(feature = "mcp-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub use http::MCP_PATH;

/// A router's commands served as MCP tools, or a gangway host's commands
/// forwarded to it ([`McpServer::forwarding`], what `gangway mcp` runs in
/// a sandbox).
#[derive(Debug, Clone)]
#[must_use]
pub struct McpServer {
    commands: Commands,
    name: String,
    version: String,
    cancel_grace: Duration,
    call_timeout: Option<Duration>,
    /// Who decides on calls, and what records them.
    authority: authority::Authority,
    /// How `serve_http` may be reached.
    #[cfg(feature = "mcp-http")]
    http: http::HttpSettings,
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
            authority: authority::Authority::default(),
            #[cfg(feature = "mcp-http")]
            http: http::HttpSettings::default(),
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
    /// kind [`ConnectionAborted`](io::ErrorKind::ConnectionAborted), when
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

    /// Serves MCP on this process's standard input and output until the
    /// client closes them. Nothing else in the process may write to
    /// standard output (a `println!`, a logger): it would corrupt the
    /// stream; log to standard error.
    ///
    /// # Errors
    ///
    /// The client broke the protocol during initialization, or the
    /// connection failed.
    pub async fn serve_stdio(self) -> io::Result<()> {
        self.serve_io(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves MCP over any byte stream pair (a child's pipes, a socket)
    /// until the client closes it.
    ///
    /// # Errors
    ///
    /// As [`serve_stdio`](McpServer::serve_stdio).
    pub async fn serve_io<R, W>(mut self, reader: R, writer: W) -> io::Result<()>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let host = match &self.commands {
            Commands::Local(_) => None,
            Commands::Host(client) => Some(client.clone()),
        };
        self.authority.start(host.is_some())?;
        // The end of the input is not a cancel: rmcp gives running calls
        // time to answer (5 s) before it cancels them itself.
        let handler_authority = self.authority.clone();
        let handler = Handler::new(self, CancellationToken::new());
        let running = handler
            .serve((reader, writer))
            .await
            .map_err(|error| io::Error::other(format!("MCP initialization failed: {error}")))?;
        let session_failed = |error: tokio::task::JoinError| {
            io::Error::other(format!("the MCP session failed: {error}"))
        };
        let Some(host) = host else {
            let ended = running.waiting().await.map(|_| ()).map_err(session_failed);
            // Every call's record is written before serving returns.
            handler_authority.flush().await;
            return ended;
        };
        // Without its host a forwarding server can do nothing: it ends, so
        // the agent's client sees it go (and may start it again) rather
        // than meet an error at every call.
        let stop = running.cancellation_token();
        let ending = running.waiting();
        tokio::pin!(ending);
        // An agent may think for a long while between calls: the session
        // keeps its connection from the host's idle timeout.
        let keeping = keep_alive(&host);
        tokio::pin!(keeping);
        tokio::select! {
            ended = &mut ending => ended.map(|_| ()).map_err(session_failed),
            () = &mut keeping => unreachable!("keeping a connection alive never ends"),
            () = host.closed() => {
                stop.cancel();
                let _ = ending.await;
                Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "the connection to the gangway host was lost",
                ))
            }
        }
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
enum Commands {
    /// A router in this process.
    Local(Arc<IpcRouter>),
    /// A gangway host, through a connection to it.
    Host(AsyncIpcClient),
}

/// The rmcp side: what the server answers, for one session.
struct Handler {
    server: McpServer,
    /// A local router's tools (they do not change while it serves).
    tools: Arc<Vec<Tool>>,
    /// Cancelled when the client has gone (an HTTP session closed):
    /// running calls are cancelled with `CancelReason::CallerGone`.
    gone: CancellationToken,
    /// Over HTTP, how `gone` learns that the session closed.
    #[cfg(feature = "mcp-http")]
    http_session: Option<http::SessionWatch>,
    /// A forwarding server's: the output schemas of the host's tools.
    host_outputs: forward::HostOutputs,
}

impl Handler {
    /// A session's handler of `server`'s commands, whose calls `gone`
    /// cancels.
    fn new(server: McpServer, gone: CancellationToken) -> Self {
        let tools = match &server.commands {
            Commands::Local(router) => Arc::new(tools::tools(router)),
            Commands::Host(_) => Arc::new(Vec::new()),
        };
        Handler {
            server,
            tools,
            gone,
            #[cfg(feature = "mcp-http")]
            http_session: None,
            host_outputs: forward::HostOutputs::default(),
        }
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                self.server.name.clone(),
                self.server.version.clone(),
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        match &self.server.commands {
            Commands::Local(_) => Ok(ListToolsResult::with_all_items(self.tools.to_vec())),
            Commands::Host(client) => match client.list().await {
                Ok(manifest) => {
                    self.host_outputs.remember(&manifest);
                    Ok(ListToolsResult::with_all_items(
                        manifest.commands.iter().map(tools::tool).collect(),
                    ))
                }
                Err(error) => Err(ErrorData::internal_error(
                    format!("cannot list the host's commands: {error}"),
                    None,
                )),
            },
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        #[cfg(feature = "mcp-http")]
        if let Some(session) = &self.http_session {
            session.adopt(&context, &self.gone);
        }
        let result = match &self.server.commands {
            Commands::Local(router) => call::call(self, router, request, context).await,
            Commands::Host(client) => forward::call(self, client, request, context).await,
        };
        Ok(CallToolResponse::Complete(result))
    }
}
