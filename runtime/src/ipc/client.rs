//! Clients of an [`IpcServer`](super::IpcServer): [`IpcClient`], blocking,
//! std only (what the in-sandbox `gangway` binary uses, so it starts fast),
//! and [`AsyncIpcClient`] for tokio, with any number of calls in flight.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_bytes::ByteBuf;
use tokio::sync::{mpsc, oneshot};

use super::env::{ENV_ENDPOINT, ENV_TOKEN};
use super::protocol::{self, EXIT_UNAVAILABLE, Hello, Request, Response, Welcome, WireError};
use super::server::Endpoint;
use super::{ArgvOutcome, IpcCommand, Reply};

/// Exit code when standard input cannot be read (`EX_IOERR`).
const EXIT_IOERR: i32 = 74;

/// An error a call ended in, as the host reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteError {
    /// A stable name (`usage`, `handler`, `auth`, ...; see
    /// [`WireError::kind`]).
    pub kind: String,
    /// For a person.
    pub message: String,
    /// The exit code a command-line client should end with.
    pub exit: i32,
    /// The argument at fault, for a usage error.
    pub argument: Option<String>,
    /// The nearest valid spelling, for a usage error.
    pub suggestion: Option<String>,
    /// The handler's encoded error value.
    pub data: Option<Vec<u8>>,
}

/// Why a call did not produce a response.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// `GANGWAY_ENDPOINT` or `GANGWAY_TOKEN` is not set.
    MissingEnv {
        /// The variable.
        var: &'static str,
    },
    /// The endpoint text is not an endpoint.
    BadEndpoint(String),
    /// The host could not be reached.
    Connect {
        /// Where.
        endpoint: String,
        /// Why.
        source: io::Error,
    },
    /// The connection failed mid-call.
    Io(io::Error),
    /// The host's answer made no sense.
    Protocol(String),
    /// The host answered with an error.
    Remote(Box<RemoteError>),
    /// A request over the host's frame limit, refused before sending.
    TooLarge {
        /// The request's size.
        bytes: usize,
        /// The host's limit.
        max: usize,
    },
    /// Standard input could not be read.
    Stdin(io::Error),
    /// Piped standard input over what fits in one call.
    StdinTooLarge {
        /// The room there was, in bytes.
        max: usize,
    },
}

impl ClientError {
    /// The exit code a command-line client should end with: the host's for
    /// a remote error, 2 for a call too large to send, 74 (`EX_IOERR`) when
    /// standard input cannot be read, 69 (`EX_UNAVAILABLE`) when the host
    /// cannot be reached or the exchange broke.
    pub fn exit_code(&self) -> i32 {
        match self {
            ClientError::Remote(remote) => remote.exit,
            ClientError::TooLarge { .. } | ClientError::StdinTooLarge { .. } => 2,
            ClientError::Stdin(_) => EXIT_IOERR,
            _ => EXIT_UNAVAILABLE,
        }
    }

    /// The remote error, if the host answered with one.
    pub fn remote(&self) -> Option<&RemoteError> {
        match self {
            ClientError::Remote(remote) => Some(remote),
            _ => None,
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::MissingEnv { var } => write!(
                f,
                "{var} is not set: run this inside a sandbox the gangway host started, or set {ENV_ENDPOINT} and {ENV_TOKEN}"
            ),
            ClientError::BadEndpoint(message) => write!(f, "{ENV_ENDPOINT}: {message}"),
            ClientError::Connect { endpoint, source } => write!(
                f,
                "cannot reach the gangway host at {endpoint}: {source}; is the host running?"
            ),
            ClientError::Io(error) => {
                write!(f, "the connection to the gangway host failed: {error}")
            }
            ClientError::Protocol(message) => {
                write!(f, "the gangway host's answer made no sense: {message}")
            }
            ClientError::Remote(remote) => f.write_str(&remote.message),
            ClientError::TooLarge { bytes, max } => write!(
                f,
                "the call is {bytes} bytes, over the host's {max}-byte limit; pass large input as a file instead"
            ),
            ClientError::Stdin(error) => write!(f, "cannot read standard input: {error}"),
            ClientError::StdinTooLarge { max } => write!(
                f,
                "standard input is over the {max} bytes the host takes in one call; pass large input as a file instead"
            ),
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Connect { source, .. }
            | ClientError::Io(source)
            | ClientError::Stdin(source) => Some(source),
            _ => None,
        }
    }
}

impl From<WireError> for RemoteError {
    fn from(wire: WireError) -> Self {
        RemoteError {
            kind: wire.kind,
            message: wire.message,
            exit: wire.exit,
            argument: wire.argument,
            suggestion: wire.suggestion,
            data: wire.data.map(ByteBuf::into_vec),
        }
    }
}

/// The endpoint and token from `GANGWAY_ENDPOINT` and `GANGWAY_TOKEN`.
fn env_endpoint() -> Result<(Endpoint, String), ClientError> {
    let endpoint =
        std::env::var(ENV_ENDPOINT).map_err(|_| ClientError::MissingEnv { var: ENV_ENDPOINT })?;
    let token = std::env::var(ENV_TOKEN).map_err(|_| ClientError::MissingEnv { var: ENV_TOKEN })?;
    let endpoint = endpoint.parse().map_err(ClientError::BadEndpoint)?;
    Ok((endpoint, token))
}

fn request(method: &str) -> Request {
    Request {
        id: 0,
        method: method.to_owned(),
        params: None,
        argv: None,
        stdin: None,
        stdin_ready: false,
    }
}

fn hello(token: &str) -> Vec<u8> {
    protocol::encode(&Hello {
        v: protocol::VERSION,
        token: token.to_owned(),
    })
}

/// A frame read from the host, or why there is none: the connection ended
/// (closed), failed (I/O), or sent something over the limit (protocol).
fn frame(read: Result<Option<Vec<u8>>, protocol::FrameError>) -> Result<Vec<u8>, ClientError> {
    match read {
        Ok(Some(body)) => Ok(body),
        Ok(None) => Err(closed()),
        Err(protocol::FrameError::Io(error)) => Err(ClientError::Io(error)),
        Err(error) => Err(ClientError::Protocol(error.to_string())),
    }
}

/// The host's answer to the hello, read whether or not the hello could be
/// sent: a host turning a client away (busy) may answer and close before
/// the hello lands, and its answer is the one worth reporting.
fn hello_answer(
    read: Result<Option<Vec<u8>>, protocol::FrameError>,
    sent: io::Result<()>,
) -> Result<usize, ClientError> {
    let body = match (read, sent) {
        (Ok(Some(body)), _) => body,
        (_, Err(error)) => return Err(ClientError::Io(error)),
        (read, Ok(())) => frame(read)?,
    };
    welcome(&body)
}

/// The server's answer to the hello: its frame limit, or why it refused.
fn welcome(body: &[u8]) -> Result<usize, ClientError> {
    if let Ok(welcome) = protocol::decode::<Welcome>(body) {
        return Ok(usize::try_from(welcome.max_frame).unwrap_or(usize::MAX));
    }
    match protocol::decode::<Response>(body) {
        Ok(response) => Err(into_result(response).err().unwrap_or_else(|| {
            ClientError::Protocol("the host answered the hello with a success".to_owned())
        })),
        Err(error) => Err(ClientError::Protocol(format!(
            "the hello's answer does not decode: {error}"
        ))),
    }
}

/// A request body within the host's frame limit.
fn checked(request: &Request, max_frame: usize) -> Result<Vec<u8>, ClientError> {
    let body = protocol::encode(request);
    if body.len() > max_frame {
        return Err(ClientError::TooLarge {
            bytes: body.len(),
            max: max_frame,
        });
    }
    Ok(body)
}

/// A response's payload, or its error.
fn into_result(response: Response) -> Result<Response, ClientError> {
    if response.ok {
        return Ok(response);
    }
    let error = response.error.unwrap_or_else(|| {
        WireError::server(
            "protocol",
            "a failed response without an error",
            EXIT_UNAVAILABLE,
        )
    });
    Err(ClientError::Remote(Box::new(error.into())))
}

/// An argv call's answer; `None` when the host asks for standard input.
fn argv_outcome(response: Response) -> Result<Option<ArgvOutcome>, ClientError> {
    let response = into_result(response)?;
    if response.needs_stdin {
        return Ok(None);
    }
    match (response.help, response.result) {
        (Some(help), _) => Ok(Some(ArgvOutcome::Help(help))),
        (None, Some(result)) => Ok(Some(ArgvOutcome::Response(result.into_vec()))),
        (None, None) => Err(ClientError::Protocol(
            "a response with neither result nor help".to_owned(),
        )),
    }
}

fn argv_request<S: AsRef<str>>(
    method: &str,
    argv: &[S],
    stdin: Option<Vec<u8>>,
    stdin_ready: bool,
) -> Request {
    let mut request = request(method);
    request.argv = Some(argv.iter().map(|a| a.as_ref().to_owned()).collect());
    request.stdin = stdin.map(ByteBuf::from);
    request.stdin_ready = stdin_ready;
    request
}

fn typed_request<C: IpcCommand>(command: &C) -> Result<Request, ClientError> {
    let params = rmp_serde::to_vec_named(command)
        .map_err(|error| ClientError::Protocol(format!("the command does not encode: {error}")))?;
    let mut request = request(&command.name());
    request.params = Some(ByteBuf::from(params));
    Ok(request)
}

/// A typed command's response from the host's answer: a success payload, or
/// a handler failure whose data rebuilds the command's own error value.
fn typed<C: IpcCommand>(answer: Result<Response, ClientError>) -> Result<C::Response, ClientError> {
    let reply = match answer {
        Ok(response) => Reply::Success(response.result.map(ByteBuf::into_vec).unwrap_or_default()),
        Err(ClientError::Remote(remote)) if remote.kind == "handler" && remote.data.is_some() => {
            Reply::Failure {
                message: remote.message,
                data: remote.data.unwrap_or_default(),
            }
        }
        Err(error) => return Err(error),
    };
    C::decode_reply(&reply)
        .map_err(|error| ClientError::Protocol(format!("the response does not decode: {error}")))
}

enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(stream) => stream.read(buf),
            Stream::Tcp(stream) => stream.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(stream) => stream.write(buf),
            Stream::Tcp(stream) => stream.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Unix(stream) => stream.flush(),
            Stream::Tcp(stream) => stream.flush(),
        }
    }
}

/// A blocking client: one call at a time on one connection.
///
/// ```no_run
/// use gangway::ipc::IpcClient;
///
/// // Inside a sandbox started by the host, the environment says where it is.
/// let mut client = IpcClient::from_env()?;
/// let reply = client.call_argv("web_search", &["rust", "-n", "5"], None)?;
/// # Ok::<(), gangway::ipc::ClientError>(())
/// ```
pub struct IpcClient {
    stream: Stream,
    next_id: u64,
    max_frame: usize,
    /// Set after a failed exchange: the stream may hold half a frame.
    broken: bool,
}

impl fmt::Debug for IpcClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IpcClient")
            .field("next_id", &self.next_id)
            .field("max_frame", &self.max_frame)
            .finish_non_exhaustive()
    }
}

impl IpcClient {
    /// Connects to `endpoint` (`unix:/path` or `tcp:host:port`) and presents
    /// the token.
    ///
    /// # Errors
    ///
    /// [`ClientError::BadEndpoint`], [`ClientError::Connect`], or the host's
    /// refusal (an `auth` [`ClientError::Remote`] for a wrong token).
    pub fn connect(endpoint: &str, token: &str) -> Result<IpcClient, ClientError> {
        let endpoint: Endpoint = endpoint.parse().map_err(ClientError::BadEndpoint)?;
        IpcClient::connect_to(&endpoint, token)
    }

    /// Connects to a parsed endpoint and presents the token.
    ///
    /// # Errors
    ///
    /// As [`connect`](IpcClient::connect).
    pub fn connect_to(endpoint: &Endpoint, token: &str) -> Result<IpcClient, ClientError> {
        let failed = |source| ClientError::Connect {
            endpoint: endpoint.to_string(),
            source,
        };
        let mut stream = match endpoint {
            Endpoint::Unix(path) => Stream::Unix(UnixStream::connect(path).map_err(failed)?),
            Endpoint::Tcp(addr) => {
                let stream = TcpStream::connect(addr).map_err(failed)?;
                let _ = stream.set_nodelay(true);
                Stream::Tcp(stream)
            }
        };
        let sent = protocol::write_frame(&mut stream, &hello(token));
        let read = protocol::read_frame(&mut stream, protocol::MAX_HELLO_FRAME);
        let max_frame = hello_answer(read, sent)?;
        Ok(IpcClient {
            stream,
            next_id: 1,
            max_frame,
            broken: false,
        })
    }

    /// Connects to the host named by `GANGWAY_ENDPOINT`, with
    /// `GANGWAY_TOKEN`.
    ///
    /// # Errors
    ///
    /// [`ClientError::MissingEnv`], then as [`connect`](IpcClient::connect).
    pub fn from_env() -> Result<IpcClient, ClientError> {
        let (endpoint, token) = env_endpoint()?;
        IpcClient::connect_to(&endpoint, &token)
    }

    /// The largest frame the host takes (from its welcome).
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// Limits how long a call may wait for its answer (none by default). A
    /// call that times out leaves the client unusable: connect again.
    ///
    /// # Errors
    ///
    /// The socket's error.
    pub fn set_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        match &self.stream {
            Stream::Unix(stream) => stream.set_read_timeout(timeout),
            Stream::Tcp(stream) => stream.set_read_timeout(timeout),
        }
    }

    fn exchange(&mut self, mut request: Request) -> Result<Response, ClientError> {
        if self.broken {
            return Err(ClientError::Protocol(
                "an earlier call on this connection failed midway; connect again".to_owned(),
            ));
        }
        let id = self.next_id;
        self.next_id += 1;
        request.id = id;
        let body = checked(&request, self.max_frame)?;
        // Until the answer is read whole, a failure leaves the stream out of
        // step with the calls.
        self.broken = true;
        protocol::write_frame(&mut self.stream, &body).map_err(ClientError::Io)?;
        let body = frame(protocol::read_frame(&mut self.stream, self.max_frame))?;
        let response: Response =
            protocol::decode(&body).map_err(|error| ClientError::Protocol(error.to_string()))?;
        match response.id {
            current if current == id => {
                self.broken = false;
                into_result(response)
            }
            // The host speaks for the connection as a whole.
            0 => into_result(response).and(Err(closed())),
            other => Err(ClientError::Protocol(format!(
                "an answer to call {other} arrived for call {id}"
            ))),
        }
    }

    /// Calls `method` with MessagePack-encoded `params`; returns the
    /// MessagePack-encoded response.
    ///
    /// # Errors
    ///
    /// [`ClientError::Remote`] for the host's errors; connection errors.
    pub fn call_raw(&mut self, method: &str, params: &[u8]) -> Result<Vec<u8>, ClientError> {
        let mut request = request(method);
        request.params = Some(ByteBuf::from(params.to_vec()));
        let response = self.exchange(request)?;
        Ok(response.result.map(ByteBuf::into_vec).unwrap_or_default())
    }

    /// Calls a command with itself as the arguments, and decodes its
    /// response. A handler's `Err` comes back as an `Ok(Err(..))` response.
    ///
    /// # Errors
    ///
    /// As [`call_raw`](IpcClient::call_raw), and [`ClientError::Protocol`]
    /// when the response does not decode as `C::Response`.
    pub fn call<C: IpcCommand>(&mut self, command: &C) -> Result<C::Response, ClientError> {
        let request = typed_request(command)?;
        typed::<C>(self.exchange(request))
    }

    /// Calls `method` with shell words and, if given, piped standard input.
    ///
    /// # Errors
    ///
    /// [`ClientError::Remote`] (a usage error has exit code 2); connection
    /// errors.
    pub fn call_argv<S: AsRef<str>>(
        &mut self,
        method: &str,
        argv: &[S],
        stdin: Option<Vec<u8>>,
    ) -> Result<ArgvOutcome, ClientError> {
        let response = self.exchange(argv_request(method, argv, stdin, false))?;
        argv_outcome(response)?
            .ok_or_else(|| ClientError::Protocol("the host asked for stdin unprompted".to_owned()))
    }

    /// Calls `method` with shell words when standard input is piped but not
    /// yet read: the host answers help, a usage error, or a call that does
    /// not take stdin without it being read; only when the command takes it
    /// is `read_stdin` called and the call sent again with the bytes. This
    /// is what `gangway call` does, so a pipe that never closes only blocks
    /// a command that reads it. `read_stdin` gets the room left in the
    /// frame; it may stop reading one byte past it, which is then refused
    /// as [`ClientError::StdinTooLarge`].
    ///
    /// # Errors
    ///
    /// As [`call_argv`](IpcClient::call_argv), and `read_stdin`'s error.
    pub fn call_argv_piped<S: AsRef<str>>(
        &mut self,
        method: &str,
        argv: &[S],
        read_stdin: impl FnOnce(usize) -> Result<Vec<u8>, ClientError>,
    ) -> Result<ArgvOutcome, ClientError> {
        let response = self.exchange(argv_request(method, argv, None, true))?;
        if let Some(outcome) = argv_outcome(response)? {
            return Ok(outcome);
        }
        // Room for the request around the bytes.
        let room = self
            .max_frame
            .saturating_sub(argv.iter().map(|a| a.as_ref().len() + 8).sum::<usize>() + 1024);
        let stdin = read_stdin(room)?;
        if stdin.len() > room {
            return Err(ClientError::StdinTooLarge { max: room });
        }
        self.call_argv(method, argv, Some(stdin))
    }
}

type Pending = HashMap<u64, oneshot::Sender<Result<Response, ClientError>>>;

/// An async client on one connection, with any number of calls in flight;
/// answers are matched to calls by id. Cloning shares the connection. A
/// call given up on (its future dropped) leaves the connection usable:
/// frames go out whole from a writer task, and the late answer is dropped.
#[derive(Clone)]
pub struct AsyncIpcClient {
    inner: Arc<AsyncInner>,
}

struct AsyncInner {
    outbox: mpsc::Sender<Vec<u8>>,
    pending: Arc<Mutex<Option<Pending>>>,
    next_id: AtomicU64,
    max_frame: usize,
    tasks: [tokio::task::AbortHandle; 2],
}

impl Drop for AsyncInner {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl fmt::Debug for AsyncIpcClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncIpcClient")
            .field("max_frame", &self.inner.max_frame)
            .finish_non_exhaustive()
    }
}

/// Removes a call's waiter when the call is given up on.
struct PendingGuard<'a> {
    id: u64,
    pending: &'a Mutex<Option<Pending>>,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if let Some(pending) = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            pending.remove(&self.id);
        }
    }
}

impl AsyncIpcClient {
    /// Connects to `endpoint` (`unix:/path` or `tcp:host:port`) and presents
    /// the token.
    ///
    /// # Errors
    ///
    /// As [`IpcClient::connect`].
    pub async fn connect(endpoint: &str, token: &str) -> Result<AsyncIpcClient, ClientError> {
        let endpoint: Endpoint = endpoint.parse().map_err(ClientError::BadEndpoint)?;
        AsyncIpcClient::connect_to(&endpoint, token).await
    }

    /// Connects to the host named by `GANGWAY_ENDPOINT`, with
    /// `GANGWAY_TOKEN`.
    ///
    /// # Errors
    ///
    /// [`ClientError::MissingEnv`], then as [`connect`](AsyncIpcClient::connect).
    pub async fn from_env() -> Result<AsyncIpcClient, ClientError> {
        let (endpoint, token) = env_endpoint()?;
        AsyncIpcClient::connect_to(&endpoint, &token).await
    }

    /// Connects to a parsed endpoint and presents the token.
    ///
    /// # Errors
    ///
    /// As [`IpcClient::connect`].
    pub async fn connect_to(
        endpoint: &Endpoint,
        token: &str,
    ) -> Result<AsyncIpcClient, ClientError> {
        let failed = |source| ClientError::Connect {
            endpoint: endpoint.to_string(),
            source,
        };
        type Reader = Box<dyn tokio::io::AsyncRead + Unpin + Send>;
        type Writer = Box<dyn tokio::io::AsyncWrite + Unpin + Send>;
        let (mut reader, mut writer): (Reader, Writer) = match endpoint {
            Endpoint::Unix(path) => {
                let (read, write) = tokio::net::UnixStream::connect(path)
                    .await
                    .map_err(failed)?
                    .into_split();
                (Box::new(read), Box::new(write))
            }
            Endpoint::Tcp(addr) => {
                let stream = tokio::net::TcpStream::connect(addr).await.map_err(failed)?;
                let _ = stream.set_nodelay(true);
                let (read, write) = stream.into_split();
                (Box::new(read), Box::new(write))
            }
        };
        let sent = protocol::write_frame_async(&mut writer, &hello(token)).await;
        let read = protocol::read_frame_async(&mut reader, protocol::MAX_HELLO_FRAME).await;
        let max_frame = hello_answer(read, sent)?;
        let pending: Arc<Mutex<Option<Pending>>> = Arc::new(Mutex::new(Some(HashMap::new())));
        let (outbox, mut frames) = mpsc::channel::<Vec<u8>>(64);
        let write_pending = pending.clone();
        let writer_task = tokio::spawn(async move {
            while let Some(body) = frames.recv().await {
                if protocol::write_frame_async(&mut writer, &body)
                    .await
                    .is_err()
                {
                    break;
                }
            }
            // Nothing more can be sent: fail whoever still waits.
            fail_all(&write_pending, None);
        });
        let reader_task = tokio::spawn(read_answers(reader, pending.clone(), max_frame));
        Ok(AsyncIpcClient {
            inner: Arc::new(AsyncInner {
                outbox,
                pending,
                next_id: AtomicU64::new(1),
                max_frame,
                tasks: [writer_task.abort_handle(), reader_task.abort_handle()],
            }),
        })
    }

    /// The largest frame the host takes (from its welcome).
    pub fn max_frame(&self) -> usize {
        self.inner.max_frame
    }

    async fn exchange(&self, mut request: Request) -> Result<Response, ClientError> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        request.id = id;
        let body = checked(&request, self.inner.max_frame)?;
        let (answer, answered) = oneshot::channel();
        {
            let mut pending = self.inner.pending.lock().unwrap_or_else(|e| e.into_inner());
            let Some(pending) = pending.as_mut() else {
                return Err(closed());
            };
            pending.insert(id, answer);
        }
        let _guard = PendingGuard {
            id,
            pending: &self.inner.pending,
        };
        // Once queued, the frame is written whole by the writer task even if
        // this call is given up on.
        if self.inner.outbox.send(body).await.is_err() {
            return Err(closed());
        }
        match answered.await {
            Ok(result) => result.and_then(into_result),
            Err(_) => Err(closed()),
        }
    }

    /// As [`IpcClient::call_raw`].
    ///
    /// # Errors
    ///
    /// As [`IpcClient::call_raw`].
    pub async fn call_raw(&self, method: &str, params: &[u8]) -> Result<Vec<u8>, ClientError> {
        let mut request = request(method);
        request.params = Some(ByteBuf::from(params.to_vec()));
        let response = self.exchange(request).await?;
        Ok(response.result.map(ByteBuf::into_vec).unwrap_or_default())
    }

    /// As [`IpcClient::call`].
    ///
    /// # Errors
    ///
    /// As [`IpcClient::call`].
    pub async fn call<C: IpcCommand>(&self, command: &C) -> Result<C::Response, ClientError> {
        let request = typed_request(command)?;
        typed::<C>(self.exchange(request).await)
    }

    /// As [`IpcClient::call_argv`].
    ///
    /// # Errors
    ///
    /// As [`IpcClient::call_argv`].
    pub async fn call_argv<S: AsRef<str>>(
        &self,
        method: &str,
        argv: &[S],
        stdin: Option<Vec<u8>>,
    ) -> Result<ArgvOutcome, ClientError> {
        let response = self
            .exchange(argv_request(method, argv, stdin, false))
            .await?;
        argv_outcome(response)?
            .ok_or_else(|| ClientError::Protocol("the host asked for stdin unprompted".to_owned()))
    }
}

fn closed() -> ClientError {
    ClientError::Io(io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the connection to the host is closed",
    ))
}

/// Fails every waiting call, and every later one.
fn fail_all(pending: &Mutex<Option<Pending>>, remote: Option<&RemoteError>) {
    let waiting = pending.lock().unwrap_or_else(|e| e.into_inner()).take();
    for (_, waiter) in waiting.into_iter().flatten() {
        let error = match remote {
            Some(remote) => ClientError::Remote(Box::new(remote.clone())),
            None => closed(),
        };
        let _ = waiter.send(Err(error));
    }
}

/// Hands each answer to the call waiting for it; when the connection ends,
/// fails every call still waiting, and every later one.
async fn read_answers<R>(mut reader: R, pending: Arc<Mutex<Option<Pending>>>, max_frame: usize)
where
    R: tokio::io::AsyncRead + Unpin,
{
    let ended: ClientError = loop {
        let body = match frame(protocol::read_frame_async(&mut reader, max_frame).await) {
            Ok(body) => body,
            Err(error) => break error,
        };
        let response: Response = match protocol::decode(&body) {
            Ok(response) => response,
            Err(error) => break ClientError::Protocol(error.to_string()),
        };
        if response.id == 0 {
            // The host speaks for the connection as a whole (a bad frame,
            // say): every waiting call gets that answer.
            break into_result(response).err().unwrap_or_else(closed);
        }
        let waiter = pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .and_then(|p| p.remove(&response.id));
        if let Some(waiter) = waiter {
            let _ = waiter.send(Ok(response));
        }
    };
    fail_all(&pending, ended.remote());
}
