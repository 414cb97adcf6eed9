//! Every command as a Model Context Protocol tool: [`McpServer`] serves a
//! router's commands to an agent over MCP, built on `rmcp`, the official
//! Rust SDK, which does the protocol and the transport. The tools come from
//! the commands' compile-time schemas; a call goes through the same binder
//! as shell words and the same handler path, so a command behaves the same
//! from a sandboxed shell and from an agent.
//!
//! - `tools/list`: each command's name, its doc comment as the description,
//!   and its JSON Schema as `inputSchema` (an object root, no null unions,
//!   no `$ref`).
//! - `tools/call`: the arguments are bound by the command's schema (types
//!   checked, "did you mean" for a misspelt name); a stdin argument is an
//!   ordinary string argument. A handler's error, a binding error, an
//!   unknown tool and a timeout are results with `isError: true` and the
//!   message, so the model can read it and try again, never protocol
//!   errors. A `String` response is text content; any other is its JSON as
//!   text; what the handler streamed (`ctx.stdout` and `ctx.stderr`, in the
//!   order written, at most 1 MiB) comes first in the text.
//! - The command's timeout (`#[ipc(timeout = "...")]`), else the server's
//!   (5 minutes), applies as it does over the socket. The server's guard
//!   and audit log do not (they belong to [`IpcServer`](crate::ipc::IpcServer)).
//! - `notifications/cancelled` cancels the running handler
//!   (`ctx.cancelled()` completes with `CancelReason::Interrupted`); it then
//!   has the cancel grace (2 s) to finish.
//! - `ctx.progress(...)` becomes `notifications/progress` when the request
//!   carried a `progressToken`.
//!
//! ```no_run
//! # async fn demo(router: gangway::ipc::IpcRouter) -> std::io::Result<()> {
//! gangway::mcp::McpServer::new(router).serve_stdio().await
//! # }
//! ```

mod call;
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

use crate::ipc::IpcRouter;

/// A router's commands served as MCP tools.
#[derive(Debug, Clone)]
#[must_use]
pub struct McpServer {
    router: Arc<IpcRouter>,
    name: String,
    version: String,
    cancel_grace: Duration,
    call_timeout: Option<Duration>,
}

impl McpServer {
    /// Serves `router`'s commands, naming the server `gangway` and this
    /// crate's version in the `initialize` answer.
    pub fn new(router: IpcRouter) -> Self {
        McpServer {
            router: Arc::new(router),
            name: "gangway".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            cancel_grace: Duration::from_secs(2),
            call_timeout: Some(Duration::from_secs(300)),
        }
    }

    /// How long one call may run (5 minutes by default; `None` for no
    /// limit) unless its command sets its own (`#[ipc(timeout = "...")]`);
    /// past it the handler is cancelled (`CancelReason::TimedOut`), given
    /// the grace, and the result is an error.
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
    pub async fn serve_io<R, W>(self, reader: R, writer: W) -> io::Result<()>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let tools = Arc::new(tools::tools(&self.router));
        let handler = Handler {
            server: self,
            tools,
        };
        let running = handler
            .serve((reader, writer))
            .await
            .map_err(|error| io::Error::other(format!("MCP initialization failed: {error}")))?;
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|error| io::Error::other(format!("the MCP session failed: {error}")))
    }
}

/// The rmcp side: what the server answers.
struct Handler {
    server: McpServer,
    tools: Arc<Vec<Tool>>,
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
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let result = call::call(&self.server, request, context).await;
        Ok(CallToolResponse::Complete(result))
    }
}
