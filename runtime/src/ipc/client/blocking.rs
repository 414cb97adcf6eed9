//! [`IpcClient`]: the blocking client, std only (what the in-sandbox
//! `gangway` binary uses, so it starts fast), one call at a time on one
//! connection.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use super::error::ClientError;
use super::exchange::{
    argv_outcome, argv_request, checked, closed, env_endpoint, frame, hello, hello_answer,
    into_result, payload, raw_request, typed, typed_request, unprompted_argv_outcome,
};
use crate::ipc::argv::ArgvOutcome;
use crate::ipc::command::IpcCommand;
use crate::ipc::endpoint::Endpoint;
use crate::ipc::protocol::{self, Request, Response};

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
    /// The host's frame limit; until a deferred hello is answered, the
    /// least any host takes.
    max_frame: usize,
    /// A hello not yet sent: it leaves with the first call.
    hello: Option<Vec<u8>>,
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
        let mut client = IpcClient::connect_deferred(endpoint, token)?;
        client.greet()?;
        Ok(client)
    }

    /// Connects to `endpoint` without waiting for the host's welcome: the
    /// hello leaves with the first call, in one write, which saves a round
    /// trip (what the in-sandbox client does, once per process). The host
    /// still checks the token before it reads the call, so a wrong token
    /// surfaces as the first call's `auth` error. Make the first call soon:
    /// the host waits for a hello only so long (5 s by default,
    /// `IpcServerBuilder::hello_timeout`), and one that comes later is
    /// refused.
    ///
    /// # Errors
    ///
    /// [`ClientError::Connect`].
    pub fn connect_deferred(endpoint: &Endpoint, token: &str) -> Result<IpcClient, ClientError> {
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
            next_id: 1,
            max_frame: protocol::MAX_HELLO_FRAME,
            hello: Some(hello(token)),
            broken: false,
        })
    }

    /// Connects to the host named by `GANGWAY_ENDPOINT`, with
    /// `GANGWAY_TOKEN`.
    ///
    /// # Errors
    ///
    /// [`ClientError::MissingEnv`], and as [`connect`](IpcClient::connect).
    pub fn from_env() -> Result<IpcClient, ClientError> {
        let (endpoint, token) = env_endpoint()?;
        IpcClient::connect_to(&endpoint, &token)
    }

    /// [`from_env`](IpcClient::from_env), with the hello deferred to the
    /// first call as [`connect_deferred`](IpcClient::connect_deferred) does.
    ///
    /// # Errors
    ///
    /// [`ClientError::MissingEnv`], [`ClientError::BadEndpoint`],
    /// [`ClientError::Connect`].
    pub fn from_env_deferred() -> Result<IpcClient, ClientError> {
        let (endpoint, token) = env_endpoint()?;
        IpcClient::connect_deferred(&endpoint, &token)
    }

    /// Sends a hello still pending and reads the host's answer.
    fn greet(&mut self) -> Result<(), ClientError> {
        let Some(hello) = self.hello.take() else {
            return Ok(());
        };
        let sent = protocol::write_frame(&mut self.stream, &hello);
        let read = protocol::read_frame(&mut self.stream, protocol::MAX_HELLO_FRAME);
        self.max_frame = hello_answer(read, sent)?;
        Ok(())
    }

    /// The largest frame the host takes (from its welcome; before a
    /// deferred hello is answered, [`protocol::MAX_HELLO_FRAME`], the least
    /// any host takes).
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
        let body = protocol::encode(&request);
        // Until the answer is read whole, a failure leaves the stream out of
        // step with the calls (`broken`); a request refused before it is
        // sent does not.
        match self.hello.take() {
            // A call that fits the least frame any host takes leaves with
            // the hello, in one write; the host reads it only once the
            // token checks out.
            Some(hello) if body.len() <= protocol::MAX_HELLO_FRAME => {
                self.broken = true;
                let mut both = Vec::with_capacity(8 + hello.len() + body.len());
                protocol::append_frame(&mut both, &hello).map_err(ClientError::Io)?;
                protocol::append_frame(&mut both, &body).map_err(ClientError::Io)?;
                let sent = self
                    .stream
                    .write_all(&both)
                    .and_then(|()| self.stream.flush());
                let read = protocol::read_frame(&mut self.stream, protocol::MAX_HELLO_FRAME);
                self.max_frame = hello_answer(read, sent)?;
            }
            pending => {
                self.hello = pending;
                if let Err(error) = self.greet() {
                    // The host refused or left: nothing more on this one.
                    self.broken = true;
                    return Err(error);
                }
                let body = checked(body, self.max_frame)?;
                self.broken = true;
                protocol::write_frame(&mut self.stream, &body).map_err(ClientError::Io)?;
            }
        }
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
        let response = self.exchange(raw_request(method, params))?;
        Ok(payload(response))
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
        unprompted_argv_outcome(response)
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
