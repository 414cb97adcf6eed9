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
