//! MCP over Streamable HTTP: [`McpServer::serve_http`] puts rmcp's
//! Streamable HTTP transport behind a small hyper server that answers on
//! one path ([`MCP_PATH`]), refuses a non-loopback address unless the
//! caller allowed it, and checks an optional bearer token in constant time.
//! Each MCP session (one `initialize`) gets its own handler, as a stdio
//! connection does; closing a session with `DELETE` cancels its running
//! calls at once (rmcp's close after 5 minutes without a message, once its
//! session has wound down).

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode, header};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionManager,
};
use rmcp::transport::streamable_http_server::{
    SessionId, StreamableHttpServerConfig, StreamableHttpService,
};
use subtle::ConstantTimeEq;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio_util::sync::CancellationToken;

use super::server::{Commands, McpServer, keep_alive};
use super::session::Session;
use crate::sync::LockUnpoisoned;

/// The path the MCP endpoint answers on: a client's URL is
/// `http://<address>/mcp`.
pub const MCP_PATH: &str = "/mcp";

impl McpServer {
    /// Lets [`serve_http`](McpServer::serve_http) serve an address other
    /// than loopback (`0.0.0.0`, a LAN address). It needs a
    /// [`bearer_token`](McpServer::bearer_token): without one, serving
    /// refuses to start (anyone who can reach the port would call every
    /// command, in plain text on the network; there is no opt-out). Any
    /// `Host` header is then accepted (the loopback default rejects
    /// others); a browser's `Origin` must still be a loopback page, against
    /// DNS rebinding.
    pub fn allow_remote(mut self, allow: bool) -> Self {
        self.http.allow_remote = allow;
        self
    }

    /// Serves HTTP without a bearer token, on loopback only: **every process
    /// on this machine may call every command** (any user's, a browser's
    /// helper, a compromised dependency). For a development machine of your
    /// own; never with [`allow_remote`](McpServer::allow_remote).
    pub fn allow_unauthenticated(mut self) -> Self {
        self.http.allow_unauthenticated = true;
        self
    }

    /// Requires every HTTP request to carry `Authorization: Bearer <token>`;
    /// others are answered `401 Unauthorized`. The comparison takes the same
    /// time wherever the tokens differ (only a length mismatch is quicker).
    /// Stdio ignores it.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.http.bearer_token = Some(Arc::from(token.into().into_bytes()));
        self
    }

    /// Serves MCP over Streamable HTTP on `addr` at the path [`MCP_PATH`]
    /// (a client's configuration: `{"url": "http://127.0.0.1:8080/mcp"}`),
    /// until the returned future is dropped or accepting fails.
    ///
    /// Security: only a loopback address (`127.0.0.1`, `::1`, `localhost`)
    /// is served unless [`allow_remote`](McpServer::allow_remote) says
    /// otherwise, and requests whose `Host` is not a loopback name, or
    /// whose `Origin` (a browser's) is not a loopback page, are refused
    /// (`403`), so a web page cannot reach the server through DNS
    /// rebinding. It needs a [`bearer_token`](McpServer::bearer_token) (or,
    /// on loopback, an explicit
    /// [`allow_unauthenticated`](McpServer::allow_unauthenticated)): every
    /// local process can connect. There is no TLS: put a TLS-terminating
    /// proxy in front of a remote server.
    ///
    /// Each session (each client's `initialize`) has its own state; progress
    /// and `notifications/cancelled` work as on stdio, and closing a session
    /// cancels its running calls: the client's `DELETE`, or 5 minutes
    /// without a message either way (a long call that reports no progress
    /// counts as silence).
    /// To learn the port of `127.0.0.1:0`, bind the listener yourself and use
    /// [`serve_http_on`](McpServer::serve_http_on).
    ///
    /// ```no_run
    /// # async fn demo(router: gangway::ipc::IpcRouter) -> std::io::Result<()> {
    /// let token = std::env::var("MCP_TOKEN").map_err(std::io::Error::other)?;
    /// gangway::mcp::McpServer::new(router)
    ///     .bearer_token(token)
    ///     .serve_http("127.0.0.1:8080")
    ///     .await
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// No bearer token (without `allow_unauthenticated`, or with
    /// `allow_remote`), or a blank one; `addr` does not resolve, is not
    /// loopback without `allow_remote`, or cannot be bound; accepting a
    /// connection failed for good.
    pub async fn serve_http(self, addr: impl ToSocketAddrs) -> io::Result<()> {
        let addresses: Vec<SocketAddr> = tokio::net::lookup_host(addr).await?.collect();
        for address in &addresses {
            self.check_reach(*address)?;
        }
        let listener = TcpListener::bind(&addresses[..]).await?;
        self.serve_http_on(listener).await
    }

    /// [`serve_http`](McpServer::serve_http) on a listener already bound:
    /// for a port chosen by the system (`127.0.0.1:0`), whose address
    /// `listener.local_addr()` tells before serving.
    ///
    /// ```no_run
    /// # async fn demo(router: gangway::ipc::IpcRouter) -> std::io::Result<()> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// eprintln!("MCP on http://{}/mcp", listener.local_addr()?);
    /// gangway::mcp::McpServer::new(router).serve_http_on(listener).await
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`serve_http`](McpServer::serve_http).
    pub async fn serve_http_on(mut self, listener: TcpListener) -> io::Result<()> {
        self.check_reach(listener.local_addr()?)?;
        let forwarding = matches!(self.commands, Commands::Host(_));
        let bearer = self
            .http
            .bearer_token
            .as_deref()
            .map(String::from_utf8_lossy);
        self.authority
            .start(forwarding, bearer.into_iter().map(Into::into).collect())?;
        // Cancelled when this future ends or is dropped: every session and
        // connection ends with it.
        let shutdown = CancellationToken::new();
        let _stop_all = shutdown.clone().drop_guard();
        // A forwarding server keeps its connection to the host from the
        // host's idle timeout while no session calls.
        let host = match &self.commands {
            Commands::Host(client) => Some(client.clone()),
            Commands::Local(_) => None,
        };
        let keeping = async {
            match &host {
                Some(host) => keep_alive(host).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(keeping);
        let authority = self.authority.clone();
        let front = Arc::new(Front::new(self, shutdown.clone()));
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = &mut keeping => unreachable!("keeping a connection alive never ends"),
            };
            let (stream, _peer) = match accepted {
                Ok(accepted) => accepted,
                // Out of file descriptors and the like: wait and go on
                // rather than end the server.
                Err(error) if is_transient(&error) => {
                    tracing::warn!(%error, "MCP over HTTP: accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
                Err(error) => {
                    authority.flush().await;
                    return Err(error);
                }
            };
            let front = front.clone();
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let front = front.clone();
                    async move { Ok::<_, Infallible>(front.answer(request).await) }
                });
                // The timer makes hyper's header read timeout (30 s) apply:
                // a peer trickling its headers is cut off.
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .serve_connection(TokioIo::new(stream), service);
                tokio::select! {
                    // A client that went away mid-request is no error of ours.
                    _ = connection => {}
                    () = shutdown.cancelled() => {}
                }
            });
        }
    }

    /// Refuses `address` when it is not loopback and remote clients were
    /// not allowed, and a blank bearer token.
    fn check_reach(&self, address: SocketAddr) -> io::Result<()> {
        if self.http.bearer_token.is_none() {
            if self.http.allow_remote {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "refusing to serve MCP beyond this machine without a bearer token: anyone \
                     who reaches the port would call every command; give one with \
                     `.bearer_token(..)`",
                ));
            }
            if !self.http.allow_unauthenticated {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "refusing to serve MCP over HTTP without a bearer token: every process on \
                     this machine could call every command; give one with `.bearer_token(..)`, \
                     or, on a development machine of your own, say `.allow_unauthenticated()`",
                ));
            }
        }
        if let Some(token) = &self.http.bearer_token {
            if token.trim_ascii().is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the MCP bearer token is empty: give `.bearer_token(..)` a secret",
                ));
            }
            // A header cannot carry it as given (a token read from a file
            // with its line break, say): no request would ever match.
            if !token.iter().all(u8::is_ascii_graphic) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the MCP bearer token has spaces, control characters or non-ASCII bytes, \
                     which an `Authorization` header cannot carry as given: trim it (a token \
                     read from a file ends in a line break)",
                ));
            }
        }
        if self.http.allow_remote || address.ip().is_loopback() {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "refusing to serve MCP on {address}: it is not a loopback address, so other \
                 machines could call every command; serve 127.0.0.1, or call \
                 `.allow_remote(true)` (with `.bearer_token(...)`) to serve it anyway"
            ),
        ))
    }
}

/// Whether an `accept` error passes (resources exhausted, a connection
/// reset before it was taken).
fn is_transient(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::OutOfMemory
    ) || error.raw_os_error().is_some_and(|code| {
        // EMFILE, ENFILE, ENOBUFS, ENOMEM.
        [24, 23, 105, 12].contains(&code)
    })
}

/// The browser origins a loopback server accepts, any port.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// A response body, as rmcp's service gives them.
type Body = BoxBody<Bytes, Infallible>;

/// What every request meets first: the token check and the path, then
/// rmcp's Streamable HTTP service.
struct Front {
    bearer_token: Option<Arc<[u8]>>,
    mcp: StreamableHttpService<Session, SessionsClosing>,
}

impl Front {
    fn new(server: McpServer, shutdown: CancellationToken) -> Self {
        let sessions = Arc::new(SessionsClosing::default());
        let mut config = StreamableHttpServerConfig::default().with_cancellation_token(shutdown);
        // A browser page must come from a loopback origin, remote or not:
        // a server on every address is on loopback too, where a page could
        // reach it by DNS rebinding. (A request without `Origin`, from a
        // program, passes.)
        config = config.with_allowed_origins(LOOPBACK_ORIGINS);
        if server.http.allow_remote {
            // rmcp's default wants a loopback `Host`.
            config = config.disable_allowed_hosts();
        }
        let bearer_token = server.http.bearer_token.clone();
        let factory = {
            let sessions = sessions.clone();
            move || {
                let mut session = Session::new(server.clone(), CancellationToken::new());
                let watch = SessionWatch {
                    sessions: sessions.clone(),
                    adopted: OnceLock::new(),
                };
                session.adopt_session = Some(Box::new(move |context, gone| {
                    watch.adopt(context, gone);
                }));
                Ok(session)
            }
        };
        Front {
            bearer_token,
            mcp: StreamableHttpService::new(factory, sessions, config),
        }
    }

    async fn answer(&self, request: Request<Incoming>) -> Response<Body> {
        if let Some(expected) = &self.bearer_token
            && !bearer_matches(&request, expected)
        {
            return plain(
                StatusCode::UNAUTHORIZED,
                "missing or wrong bearer token: send `Authorization: Bearer <token>` with the \
                 token this server was given",
            );
        }
        if request.uri().path() != MCP_PATH {
            return plain(
                StatusCode::NOT_FOUND,
                &format!("no MCP endpoint here: it is at {MCP_PATH}"),
            );
        }
        self.mcp.handle(request).await
    }
}

/// Whether `request` carries `Authorization: Bearer <expected>`.
fn bearer_matches(request: &Request<Incoming>, expected: &[u8]) -> bool {
    let Some(value) = request.headers().get(header::AUTHORIZATION) else {
        return false;
    };
    let value = value.as_bytes();
    let scheme = b"bearer ";
    if value.len() < scheme.len() || !value[..scheme.len()].eq_ignore_ascii_case(scheme) {
        return false;
    }
    let given = value[scheme.len()..].trim_ascii();
    bool::from(given.ct_eq(expected))
}

/// A plain-text answer.
fn plain(status: StatusCode, message: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{message}\n"))).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
    }
    response
}

/// How a session's handler learns that its session closed: it adopts the
/// session on its first call.
pub(super) struct SessionWatch {
    sessions: Arc<SessionsClosing>,
    adopted: OnceLock<()>,
}

impl SessionWatch {
    /// Ties `gone` to the session `context`'s request came in (once per
    /// handler): closing that session cancels it. A session already closed
    /// cancels it at once.
    pub(super) fn adopt(&self, context: &RequestContext<RoleServer>, gone: &CancellationToken) {
        let Some(parts) = context.extensions.get::<hyper::http::request::Parts>() else {
            return;
        };
        let Some(id) = parts
            .headers
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
        else {
            return;
        };
        self.adopted.get_or_init(|| {
            let mut open = self.sessions.open.lock_unpoisoned();
            match open.get_mut(id) {
                Some(handlers) => handlers.push(gone.clone()),
                None => gone.cancel(),
            }
        });
    }
}

/// rmcp's in-memory sessions, and for each open one the `gone` tokens of
/// its handler, cancelled when it closes (rmcp would let its calls run on
/// for up to 5 seconds).
#[derive(Default)]
struct SessionsClosing {
    inner: LocalSessionManager,
    open: Mutex<HashMap<SessionId, Vec<CancellationToken>>>,
}

impl SessionManager for SessionsClosing {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        self.open.lock_unpoisoned().insert(id.clone(), Vec::new());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let handlers = self.open.lock_unpoisoned().remove(id);
        for gone in handlers.into_iter().flatten() {
            gone.cancel();
        }
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        let outcome = self.inner.restore_session(id.clone()).await?;
        if matches!(outcome, RestoreOutcome::Restored(_)) {
            self.open.lock_unpoisoned().entry(id).or_default();
        }
        Ok(outcome)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
