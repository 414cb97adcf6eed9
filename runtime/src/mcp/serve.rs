//! Serving a session: rmcp's `ServerHandler` for [`Session`] (the tool
//! list, each call in process or forwarded), and serving over a byte
//! stream ([`McpServer::serve_io`], [`McpServer::serve_stdio`]).

use std::io;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use super::server::{Commands, McpServer, keep_alive};
use super::session::Session;
use super::{call, forward, tools};

impl McpServer {
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
        self.authority.start(host.is_some(), Vec::new())?;
        // The end of the input is not a cancel: rmcp gives running calls
        // time to answer (5 s) before it cancels them itself.
        let handler_authority = self.authority.clone();
        let handler = Session::new(self, CancellationToken::new());
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

impl ServerHandler for Session {
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
        if let Some(adopt) = &self.adopt_session {
            adopt(&context, &self.gone);
        }
        let result = match &self.server.commands {
            Commands::Local(router) => call::call(self, router, request, context).await,
            Commands::Host(client) => forward::call(self, client, request, context).await,
        };
        Ok(CallToolResponse::Complete(result))
    }
}
