//! The IPC server: an [`IpcRouter`] served on a Unix socket in a private
//! directory (or on TCP for containers and VMs), every connection
//! authenticated by a random token, every limit explicit.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_bytes::ByteBuf;
use subtle::ConstantTimeEq;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::env::{SandboxEnv, locate_client_bin};
use super::protocol::{self, EXIT_UNAVAILABLE, FrameError, Request, Response, WireError};
use super::{ArgvOutcome, IpcError, IpcRouter};

/// Where a server listens and a client connects: `unix:/path/to/socket` or
/// `tcp:127.0.0.1:4000`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A Unix socket.
    Unix(PathBuf),
    /// A TCP address.
    Tcp(SocketAddr),
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Unix(path) => write!(f, "unix:{}", path.display()),
            Endpoint::Tcp(addr) => write!(f, "tcp:{addr}"),
        }
    }
}

impl FromStr for Endpoint {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if let Some(path) = text.strip_prefix("unix:") {
            if path.is_empty() {
                return Err("`unix:` needs a socket path after it".to_owned());
            }
            Ok(Endpoint::Unix(PathBuf::from(path)))
        } else if let Some(addr) = text.strip_prefix("tcp:") {
            addr.parse()
                .map(Endpoint::Tcp)
                .map_err(|_| format!("`{addr}` is not a TCP address such as 127.0.0.1:4000"))
        } else {
            Err(format!(
                "`{text}` is not an endpoint; write `unix:/path/to/socket` or `tcp:127.0.0.1:4000`"
            ))
        }
    }
}

/// Options for an [`IpcServer`]; start it with
/// [`start`](IpcServerBuilder::start).
#[derive(Debug, Clone)]
#[must_use]
pub struct IpcServerBuilder {
    max_frame: usize,
    max_connections: usize,
    max_in_flight: usize,
    call_timeout: Option<Duration>,
    tcp: Option<SocketAddr>,
    socket_parent: Option<PathBuf>,
    token: Option<String>,
    client_bin: Option<PathBuf>,
    wrapper_dir: Option<PathBuf>,
}

impl Default for IpcServerBuilder {
    fn default() -> Self {
        IpcServerBuilder {
            max_frame: protocol::DEFAULT_MAX_FRAME,
            max_connections: 256,
            max_in_flight: 64,
            call_timeout: Some(Duration::from_secs(300)),
            tcp: None,
            socket_parent: None,
            token: None,
            client_bin: None,
            wrapper_dir: None,
        }
    }
}

impl IpcServerBuilder {
    /// The largest frame accepted, in bytes (16 MiB by default). A larger
    /// one is answered with a `frame_too_large` error and its connection
    /// closed.
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes;
        self
    }

    /// How many connections may be open at once (256 by default); one more
    /// is answered with a `busy` error and closed.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections.max(1);
        self
    }

    /// How many calls one connection may have running at once (64 by
    /// default); past that, the server stops reading that connection until
    /// one finishes.
    pub fn max_in_flight(mut self, calls: usize) -> Self {
        self.max_in_flight = calls.max(1);
        self
    }

    /// How long one call may run (5 minutes by default; `None` for no
    /// limit). A call over it is answered with a `timeout` error.
    pub fn call_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Listen on TCP instead of a Unix socket, for containers and VMs that
    /// cannot share a file system with the host. The token is required all
    /// the same; prefer a loopback or private address.
    pub fn tcp(mut self, addr: SocketAddr) -> Self {
        self.tcp = Some(addr);
        self
    }

    /// Where the private socket directory is created (default:
    /// `$XDG_RUNTIME_DIR`, else the system's temporary directory).
    pub fn socket_parent(mut self, dir: impl Into<PathBuf>) -> Self {
        self.socket_parent = Some(dir.into());
        self
    }

    /// Use this token instead of a fresh random one.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// The `gangway` client binary sandboxed processes run (default: from
    /// `GANGWAY_BIN`, else next to this executable, else on `PATH`).
    pub fn client_bin(mut self, path: impl Into<PathBuf>) -> Self {
        self.client_bin = Some(path.into());
        self
    }

    /// The directory of generated wrapper scripts, which
    /// [`SandboxEnv`] puts first on a child's `PATH`.
    pub fn wrapper_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.wrapper_dir = Some(dir.into());
        self
    }

    /// Starts serving `router`.
    ///
    /// # Errors
    ///
    /// The error of creating the socket directory, binding, or reading
    /// random bytes for the token.
    pub async fn start(self, router: IpcRouter) -> io::Result<IpcServer> {
        let token = match self.token {
            Some(token) => token,
            None => fresh_token()?,
        };
        let cancel = CancellationToken::new();
        let tracker = TaskTracker::new();
        let shared = Arc::new(Shared {
            router,
            token: token.clone(),
            max_frame: self.max_frame,
            max_in_flight: self.max_in_flight,
            call_timeout: self.call_timeout,
            connections: Arc::new(Semaphore::new(self.max_connections)),
            cancel: cancel.clone(),
            tracker: tracker.clone(),
            calls_running: AtomicUsize::new(0),
        });
        let (endpoint, socket_dir, accept) = match self.tcp {
            Some(addr) => {
                let listener = tokio::net::TcpListener::bind(addr).await?;
                let endpoint = Endpoint::Tcp(listener.local_addr()?);
                let task = tokio::spawn(accept_tcp(listener, shared.clone()));
                (endpoint, None, task)
            }
            None => {
                let dir = private_dir(self.socket_parent.as_deref())?;
                let path = dir.path().join("s");
                let listener = tokio::net::UnixListener::bind(&path)?;
                set_mode(&path, 0o600)?;
                let task = tokio::spawn(accept_unix(listener, shared.clone()));
                (Endpoint::Unix(path), Some(dir), task)
            }
        };
        Ok(IpcServer {
            endpoint,
            token,
            socket_dir,
            shared,
            accept: Some(accept),
            client_bin: self.client_bin.or_else(locate_client_bin),
            wrapper_dir: self.wrapper_dir,
        })
    }
}

/// An [`IpcRouter`] served to sandboxed processes.
///
/// ```
/// use gangway::IpcCommand;
/// use gangway::ipc::{IpcClient, IpcRouter, IpcServer};
///
/// /// Add two numbers.
/// #[derive(Clone, serde::Serialize, IpcCommand)]
/// #[ipc(response = i64)]
/// struct Add { a: i64, b: i64 }
/// impl Add { async fn handle(&mut self) -> i64 { self.a + self.b } }
///
/// # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
/// let server = IpcServer::start(IpcRouter::new().register(Add { a: 0, b: 0 })).await.unwrap();
/// let env = server.sandbox_env();
/// let sum = tokio::task::spawn_blocking(move || {
///     let mut client = IpcClient::connect(&env.endpoint().to_string(), env.token()).unwrap();
///     client.call(&Add { a: 2, b: 3 }).unwrap()
/// })
/// .await
/// .unwrap();
/// assert_eq!(sum, 5);
/// server.shutdown(std::time::Duration::from_secs(1)).await;
/// # });
/// ```
pub struct IpcServer {
    endpoint: Endpoint,
    token: String,
    socket_dir: Option<tempfile::TempDir>,
    shared: Arc<Shared>,
    accept: Option<tokio::task::JoinHandle<()>>,
    client_bin: Option<PathBuf>,
    wrapper_dir: Option<PathBuf>,
}

impl fmt::Debug for IpcServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IpcServer")
            .field("endpoint", &self.endpoint)
            .field("commands", &self.shared.router.commands().len())
            .finish_non_exhaustive()
    }
}

/// How [`IpcServer::shutdown`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShutdownReport {
    /// Calls still running at the deadline, abandoned.
    pub abandoned_calls: usize,
}

struct Shared {
    router: IpcRouter,
    token: String,
    max_frame: usize,
    max_in_flight: usize,
    call_timeout: Option<Duration>,
    connections: Arc<Semaphore>,
    cancel: CancellationToken,
    tracker: TaskTracker,
    calls_running: AtomicUsize,
}

impl IpcServer {
    /// Serves `router` on a Unix socket in a fresh private directory, with a
    /// fresh token and default limits.
    ///
    /// # Errors
    ///
    /// As [`IpcServerBuilder::start`].
    pub async fn start(router: IpcRouter) -> io::Result<IpcServer> {
        IpcServer::builder().start(router).await
    }

    /// Options for a server.
    pub fn builder() -> IpcServerBuilder {
        IpcServerBuilder::default()
    }

    /// Where clients connect.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The token clients present.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The private directory holding the Unix socket (bind it into a
    /// sandbox), if the server listens on one.
    pub fn socket_dir(&self) -> Option<&Path> {
        self.socket_dir.as_ref().map(tempfile::TempDir::path)
    }

    /// What a child process needs to reach this server.
    pub fn sandbox_env(&self) -> SandboxEnv {
        SandboxEnv::new(self.endpoint.clone(), self.token.clone())
            .with_client_bin(self.client_bin.clone())
            .with_wrapper_dir(self.wrapper_dir.clone())
    }

    /// Stops accepting, lets calls in flight finish until `deadline`, then
    /// removes the socket and its directory.
    pub async fn shutdown(mut self, deadline: Duration) -> ShutdownReport {
        self.shared.cancel.cancel();
        if let Some(accept) = self.accept.take() {
            let _ = accept.await;
        }
        self.shared.tracker.close();
        let _ = tokio::time::timeout(deadline, self.shared.tracker.wait()).await;
        let abandoned_calls = self.shared.calls_running.load(Ordering::SeqCst);
        if let Some(dir) = self.socket_dir.take() {
            let _ = dir.close();
        }
        ShutdownReport { abandoned_calls }
    }
}

impl Drop for IpcServer {
    fn drop(&mut self) {
        self.shared.cancel.cancel();
        if let Some(accept) = self.accept.take() {
            accept.abort();
        }
        // The socket directory goes with its `TempDir`.
    }
}

fn fresh_token() -> io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| io::Error::other(error.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A fresh directory only this user can enter, with a path short enough
/// that its socket fits in `sockaddr_un` (108 bytes).
fn private_dir(parent: Option<&Path>) -> io::Result<tempfile::TempDir> {
    let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
    let candidates = parent
        .map(Path::to_path_buf)
        .into_iter()
        .chain(runtime_dir.filter(|d| d.is_dir()))
        .chain([std::env::temp_dir(), PathBuf::from("/tmp")]);
    let mut last_error = None;
    for base in candidates {
        // "<base>/gangway-XXXXXX/s" must stay under the limit.
        if base.as_os_str().len() + "/gangway-XXXXXX/s".len() >= 100 {
            last_error = Some(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is too long a path for a Unix socket", base.display()),
            ));
            continue;
        }
        match tempfile::Builder::new()
            .prefix("gangway-")
            .rand_bytes(6)
            .tempdir_in(&base)
        {
            Ok(dir) => {
                set_mode(dir.path(), 0o700)?;
                return Ok(dir);
            }
            Err(error) => last_error = Some(error),
        }
    }
    Err(last_error.unwrap_or_else(|| io::Error::other("no directory for the socket")))
}

fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

async fn accept_unix(listener: tokio::net::UnixListener, shared: Arc<Shared>) {
    loop {
        let accepted = tokio::select! {
            () = shared.cancel.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                let (reader, writer) = stream.into_split();
                admit(reader, writer, &shared);
            }
            Err(error) => accept_failed(&error).await,
        }
    }
}

async fn accept_tcp(listener: tokio::net::TcpListener, shared: Arc<Shared>) {
    loop {
        let accepted = tokio::select! {
            () = shared.cancel.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                let (reader, writer) = stream.into_split();
                admit(reader, writer, &shared);
            }
            Err(error) => accept_failed(&error).await,
        }
    }
}

/// Running out of file descriptors must not spin the accept loop.
async fn accept_failed(_error: &io::Error) {
    tokio::time::sleep(Duration::from_millis(20)).await;
}

/// Serves a connection, or turns it away when the server is full.
fn admit<R, W>(reader: R, mut writer: W, shared: &Arc<Shared>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let shared = shared.clone();
    match shared.connections.clone().try_acquire_owned() {
        Ok(permit) => {
            shared.tracker.clone().spawn(async move {
                serve_connection(reader, writer, shared).await;
                drop(permit);
            });
        }
        Err(_) => {
            shared.tracker.clone().spawn(async move {
                let error = WireError::server(
                    "busy",
                    "the host has too many connections open; try again",
                    EXIT_UNAVAILABLE,
                );
                let body = protocol::encode(&Response::failure(0, error));
                let _ = protocol::write_frame_async(&mut writer, &body).await;
            });
        }
    }
}

async fn serve_connection<R, W>(mut reader: R, mut writer: W, shared: Arc<Shared>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // One writer per connection, fed by every call on it, so responses go
    // out whole and in the order they finish.
    let (frames, mut outbox) = mpsc::channel::<Vec<u8>>(shared.max_in_flight);
    let write_task = tokio::spawn(async move {
        while let Some(body) = outbox.recv().await {
            if protocol::write_frame_async(&mut writer, &body)
                .await
                .is_err()
            {
                break;
            }
        }
    });
    let in_flight = Arc::new(Semaphore::new(shared.max_in_flight));
    let mut authenticated = false;
    loop {
        let frame = tokio::select! {
            () = shared.cancel.cancelled() => break,
            frame = protocol::read_frame_async(&mut reader, shared.max_frame) => frame,
        };
        let body = match frame {
            Ok(Some(body)) => body,
            Ok(None) | Err(FrameError::Truncated | FrameError::Io(_)) => break,
            Err(error @ FrameError::TooLarge { .. }) => {
                let error = WireError::server("frame_too_large", error.to_string(), 2);
                let _ = frames
                    .send(protocol::encode(&Response::failure(0, error)))
                    .await;
                break;
            }
        };
        let request: Request = match rmp_serde::from_slice(&body) {
            Ok(request) => request,
            Err(error) => {
                let error = WireError::server(
                    "protocol",
                    format!("the request is not a gangway request: {error}"),
                    EXIT_UNAVAILABLE,
                );
                let _ = frames
                    .send(protocol::encode(&Response::failure(0, error)))
                    .await;
                break;
            }
        };
        if request.v != protocol::VERSION {
            let error = WireError::server(
                "protocol",
                format!(
                    "protocol version {} is not supported; this host speaks version {}",
                    request.v,
                    protocol::VERSION
                ),
                EXIT_UNAVAILABLE,
            );
            let _ = frames
                .send(protocol::encode(&Response::failure(request.id, error)))
                .await;
            break;
        }
        if !authenticated {
            let given = request.token.as_deref().unwrap_or("").as_bytes();
            if !bool::from(given.ct_eq(shared.token.as_bytes())) {
                let error = WireError::server(
                    "auth",
                    "the token is missing or wrong; check GANGWAY_TOKEN",
                    EXIT_UNAVAILABLE,
                );
                let _ = frames
                    .send(protocol::encode(&Response::failure(request.id, error)))
                    .await;
                break;
            }
            authenticated = true;
        }
        let Ok(permit) = in_flight.clone().acquire_owned().await else {
            break;
        };
        let shared = shared.clone();
        let frames = frames.clone();
        shared.tracker.clone().spawn(async move {
            shared.calls_running.fetch_add(1, Ordering::SeqCst);
            let response = answer(&shared, request).await;
            shared.calls_running.fetch_sub(1, Ordering::SeqCst);
            let _ = frames.send(protocol::encode(&response)).await;
            drop(permit);
        });
    }
    drop(frames);
    let _ = write_task.await;
}

/// Runs one call, within the call timeout.
async fn answer(shared: &Shared, request: Request) -> Response {
    let id = request.id;
    let call = async {
        match request.argv {
            Some(argv) => shared
                .router
                .dispatch_argv(&request.method, &argv, request.stdin.map(ByteBuf::into_vec))
                .await
                .map(|outcome| match outcome {
                    ArgvOutcome::Response(bytes) => (Some(bytes), None),
                    ArgvOutcome::Help(text) => (None, Some(text)),
                }),
            None => {
                let params = request.params.map(ByteBuf::into_vec).unwrap_or_default();
                shared
                    .router
                    .dispatch(&request.method, &params)
                    .await
                    .map(|bytes| (Some(bytes), None))
            }
        }
    };
    let outcome = match shared.call_timeout {
        Some(limit) => match tokio::time::timeout(limit, call).await {
            Ok(outcome) => outcome,
            Err(_) => {
                let error = WireError::server(
                    "timeout",
                    format!(
                        "{}: the call did not finish within {limit:?}",
                        request.method
                    ),
                    1,
                );
                return Response::failure(id, error);
            }
        },
        None => call.await,
    };
    match outcome {
        Ok((result, help)) => Response {
            id,
            ok: true,
            result: result.map(ByteBuf::from),
            help,
            error: None,
        },
        Err(error) => Response::failure(id, wire_error(error)),
    }
}

/// A command's error as it travels.
fn wire_error(error: IpcError) -> WireError {
    let mut wire = WireError::server(error.kind(), error.to_string(), error.exit_code());
    match error {
        IpcError::Usage { error, .. } => {
            wire.argument = error.argument_name().map(str::to_owned);
            wire.suggestion = error.suggestion().map(str::to_owned);
        }
        IpcError::UnknownMethod { suggestion, .. } => wire.suggestion = suggestion,
        IpcError::Handler { data, .. } => wire.data = Some(ByteBuf::from(data)),
        _ => {}
    }
    wire
}
