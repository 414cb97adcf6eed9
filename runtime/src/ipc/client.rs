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
use tokio::sync::oneshot;

use super::env::{ENV_ENDPOINT, ENV_TOKEN};
use super::protocol::{self, EXIT_UNAVAILABLE, Request, Response, WireError};
use super::server::Endpoint;
use super::{ArgvOutcome, IpcCommand, Reply};

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
}

impl ClientError {
    /// The exit code a command-line client should end with: the host's for
    /// a remote error, 69 (`EX_UNAVAILABLE`) when the host cannot be reached
    /// or the exchange broke.
    pub fn exit_code(&self) -> i32 {
        match self {
            ClientError::Remote(remote) => remote.exit,
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
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Connect { source, .. } | ClientError::Io(source) => Some(source),
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

fn request(id: u64, token: &str, method: &str) -> Request {
    Request {
        v: protocol::VERSION,
        id,
        // On every request: the server checks the first, and a client with
        // several calls in flight cannot tell which one goes out first.
        token: Some(token.to_owned()),
        method: method.to_owned(),
        params: None,
        argv: None,
        stdin: None,
    }
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

fn argv_outcome(response: Response) -> Result<ArgvOutcome, ClientError> {
    let response = into_result(response)?;
    match (response.help, response.result) {
        (Some(help), _) => Ok(ArgvOutcome::Help(help)),
        (None, Some(result)) => Ok(ArgvOutcome::Response(result.into_vec())),
        (None, None) => Err(ClientError::Protocol(
            "a response with neither result nor help".to_owned(),
        )),
    }
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
    token: String,
    next_id: u64,
    max_frame: usize,
}

impl fmt::Debug for IpcClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IpcClient")
            .field("next_id", &self.next_id)
            .finish_non_exhaustive()
    }
}

impl IpcClient {
    /// Connects to `endpoint` (`unix:/path` or `tcp:host:port`).
    ///
    /// # Errors
    ///
    /// [`ClientError::BadEndpoint`] or [`ClientError::Connect`].
    pub fn connect(endpoint: &str, token: &str) -> Result<IpcClient, ClientError> {
        let endpoint: Endpoint = endpoint.parse().map_err(ClientError::BadEndpoint)?;
        IpcClient::connect_to(&endpoint, token)
    }

    /// Connects to a parsed endpoint.
    ///
    /// # Errors
    ///
    /// [`ClientError::Connect`].
    pub fn connect_to(endpoint: &Endpoint, token: &str) -> Result<IpcClient, ClientError> {
        let failed = |source| ClientError::Connect {
            endpoint: endpoint.to_string(),
            source,
        };
        let stream = match endpoint {
            Endpoint::Unix(path) => Stream::Unix(UnixStream::connect(path).map_err(failed)?),
            Endpoint::Tcp(addr) => {
                let stream = TcpStream::connect(addr).map_err(failed)?;
                let _ = stream.set_nodelay(true);
                Stream::Tcp(stream)
            }
        };
        Ok(IpcClient {
            stream,
            token: token.to_owned(),
            next_id: 1,
            max_frame: protocol::DEFAULT_MAX_FRAME,
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

    /// Limits how long a call may wait for its answer (none by default).
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

    /// Sets the largest response frame accepted (16 MiB by default).
    pub fn set_max_frame(&mut self, bytes: usize) {
        self.max_frame = bytes;
    }

    fn exchange(&mut self, mut request: Request) -> Result<Response, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        request.id = id;
        protocol::write_frame(&mut self.stream, &protocol::encode(&request))
            .map_err(ClientError::Io)?;
        let body = match protocol::read_frame(&mut self.stream, self.max_frame) {
            Ok(Some(body)) => body,
            Ok(None) => {
                return Err(ClientError::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the host closed the connection without answering",
                )));
            }
            Err(protocol::FrameError::Io(error)) => return Err(ClientError::Io(error)),
            Err(error) => return Err(ClientError::Protocol(error.to_string())),
        };
        let response: Response = rmp_serde::from_slice(&body)
            .map_err(|error| ClientError::Protocol(error.to_string()))?;
        if response.id != id && response.id != 0 {
            return Err(ClientError::Protocol(format!(
                "an answer to call {} arrived for call {id}",
                response.id
            )));
        }
        into_result(response)
    }

    /// Calls `method` with MessagePack-encoded `params`; returns the
    /// MessagePack-encoded response.
    ///
    /// # Errors
    ///
    /// [`ClientError::Remote`] for the host's errors; connection errors.
    pub fn call_raw(&mut self, method: &str, params: &[u8]) -> Result<Vec<u8>, ClientError> {
        let mut request = request(0, &self.token, method);
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
        let params = rmp_serde::to_vec_named(command).map_err(|error| {
            ClientError::Protocol(format!("the command does not encode: {error}"))
        })?;
        let mut request = request(0, &self.token, &command.name());
        request.params = Some(ByteBuf::from(params));
        typed::<C>(self.exchange(request))
    }

    /// Calls `method` with shell words and, if the command reads it, piped
    /// standard input, as a wrapper script does.
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
        let mut request = request(0, &self.token, method);
        request.argv = Some(argv.iter().map(|a| a.as_ref().to_owned()).collect());
        request.stdin = stdin.map(ByteBuf::from);
        argv_outcome(self.exchange(request)?)
    }
}

type Pending = HashMap<u64, oneshot::Sender<Result<Response, ClientError>>>;

/// An async client on one connection, with any number of calls in flight;
/// answers are matched to calls by id. Cloning shares the connection.
#[derive(Clone)]
pub struct AsyncIpcClient {
    inner: Arc<AsyncInner>,
}

struct AsyncInner {
    writer: tokio::sync::Mutex<Box<dyn tokio::io::AsyncWrite + Unpin + Send>>,
    pending: Arc<Mutex<Option<Pending>>>,
    next_id: AtomicU64,
    token: String,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for AsyncInner {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl fmt::Debug for AsyncIpcClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncIpcClient").finish_non_exhaustive()
    }
}

impl AsyncIpcClient {
    /// Connects to `endpoint` (`unix:/path` or `tcp:host:port`).
    ///
    /// # Errors
    ///
    /// [`ClientError::BadEndpoint`] or [`ClientError::Connect`].
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

    /// Connects to a parsed endpoint.
    ///
    /// # Errors
    ///
    /// [`ClientError::Connect`].
    pub async fn connect_to(
        endpoint: &Endpoint,
        token: &str,
    ) -> Result<AsyncIpcClient, ClientError> {
        let failed = |source| ClientError::Connect {
            endpoint: endpoint.to_string(),
            source,
        };
        let pending: Arc<Mutex<Option<Pending>>> = Arc::new(Mutex::new(Some(HashMap::new())));
        let (writer, reader): (Box<dyn tokio::io::AsyncWrite + Unpin + Send>, _) = match endpoint {
            Endpoint::Unix(path) => {
                let (read, write) = tokio::net::UnixStream::connect(path)
                    .await
                    .map_err(failed)?
                    .into_split();
                (
                    Box::new(write),
                    tokio::spawn(read_answers(read, pending.clone())),
                )
            }
            Endpoint::Tcp(addr) => {
                let stream = tokio::net::TcpStream::connect(addr).await.map_err(failed)?;
                let _ = stream.set_nodelay(true);
                let (read, write) = stream.into_split();
                (
                    Box::new(write),
                    tokio::spawn(read_answers(read, pending.clone())),
                )
            }
        };
        Ok(AsyncIpcClient {
            inner: Arc::new(AsyncInner {
                writer: tokio::sync::Mutex::new(writer),
                pending,
                next_id: AtomicU64::new(1),
                token: token.to_owned(),
                reader,
            }),
        })
    }

    async fn exchange(&self, mut request: Request) -> Result<Response, ClientError> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        request.id = id;
        let (answer, answered) = oneshot::channel();
        {
            let mut pending = self.inner.pending.lock().unwrap_or_else(|e| e.into_inner());
            let Some(pending) = pending.as_mut() else {
                return Err(closed());
            };
            pending.insert(id, answer);
        }
        let body = protocol::encode(&request);
        let written = {
            let mut writer = self.inner.writer.lock().await;
            protocol::write_frame_async(&mut *writer, &body).await
        };
        if let Err(error) = written {
            if let Some(pending) = self
                .inner
                .pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_mut()
            {
                pending.remove(&id);
            }
            return Err(ClientError::Io(error));
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
        let mut request = request(0, &self.inner.token, method);
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
        let params = rmp_serde::to_vec_named(command).map_err(|error| {
            ClientError::Protocol(format!("the command does not encode: {error}"))
        })?;
        let mut request = request(0, &self.inner.token, &command.name());
        request.params = Some(ByteBuf::from(params));
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
        let mut request = request(0, &self.inner.token, method);
        request.argv = Some(argv.iter().map(|a| a.as_ref().to_owned()).collect());
        request.stdin = stdin.map(ByteBuf::from);
        argv_outcome(self.exchange(request).await?)
    }
}

fn closed() -> ClientError {
    ClientError::Io(io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the connection to the host is closed",
    ))
}

/// Hands each answer to the call waiting for it; when the connection ends,
/// fails every call still waiting, and every later one.
async fn read_answers<R>(mut reader: R, pending: Arc<Mutex<Option<Pending>>>)
where
    R: tokio::io::AsyncRead + Unpin,
{
    let ended: ClientError = loop {
        let body = match protocol::read_frame_async(&mut reader, protocol::DEFAULT_MAX_FRAME).await
        {
            Ok(Some(body)) => body,
            Ok(None) => break closed(),
            Err(protocol::FrameError::Io(error)) => break ClientError::Io(error),
            Err(error) => break ClientError::Protocol(error.to_string()),
        };
        let response: Response = match rmp_serde::from_slice(&body) {
            Ok(response) => response,
            Err(error) => break ClientError::Protocol(error.to_string()),
        };
        if response.id == 0 {
            // The host refused the connection as a whole (busy, auth, a bad
            // frame): every waiting call gets that answer.
            let error = into_result(response).err().unwrap_or_else(closed);
            break error;
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
    let waiting = pending.lock().unwrap_or_else(|e| e.into_inner()).take();
    let remote = ended.remote().cloned();
    for (_, waiter) in waiting.into_iter().flatten() {
        let error = match &remote {
            Some(remote) => ClientError::Remote(Box::new(remote.clone())),
            None => closed(),
        };
        let _ = waiter.send(Err(error));
    }
}
