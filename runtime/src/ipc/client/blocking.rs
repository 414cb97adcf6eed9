//! [`IpcClient`]: the blocking client, std only (what the in-sandbox
//! `gangway` binary uses, so it starts fast), one call at a time on one
//! connection; and [`CallCanceller`], which cancels its call from another
//! thread (a signal handler's).

use std::fmt;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::error::ClientError;
use super::event::CallEvent;
use super::exchange::{
    Greeting, call_frame, checked, closed, ended_access_or, env_endpoint, frame, hello,
    hello_answer, host_frame, into_result,
};
use super::pump::Pump;
use crate::ipc::endpoint::Endpoint;
use crate::ipc::protocol::{self, CallRef, Cancel, ClientFrame, HostFrame, Request, Response};
use crate::sync::LockUnpoisoned;

/// What a streaming call does with what it reports before its result.
type OnEvent<'a> = &'a mut dyn FnMut(CallEvent) -> io::Result<()>;

/// The connection, shared by the reading thread and the writers (the
/// caller, the stdin pump, the canceller) without duplicating the socket.
#[derive(Clone)]
struct Stream(Arc<Socket>);

enum Socket {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &*self.0 {
            Socket::Unix(stream) => (&*stream).read(buf),
            Socket::Tcp(stream) => (&*stream).read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &*self.0 {
            Socket::Unix(stream) => (&*stream).write(buf),
            Socket::Tcp(stream) => (&*stream).write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match &*self.0 {
            Socket::Unix(stream) => (&*stream).write_vectored(bufs),
            Socket::Tcp(stream) => (&*stream).write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
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
    /// The reading half (one thread reads).
    reader: Stream,
    /// The writing half, shared with the stdin pump and the canceller, so
    /// frames go out whole.
    writer: Arc<Mutex<Stream>>,
    next_id: u64,
    /// The id of the call in progress, 0 between calls: what the
    /// canceller cancels.
    current: Arc<AtomicU64>,
    /// Set by a cancel that came between calls: the next one is not sent.
    cancel_pending: Arc<AtomicBool>,
    /// The host's frame limit; until a deferred hello is answered, the
    /// least any host takes.
    max_frame: usize,
    /// How long the host gives a cancelled call, from its welcome, in
    /// milliseconds (`u64::MAX` until known); shared with the canceller.
    cancel_grace: Arc<AtomicU64>,
    /// How long the host lets the connection idle, from its welcome.
    idle: Option<Duration>,
    /// A hello not yet sent: it leaves with the first call.
    hello: Option<Vec<u8>>,
    /// Set after a failed exchange: the stream may hold half a frame.
    broken: bool,
    /// Where frames are read, reused from frame to frame.
    buffer: Vec<u8>,
    /// The read timeout set by [`set_timeout`](IpcClient::set_timeout).
    timeout: Option<Duration>,
    /// What to run when a call is slow to answer, and after how long.
    slow_call: Option<(Duration, Box<dyn FnMut() + Send>)>,
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
        let stream = Stream(Arc::new(match endpoint {
            Endpoint::Unix(path) => Socket::Unix(UnixStream::connect(path).map_err(failed)?),
            Endpoint::Tcp(addr) => {
                let stream = TcpStream::connect(addr).map_err(failed)?;
                let _ = stream.set_nodelay(true);
                Socket::Tcp(stream)
            }
        }));
        let writer = stream.clone();
        Ok(IpcClient {
            reader: stream,
            writer: Arc::new(Mutex::new(writer)),
            next_id: 1,
            current: Arc::new(AtomicU64::new(0)),
            cancel_pending: Arc::new(AtomicBool::new(false)),
            max_frame: protocol::MAX_HELLO_FRAME,
            cancel_grace: Arc::new(AtomicU64::new(u64::MAX)),
            idle: None,
            hello: Some(hello(token)),
            broken: false,
            buffer: Vec::new(),
            timeout: None,
            slow_call: None,
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
        IpcClient::connect_to(&endpoint, &token).map_err(ended_access_or)
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
        IpcClient::connect_deferred(&endpoint, &token).map_err(ended_access_or)
    }

    /// Sends a hello still pending and reads the host's answer.
    fn greet(&mut self) -> Result<(), ClientError> {
        let Some(hello) = self.hello.take() else {
            return Ok(());
        };
        let sent = protocol::write_frame(&mut *self.writer.lock_unpoisoned(), &hello);
        let read = protocol::read_frame(&mut self.reader, protocol::MAX_HELLO_FRAME);
        self.welcomed(hello_answer(read, sent)?);
        Ok(())
    }

    fn welcomed(&mut self, greeting: Greeting) {
        self.max_frame = greeting.max_frame;
        self.idle = greeting.idle;
        if let Some(grace) = greeting.cancel_grace {
            let ms = u64::try_from(grace.as_millis()).unwrap_or(u64::MAX - 1);
            self.cancel_grace.store(ms, Ordering::SeqCst);
        }
    }

    /// How long the host gives a cancelled call to finish before dropping
    /// it (from its welcome; `None` before a deferred hello is answered).
    pub fn cancel_grace(&self) -> Option<Duration> {
        grace(&self.cancel_grace)
    }

    /// How long the host lets this connection sit with no call running and
    /// nothing sent before it closes it (from its welcome; `None` before a
    /// deferred hello is answered, or from a host that does not say).
    pub fn idle_timeout(&self) -> Option<Duration> {
        self.idle
    }

    /// A handle that cancels this client's call in progress from another
    /// thread: what a signal handler uses on Ctrl-C.
    pub fn canceller(&self) -> CallCanceller {
        CallCanceller {
            writer: self.writer.clone(),
            current: self.current.clone(),
            cancel_pending: self.cancel_pending.clone(),
            cancel_grace: self.cancel_grace.clone(),
        }
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
        self.read_timeout(timeout)?;
        self.timeout = timeout;
        Ok(())
    }

    fn read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match &*self.reader.0 {
            Socket::Unix(stream) => stream.set_read_timeout(timeout),
            Socket::Tcp(stream) => stream.set_read_timeout(timeout),
        }
    }

    /// Runs `hook` on this thread, at most once per call, when the call
    /// turns out to last: no answer (nor anything else) came within
    /// `after`, or something other than the answer came first (output,
    /// progress, a request for input). What the in-sandbox client uses to
    /// start watching for Ctrl-C only in calls that last, so the many that
    /// answer at once pay nothing for it.
    pub fn on_slow_call(&mut self, after: Duration, hook: impl FnMut() + Send + 'static) {
        self.slow_call = Some((after.max(Duration::from_micros(1)), Box::new(hook)));
    }

    /// Runs the slow-call hook, if there is one.
    fn call_is_slow(&mut self) {
        if let Some((_, hook)) = &mut self.slow_call {
            hook();
        }
    }

    /// Waits up to the slow-call delay for the host's first byte, running
    /// the hook if none came; that byte, if one did.
    fn first_byte(&mut self) -> Result<Option<u8>, ClientError> {
        let Some((after, _)) = &self.slow_call else {
            return Ok(None);
        };
        // A shorter timeout of the caller's own is left to do its work.
        if self.timeout.is_some_and(|timeout| timeout <= *after) {
            return Ok(None);
        }
        let after = *after;
        self.read_timeout(Some(after)).map_err(ClientError::Io)?;
        let mut byte = [0u8; 1];
        let read = loop {
            match self.reader.read(&mut byte) {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                read => break read,
            }
        };
        self.read_timeout(self.timeout).map_err(ClientError::Io)?;
        match read {
            Ok(1) => Ok(Some(byte[0])),
            Ok(_) => Err(closed()),
            Err(error)
                if matches!(
                    error.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                self.call_is_slow();
                Ok(None)
            }
            Err(error) => Err(ClientError::Io(error)),
        }
    }

    pub(super) fn exchange(&mut self, request: Request) -> Result<Response, ClientError> {
        self.exchange_streaming(Outbound::Call(request), &mut None, &mut |_| Ok(()))
    }

    /// Sends a call and reads its frames until its answer: events go to
    /// `on_event` (an error from it abandons the call: the connection is
    /// then unusable, and closing it tells the host); input credit starts
    /// (or feeds) a pump of `input`.
    pub(super) fn exchange_streaming(
        &mut self,
        outbound: Outbound,
        input: &mut Option<Box<dyn Read + Send>>,
        on_event: OnEvent<'_>,
    ) -> Result<Response, ClientError> {
        if self.broken {
            return Err(ClientError::Protocol(
                "an earlier call on this connection failed midway; connect again".to_owned(),
            ));
        }
        if self.cancel_pending.swap(false, Ordering::SeqCst) {
            return Err(ClientError::Io(io::Error::new(
                io::ErrorKind::Interrupted,
                "the call was cancelled before it was sent",
            )));
        }
        let id = self.next_id;
        self.next_id += 1;
        let body = match outbound {
            Outbound::Call(mut request) => {
                request.id = id;
                call_frame(request)
            }
            Outbound::List => protocol::encode(&ClientFrame::List(CallRef { id })),
        };
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
                let sent = {
                    let mut writer = self.writer.lock_unpoisoned();
                    self.current.store(id, Ordering::SeqCst);
                    writer.write_all(&both).and_then(|()| writer.flush())
                };
                let read = protocol::read_frame(&mut self.reader, protocol::MAX_HELLO_FRAME);
                let greeting = hello_answer(read, sent);
                let greeting = greeting.inspect_err(|_| self.current.store(0, Ordering::SeqCst))?;
                self.welcomed(greeting);
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
                let sent = {
                    let mut writer = self.writer.lock_unpoisoned();
                    self.current.store(id, Ordering::SeqCst);
                    protocol::write_frame(&mut *writer, &body)
                };
                if let Err(error) = sent {
                    self.current.store(0, Ordering::SeqCst);
                    return Err(self.why_closed(error));
                }
            }
        }
        let answer = self.read_until_answer(id, input, on_event);
        self.current.store(0, Ordering::SeqCst);
        answer
    }

    /// The host closed the connection under a call being sent: what it
    /// said first (why it ended the connection: access revoked, shutting
    /// down), if it said anything, else the write's error.
    fn why_closed(&mut self, error: io::Error) -> ClientError {
        if self.read_timeout(Some(Duration::from_millis(500))).is_err() {
            return ClientError::Io(error);
        }
        let said = protocol::read_frame(&mut self.reader, self.max_frame);
        match said.ok().flatten().map(|body| host_frame(&body)) {
            Some(Ok(HostFrame::Answer(response))) if response.id == 0 && !response.ok => {
                into_result(response)
                    .err()
                    .unwrap_or(ClientError::Io(error))
            }
            _ => ClientError::Io(error),
        }
    }

    fn read_until_answer(
        &mut self,
        id: u64,
        input: &mut Option<Box<dyn Read + Send>>,
        on_event: OnEvent<'_>,
    ) -> Result<Response, ClientError> {
        let mut pump: Option<Pump> = None;
        let mut first = self.first_byte()?;
        // Whether the slow-call hook ran (or has no reason to).
        let mut slow = first.is_none();
        loop {
            let read = protocol::read_frame_after(
                &mut self.reader,
                first.take(),
                self.max_frame,
                &mut self.buffer,
            );
            let len = frame(read)?;
            // Anything before the answer means the call streams: it lasts.
            if !slow && !is_answer(&self.buffer[..len]) {
                slow = true;
                self.call_is_slow();
            }
            let body = &self.buffer[..len];
            // Output, the bulk of a streaming call, is lent from the buffer.
            if let Some((call, stream, data)) = protocol::decode_output(body) {
                if call == id {
                    let event = CallEvent::Output {
                        stream,
                        data: std::borrow::Cow::Borrowed(data),
                    };
                    on_event(event).map_err(ClientError::Io)?;
                }
                continue;
            }
            let response = match host_frame(body)? {
                HostFrame::Answer(response) => response,
                HostFrame::InputWanted(wanted) if wanted.id == id => {
                    if pump.is_none()
                        && let Some(input) = input.take()
                    {
                        pump = Some(
                            Pump::start(id, input, self.writer.clone(), self.max_frame)
                                .map_err(ClientError::Stdin)?,
                        );
                    }
                    if let Some(pump) = &pump {
                        pump.grant(wanted.bytes);
                    }
                    continue;
                }
                other => {
                    if let Some(event) = CallEvent::from_frame(other, id) {
                        on_event(event).map_err(ClientError::Io)?;
                    }
                    continue;
                }
            };
            return match response.id {
                current if current == id => {
                    self.broken = false;
                    // The call had only part of the input: say why.
                    if let Some(error) = pump.as_ref().and_then(Pump::failure) {
                        return Err(ClientError::Stdin(error));
                    }
                    into_result(response)
                }
                // The host speaks for the connection as a whole.
                0 => into_result(response).and(Err(closed())),
                other => Err(ClientError::Protocol(format!(
                    "an answer to call {other} arrived for call {id}"
                ))),
            };
        }
    }
}

/// What a client sends to start an exchange.
pub(super) enum Outbound {
    /// A call.
    Call(Request),
    /// `gangway list`.
    List,
}

/// Whether a host frame is an answer (a map whose one key is `answer`),
/// from its first bytes.
fn is_answer(body: &[u8]) -> bool {
    body.get(..8) == Some(&[0x81, 0xa6, b'a', b'n', b's', b'w', b'e', b'r'][..])
}

/// Cancels the call an [`IpcClient`] has in progress, from another thread
/// (from [`IpcClient::canceller`]).
#[derive(Clone)]
pub struct CallCanceller {
    writer: Arc<Mutex<Stream>>,
    current: Arc<AtomicU64>,
    cancel_pending: Arc<AtomicBool>,
    cancel_grace: Arc<AtomicU64>,
}

/// A grace kept in milliseconds, `u64::MAX` while unknown.
fn grace(ms: &AtomicU64) -> Option<Duration> {
    match ms.load(Ordering::SeqCst) {
        u64::MAX => None,
        ms => Some(Duration::from_millis(ms)),
    }
}

impl fmt::Debug for CallCanceller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallCanceller")
            .field("current", &self.current.load(Ordering::SeqCst))
            .finish()
    }
}

impl CallCanceller {
    /// The host's cancel grace, once its welcome has said it (so a
    /// canceller made before a deferred hello learns it with the first
    /// call).
    pub fn cancel_grace(&self) -> Option<Duration> {
        grace(&self.cancel_grace)
    }

    /// Asks the host to cancel the call in progress, saying which signal
    /// the caller got (if one did). The handler sees
    /// [`CancelReason::Interrupted`](crate::ipc::CancelReason::Interrupted);
    /// the host answers once it returns, or after its cancel grace.
    /// `Ok(false)` when no call is in progress: then the client's next call
    /// is not sent (it fails as interrupted), so a cancel that came while
    /// the client was between the two exchanges of a call is not lost.
    ///
    /// # Errors
    ///
    /// The socket's error.
    pub fn cancel(&self, signal: Option<i32>) -> io::Result<bool> {
        let mut writer = self.writer.lock_unpoisoned();
        let id = self.current.load(Ordering::SeqCst);
        if id == 0 {
            // Between two exchanges of one call (its input being read, say):
            // the next is not sent.
            self.cancel_pending.store(true, Ordering::SeqCst);
            return Ok(false);
        }
        let frame = protocol::encode(&ClientFrame::Cancel(Cancel { id, signal }));
        protocol::write_frame(&mut *writer, &frame)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::is_answer;
    use crate::ipc::protocol::{self, HostFrame, OutputStream, Response, WireError};

    #[test]
    fn an_answer_is_told_from_other_frames_by_its_first_bytes() {
        let failure = Response::failure(1, WireError::server("busy", "x", 69));
        assert!(is_answer(&protocol::encode(&HostFrame::Answer(failure))));
        assert!(!is_answer(&protocol::encode_output(
            1,
            OutputStream::Stdout,
            b"x"
        )));
        assert!(!is_answer(b""));
    }
}
