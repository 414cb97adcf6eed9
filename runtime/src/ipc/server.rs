//! The IPC server: an [`IpcRouter`] served on a Unix socket in a private
//! directory (or on TCP loopback for containers and VMs), every connection
//! authenticated by a random token before anything larger than a few KiB is
//! read, every stage bounded in time and memory.

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
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::argv::ArgvPlan;
use super::env::{SandboxEnv, locate_client_bin};
use super::protocol::{
    self, EXIT_UNAVAILABLE, FrameError, Hello, Request, Response, Welcome, WireError,
};
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

/// The shortest token accepted: a token is the only credential.
const MIN_TOKEN_LEN: usize = 16;
/// The longest token accepted: the hello carrying it must stay small.
const MAX_TOKEN_LEN: usize = 1024;
/// How long a connection turned away as busy is given to read why.
const BUSY_GRACE: Duration = Duration::from_secs(1);
/// The most calls one connection may have in flight.
const MAX_IN_FLIGHT: usize = 65_536;

/// Options for an [`IpcServer`]; start it with
/// [`start`](IpcServerBuilder::start).
#[derive(Clone)]
#[must_use]
pub struct IpcServerBuilder {
    max_frame: usize,
    max_connections: usize,
    max_in_flight: usize,
    max_queued_bytes: usize,
    call_timeout: Option<Duration>,
    hello_timeout: Duration,
    io_timeout: Duration,
    tcp: Option<SocketAddr>,
    allow_non_loopback: bool,
    socket_parent: Option<PathBuf>,
    token: Option<String>,
    client_bin: Option<PathBuf>,
    wrapper_dir: Option<PathBuf>,
}

impl fmt::Debug for IpcServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IpcServerBuilder")
            .field("max_frame", &self.max_frame)
            .field("max_connections", &self.max_connections)
            .field("max_in_flight", &self.max_in_flight)
            .field("call_timeout", &self.call_timeout)
            .field("tcp", &self.tcp)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

impl Default for IpcServerBuilder {
    fn default() -> Self {
        IpcServerBuilder {
            max_frame: protocol::DEFAULT_MAX_FRAME,
            max_connections: 256,
            max_in_flight: 32,
            max_queued_bytes: 64 * 1024 * 1024,
            call_timeout: Some(Duration::from_secs(300)),
            hello_timeout: Duration::from_secs(5),
            io_timeout: Duration::from_secs(30),
            tcp: None,
            allow_non_loopback: false,
            socket_parent: None,
            token: None,
            client_bin: None,
            wrapper_dir: None,
        }
    }
}

impl IpcServerBuilder {
    /// The largest frame read or written, in bytes (16 MiB by default). A
    /// larger request is answered with `frame_too_large`, a larger response
    /// with `response_too_large`.
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes.max(protocol::MAX_HELLO_FRAME);
        self
    }

    /// How many connections may be open at once (256 by default); one more
    /// is answered with a `busy` error and closed.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections.clamp(1, Semaphore::MAX_PERMITS);
        self
    }

    /// How many calls one connection may have running or waiting to be
    /// written at once (32 by default); past that, the server stops reading
    /// that connection until one is written (at most 65,536).
    pub fn max_in_flight(mut self, calls: usize) -> Self {
        self.max_in_flight = calls.clamp(1, MAX_IN_FLIGHT);
        self
    }

    /// How many bytes of encoded responses one connection may have queued
    /// for writing (64 MiB by default; at most 4 GiB), for a client slow to
    /// read. Calls finished beyond that wait, each holding its own encoded
    /// response and its in-flight slot, so a connection that stops reading
    /// holds at most this plus `max_in_flight` responses until the I/O
    /// timeout ends it.
    pub fn max_queued_bytes(mut self, bytes: usize) -> Self {
        self.max_queued_bytes = bytes.clamp(1, u32::MAX as usize);
        self
    }

    /// How long one call may run (5 minutes by default; `None` for no
    /// limit). A call over it is answered with a `timeout` error.
    pub fn call_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// How long a new connection has to present its token (5 seconds by
    /// default); a connection that does not is closed.
    pub fn hello_timeout(mut self, timeout: Duration) -> Self {
        self.hello_timeout = timeout;
        self
    }

    /// How long the rest of a frame may take once it has begun, and how long
    /// writing one response may take (30 seconds by default): a peer that
    /// stalls mid-frame, or stops reading, loses its connection.
    pub fn io_timeout(mut self, timeout: Duration) -> Self {
        self.io_timeout = timeout;
        self
    }

    /// Listen on TCP instead of a Unix socket, for containers and VMs that
    /// cannot share a file system with the host. The address must be a
    /// loopback one unless [`allow_non_loopback`](IpcServerBuilder::allow_non_loopback)
    /// says otherwise; the token is required all the same.
    pub fn tcp(mut self, addr: SocketAddr) -> Self {
        self.tcp = Some(addr);
        self
    }

    /// Let [`tcp`](IpcServerBuilder::tcp) listen beyond this machine (a VM
    /// bridge, say). Anyone who can reach the port and has the token can
    /// call the commands.
    pub fn allow_non_loopback(mut self, allow: bool) -> Self {
        self.allow_non_loopback = allow;
        self
    }

    /// Where the private socket directory is created (default:
    /// `$XDG_RUNTIME_DIR`, else the system's temporary directory).
    pub fn socket_parent(mut self, dir: impl Into<PathBuf>) -> Self {
        self.socket_parent = Some(dir.into());
        self
    }

    /// Use this token instead of a fresh random one (16 to 1024 bytes).
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

    /// The directory of generated wrapper scripts, which [`SandboxEnv`]
    /// puts first on a child's `PATH`.
    pub fn wrapper_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.wrapper_dir = Some(dir.into());
        self
    }

    /// Starts serving `router`.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a token under 16 or over 1024 bytes, a non-loopback TCP
    /// address not allowed, a wrapper directory whose path holds `:`, or a
    /// socket parent that cannot hold the socket; otherwise the error of
    /// creating the directory, binding, or reading random bytes.
    pub async fn start(self, router: IpcRouter) -> io::Result<IpcServer> {
        let invalid = |message: String| io::Error::new(io::ErrorKind::InvalidInput, message);
        let token = match self.token {
            Some(token) if !(MIN_TOKEN_LEN..=MAX_TOKEN_LEN).contains(&token.len()) => {
                return Err(invalid(format!(
                    "a token must be {MIN_TOKEN_LEN} to {MAX_TOKEN_LEN} bytes, not {}; leave it out for a fresh random one",
                    token.len()
                )));
            }
            Some(token) => token,
            None => fresh_token()?,
        };
        if let Some(addr) = self.tcp
            && !addr.ip().is_loopback()
            && !self.allow_non_loopback
        {
            return Err(invalid(format!(
                "{addr} is not a loopback address; anyone who reaches it could try the token. Use \
                 127.0.0.1, or `allow_non_loopback(true)` if that is what you mean"
            )));
        }
        if let Some(dir) = &self.wrapper_dir
            && dir.to_string_lossy().contains(':')
        {
            return Err(invalid(format!(
                "the wrapper directory {} holds `:`, which a PATH entry cannot",
                dir.display()
            )));
        }
        let soft = CancellationToken::new();
        let shared = Arc::new(Shared {
            router,
            token: token.clone(),
            max_frame: self.max_frame,
            max_in_flight: self.max_in_flight,
            max_queued_bytes: self.max_queued_bytes,
            call_timeout: self.call_timeout,
            hello_timeout: self.hello_timeout,
            io_timeout: self.io_timeout,
            connections: Arc::new(Semaphore::new(self.max_connections)),
            soft: soft.clone(),
            hard: CancellationToken::new(),
            tracker: TaskTracker::new(),
            calls_running: Arc::new(AtomicUsize::new(0)),
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
///     let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
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
    /// Calls still running (or unwritten) at the deadline, cancelled.
    pub abandoned_calls: usize,
}

struct Shared {
    router: IpcRouter,
    token: String,
    max_frame: usize,
    max_in_flight: usize,
    max_queued_bytes: usize,
    call_timeout: Option<Duration>,
    hello_timeout: Duration,
    io_timeout: Duration,
    connections: Arc<Semaphore>,
    /// Stop accepting and reading new requests; calls in flight go on.
    soft: CancellationToken,
    /// Stop everything now: calls, writers, connections.
    hard: CancellationToken,
    tracker: TaskTracker,
    /// Calls whose response has not been written yet.
    calls_running: Arc<AtomicUsize>,
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

    /// Stops accepting and reading requests, lets calls in flight finish and
    /// their responses go out until `deadline`, then cancels whatever is
    /// left and removes the socket and its directory.
    pub async fn shutdown(mut self, deadline: Duration) -> ShutdownReport {
        self.shared.soft.cancel();
        if let Some(accept) = self.accept.take() {
            let _ = accept.await;
        }
        self.shared.tracker.close();
        let finished = tokio::time::timeout(deadline, self.shared.tracker.wait())
            .await
            .is_ok();
        let abandoned_calls = if finished {
            0
        } else {
            self.shared.calls_running.load(Ordering::SeqCst)
        };
        self.shared.hard.cancel();
        // Cancelled tasks end at their next await; give them a moment to.
        let _ = tokio::time::timeout(Duration::from_secs(1), self.shared.tracker.wait()).await;
        if let Some(dir) = self.socket_dir.take() {
            let _ = dir.close();
        }
        ShutdownReport { abandoned_calls }
    }
}

impl Drop for IpcServer {
    fn drop(&mut self) {
        self.shared.soft.cancel();
        self.shared.hard.cancel();
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

/// A fresh directory only this user can enter, created with mode 0700 in
/// one step, with a path short enough that its socket fits in
/// `sockaddr_un` (108 bytes).
fn private_dir(parent: Option<&Path>) -> io::Result<tempfile::TempDir> {
    let too_long = |base: &Path| base.as_os_str().len() + "/gangway-XXXXXX/s".len() >= 100;
    let create = |base: &Path| {
        tempfile::Builder::new()
            .prefix("gangway-")
            .rand_bytes(6)
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(base)
    };
    use std::os::unix::fs::PermissionsExt;
    if let Some(parent) = parent {
        if too_long(parent) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is too long a path for a Unix socket (a socket path must stay under 108 bytes)",
                    parent.display()
                ),
            ));
        }
        return create(parent).map_err(|error| {
            io::Error::new(
                error.kind(),
                format!(
                    "cannot create the socket directory in {}: {error}",
                    parent.display()
                ),
            )
        });
    }
    let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
    let candidates = runtime_dir
        .filter(|d| d.is_dir())
        .into_iter()
        .chain([std::env::temp_dir(), PathBuf::from("/tmp")]);
    let mut last_error = None;
    for base in candidates.filter(|base| !too_long(base)) {
        match create(&base) {
            Ok(dir) => return Ok(dir),
            Err(error) => last_error = Some(error),
        }
    }
    Err(last_error.unwrap_or_else(|| io::Error::other("no directory can hold the socket")))
}

fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

async fn accept_unix(listener: tokio::net::UnixListener, shared: Arc<Shared>) {
    loop {
        let accepted = tokio::select! {
            () = shared.soft.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                let (reader, writer) = stream.into_split();
                admit(reader, writer, &shared);
            }
            Err(_) => accept_failed().await,
        }
    }
}

async fn accept_tcp(listener: tokio::net::TcpListener, shared: Arc<Shared>) {
    loop {
        let accepted = tokio::select! {
            () = shared.soft.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                let (reader, writer) = stream.into_split();
                admit(reader, writer, &shared);
            }
            Err(_) => accept_failed().await,
        }
    }
}

/// Running out of file descriptors must not spin the accept loop.
async fn accept_failed() {
    tokio::time::sleep(Duration::from_millis(20)).await;
}

/// Serves a connection, or turns it away when the server is full.
fn admit<R, W>(mut reader: R, mut writer: W, shared: &Arc<Shared>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let shared = shared.clone();
    let tracker = shared.tracker.clone();
    match shared.connections.clone().try_acquire_owned() {
        Ok(permit) => {
            tracker.spawn(async move {
                let hard = shared.hard.clone();
                tokio::select! {
                    () = hard.cancelled() => {}
                    () = serve_connection(reader, writer, &shared) => {}
                }
                drop(permit);
            });
        }
        Err(_) => {
            tracker.spawn(async move {
                let error = WireError::server(
                    "busy",
                    "the host has too many connections open; try again",
                    EXIT_UNAVAILABLE,
                );
                let body = protocol::encode(&Response::failure(0, error));
                // A second at most: say why, end our side, and take in the
                // hello so closing does not reset the connection (over TCP
                // a reset can destroy the answer before it is read).
                let _ = tokio::time::timeout(BUSY_GRACE, async {
                    protocol::write_frame_async(&mut writer, &body).await?;
                    writer.shutdown().await?;
                    let mut sink = [0u8; 1024];
                    let mut taken = 0;
                    while taken < protocol::MAX_HELLO_FRAME {
                        match reader.read(&mut sink).await? {
                            0 => break,
                            n => taken += n,
                        }
                    }
                    Ok::<_, io::Error>(())
                })
                .await;
            });
        }
    }
}

/// Sends one error frame and gives up on the connection.
async fn refuse<W: AsyncWrite + Unpin>(
    writer: &mut W,
    timeout: Duration,
    id: u64,
    error: WireError,
) {
    let body = protocol::encode(&Response::failure(id, error));
    let _ = tokio::time::timeout(timeout, protocol::write_frame_async(writer, &body)).await;
}

/// The handshake: a small hello with the token, in time. Nothing larger is
/// read, and nothing is decoded past the hello, before the token checks out.
async fn greet<R, W>(reader: &mut R, writer: &mut W, shared: &Shared) -> bool
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let io = shared.io_timeout;
    let auth = |message: &str| WireError::server("auth", message, EXIT_UNAVAILABLE);
    let mismatch = |message: String| WireError::server("protocol", message, EXIT_UNAVAILABLE);
    let frame = tokio::time::timeout(
        shared.hello_timeout,
        protocol::read_frame_async(reader, protocol::MAX_HELLO_FRAME),
    )
    .await;
    let body = match frame {
        Ok(Ok(Some(body))) => body,
        Err(_) => {
            refuse(
                writer,
                io,
                0,
                auth("no hello with the token arrived in time"),
            )
            .await;
            return false;
        }
        Ok(Err(FrameError::TooLarge { .. })) => {
            let message = "the first frame must be a small hello carrying the token";
            refuse(writer, io, 0, auth(message)).await;
            return false;
        }
        Ok(Ok(None) | Err(_)) => return false,
    };
    let Ok(hello) = protocol::decode::<Hello>(&body) else {
        let message = "the first frame is not a gangway hello; is this client a different version?";
        refuse(writer, io, 0, mismatch(message.to_owned())).await;
        return false;
    };
    if hello.v != protocol::VERSION {
        let message = format!(
            "protocol version {} is not supported; this host speaks version {}",
            hello.v,
            protocol::VERSION
        );
        refuse(writer, io, 0, mismatch(message)).await;
        return false;
    }
    if !bool::from(hello.token.as_bytes().ct_eq(shared.token.as_bytes())) {
        refuse(
            writer,
            io,
            0,
            auth("the token is missing or wrong; check GANGWAY_TOKEN"),
        )
        .await;
        return false;
    }
    let welcome = Welcome {
        v: protocol::VERSION,
        max_frame: shared.max_frame as u64,
    };
    let body = protocol::encode(&welcome);
    matches!(
        tokio::time::timeout(io, protocol::write_frame_async(writer, &body)).await,
        Ok(Ok(()))
    )
}

/// A response on its way out, with what it holds until written: its bytes
/// of the queue budget, its call slot, and its place in the running count.
struct Outgoing {
    body: Vec<u8>,
    _held: Option<(OwnedSemaphorePermit, OwnedSemaphorePermit, RunningCall)>,
}

/// Counts a call as running until its response is written (or dropped).
struct RunningCall(Arc<AtomicUsize>);

impl RunningCall {
    fn start(counter: &Arc<AtomicUsize>) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        RunningCall(counter.clone())
    }
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn serve_connection<R, W>(mut reader: R, mut writer: W, shared: &Arc<Shared>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    if !greet(&mut reader, &mut writer, shared).await {
        return;
    }
    // A hello that finished as shutdown began gets no calls.
    if shared.soft.is_cancelled() {
        return;
    }
    // One writer per connection, fed by every call on it, so responses go
    // out whole.
    let connection = shared.hard.child_token();
    let (outbox, outgoing) = mpsc::channel::<Outgoing>(shared.max_in_flight);
    let write_task = shared.tracker.spawn(write_answers(
        writer,
        outgoing,
        connection.clone(),
        shared.io_timeout,
    ));
    let (requests, mut incoming) = mpsc::channel::<Request>(1);
    shared.tracker.spawn(read_requests(
        reader,
        requests,
        outbox.clone(),
        shared.clone(),
        connection.clone(),
    ));
    let slots = Arc::new(Semaphore::new(shared.max_in_flight));
    let bytes = Arc::new(Semaphore::new(shared.max_queued_bytes));
    loop {
        let request = tokio::select! {
            biased;
            () = shared.soft.cancelled() => break,
            () = connection.cancelled() => break,
            request = incoming.recv() => request,
        };
        // The reader is done: the peer left, or was refused.
        let Some(request) = request else { break };
        let slot = tokio::select! {
            biased;
            () = shared.soft.cancelled() => break,
            () = connection.cancelled() => break,
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
        };
        shared.tracker.spawn(run_call(
            shared.clone(),
            request,
            slot,
            bytes.clone(),
            outbox.clone(),
            connection.clone(),
        ));
    }
    drop(outbox);
    let _ = write_task.await;
}

/// Reads a connection's requests and hands them on, one at a time. While
/// the calls are at their in-flight limit it reads one request ahead and
/// then only watches for the peer hanging up, which cancels the calls: so a
/// peer that leaves is noticed unless it left two or more requests unread,
/// and then when the first answer fails to reach it.
async fn read_requests<R>(
    mut reader: R,
    requests: mpsc::Sender<Request>,
    outbox: mpsc::Sender<Outgoing>,
    shared: Arc<Shared>,
    connection: CancellationToken,
) where
    R: AsyncRead + Unpin,
{
    // The first byte of the next frame, when it came while waiting.
    let mut early = None;
    loop {
        let next = tokio::select! {
            biased;
            () = shared.soft.cancelled() => return,
            () = connection.cancelled() => return,
            next = next_request(&mut reader, early.take(), &outbox, &shared) => next,
        };
        let request = match next {
            Next::Request(request) => request,
            // Whoever would read the answers is gone: stop their calls.
            Next::Closed => {
                connection.cancel();
                return;
            }
            // The refusal is queued; the writer sends it, then ends.
            Next::Refused => return,
        };
        let room = loop {
            let mut byte = [0u8; 1];
            tokio::select! {
                biased;
                () = shared.soft.cancelled() => return,
                () = connection.cancelled() => return,
                room = requests.reserve() => match room {
                    Ok(room) => break room,
                    Err(_) => return,
                },
                read = reader.read(&mut byte), if early.is_none() => match read {
                    Ok(1) => early = Some(byte[0]),
                    _ => {
                        connection.cancel();
                        return;
                    }
                },
            }
        };
        room.send(request);
    }
}

/// Runs one call and queues its answer, holding its slot until written.
async fn run_call(
    shared: Arc<Shared>,
    request: Request,
    slot: OwnedSemaphorePermit,
    bytes: Arc<Semaphore>,
    outbox: mpsc::Sender<Outgoing>,
    stop: CancellationToken,
) {
    let running = RunningCall::start(&shared.calls_running);
    let response = tokio::select! {
        biased;
        () = stop.cancelled() => return,
        response = answer(&shared, request) => response,
    };
    let id = response.id;
    let mut body = protocol::encode(&response);
    // Only the encoded answer waits for room in the queue.
    drop(response);
    if body.len() > shared.max_frame {
        let error = WireError::server(
            "response_too_large",
            format!(
                "the response is {} bytes, over the {}-byte frame limit",
                body.len(),
                shared.max_frame
            ),
            1,
        );
        body = protocol::encode(&Response::failure(id, error));
    }
    // `max_queued_bytes` fits in a u32 (the builder clamps it).
    let wanted = u32::try_from(body.len().clamp(1, shared.max_queued_bytes)).unwrap_or(u32::MAX);
    let queued = tokio::select! {
        biased;
        () = stop.cancelled() => return,
        permit = bytes.acquire_many_owned(wanted) => permit,
    };
    let Ok(queued) = queued else { return };
    let _ = outbox
        .send(Outgoing {
            body,
            _held: Some((queued, slot, running)),
        })
        .await;
}

/// Writes a connection's answers in turn. A peer that stops reading loses
/// the connection after the I/O timeout, which cancels its calls.
async fn write_answers<W>(
    mut writer: W,
    mut outgoing: mpsc::Receiver<Outgoing>,
    stop: CancellationToken,
    io: Duration,
) where
    W: AsyncWrite + Unpin,
{
    loop {
        let frame = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            frame = outgoing.recv() => frame,
        };
        // Every sender gone: all answers are out.
        let Some(frame) = frame else { return };
        let written = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            written = tokio::time::timeout(io, protocol::write_frame_async(&mut writer, &frame.body)) => written,
        };
        if !matches!(written, Ok(Ok(()))) {
            stop.cancel();
            return;
        }
    }
}

/// What came in on a connection.
enum Next {
    Request(Request),
    /// The peer closed the connection (or its sending half), or it broke.
    Closed,
    /// The peer sent something unacceptable; an error for it is queued.
    Refused,
}

/// Reads the next request, whose first byte may have come already.
async fn next_request<R>(
    reader: &mut R,
    early: Option<u8>,
    outbox: &mpsc::Sender<Outgoing>,
    shared: &Shared,
) -> Next
where
    R: AsyncRead + Unpin,
{
    // An authenticated client may stay idle between requests; once a frame
    // begins, the rest of it must come in time.
    let mut head = [0u8; 4];
    match early {
        Some(byte) => head[0] = byte,
        None => {
            if !matches!(reader.read(&mut head[..1]).await, Ok(1)) {
                return Next::Closed;
            }
        }
    }
    let body = tokio::time::timeout(shared.io_timeout, async {
        reader
            .read_exact(&mut head[1..])
            .await
            .map_err(FrameError::Io)?;
        protocol::read_body_async(reader, head, shared.max_frame).await
    })
    .await;
    let error = match body {
        Ok(Ok(body)) => match protocol::decode::<Request>(&body) {
            Ok(request) if request.id != 0 => return Next::Request(request),
            Ok(_) => WireError::server("protocol", "request ids start at 1", EXIT_UNAVAILABLE),
            Err(error) => WireError::server(
                "protocol",
                format!("the request is not a gangway request: {error}"),
                EXIT_UNAVAILABLE,
            ),
        },
        Ok(Err(too_large @ FrameError::TooLarge { len, .. })) => {
            // Tell the peer, then take in (and drop) what it is still
            // sending, so it finishes writing and reads the answer instead
            // of meeting a closed socket.
            send_now(
                outbox,
                WireError::server("frame_too_large", too_large.to_string(), 2),
            )
            .await;
            let _ = tokio::time::timeout(
                shared.io_timeout,
                tokio::io::copy(&mut (&mut *reader).take(len as u64), &mut tokio::io::sink()),
            )
            .await;
            return Next::Refused;
        }
        Ok(Err(_)) | Err(_) => return Next::Closed,
    };
    send_now(outbox, error).await;
    Next::Refused
}

/// Queues an error for the peer, outside the per-call accounting.
async fn send_now(outbox: &mpsc::Sender<Outgoing>, error: WireError) {
    let body = protocol::encode(&Response::failure(0, error));
    let _ = outbox.send(Outgoing { body, _held: None }).await;
}

/// Runs one call, within the call timeout.
async fn answer(shared: &Shared, request: Request) -> Response {
    let id = request.id;
    let method = request.method;
    let call = async {
        match request.argv {
            Some(argv) if request.stdin.is_none() && request.stdin_ready => {
                // Read stdin only if the command will take it: help, a usage
                // error, or an explicit value means it will not.
                match shared.router.plan_argv(&method, &argv) {
                    Ok(ArgvPlan::NeedsStdin) => Ok(Reply::NeedsStdin),
                    Ok(ArgvPlan::Help(text)) => Ok(Reply::Help(text)),
                    Ok(_) => shared
                        .router
                        .dispatch_argv(&method, &argv, None)
                        .await
                        .map(Reply::from),
                    Err(error) => Err(error),
                }
            }
            Some(argv) => shared
                .router
                .dispatch_argv(&method, &argv, request.stdin.map(ByteBuf::into_vec))
                .await
                .map(Reply::from),
            None => {
                let params = request.params.map(ByteBuf::into_vec).unwrap_or_default();
                shared
                    .router
                    .dispatch(&method, &params)
                    .await
                    .map(Reply::Result)
            }
        }
    };
    let outcome = match shared.call_timeout {
        Some(limit) => match tokio::time::timeout(limit, call).await {
            Ok(outcome) => outcome,
            Err(_) => {
                let error = WireError::server(
                    "timeout",
                    format!("{method}: the call did not finish within {limit:?}"),
                    1,
                );
                return Response::failure(id, error);
            }
        },
        None => call.await,
    };
    let mut response = Response {
        id,
        ok: true,
        result: None,
        help: None,
        needs_stdin: false,
        error: None,
    };
    match outcome {
        Ok(Reply::Result(bytes)) => response.result = Some(ByteBuf::from(bytes)),
        Ok(Reply::Help(text)) => response.help = Some(text),
        Ok(Reply::NeedsStdin) => response.needs_stdin = true,
        Err(error) => return Response::failure(id, wire_error(error)),
    }
    response
}

/// What a successful call answers.
enum Reply {
    Result(Vec<u8>),
    Help(String),
    NeedsStdin,
}

impl From<ArgvOutcome> for Reply {
    fn from(outcome: ArgvOutcome) -> Self {
        match outcome {
            ArgvOutcome::Response(bytes) => Reply::Result(bytes),
            ArgvOutcome::Help(text) => Reply::Help(text),
        }
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
