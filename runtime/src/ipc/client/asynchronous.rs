//! [`AsyncIpcClient`]: the client for tokio, with any number of calls in
//! flight on one connection, matched to their answers by id; and
//! [`CallStream`], a call whose output and progress arrive as events
//! before its result.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot, watch};

use super::error::{ClientError, RemoteError};
use super::event::CallEvent;
use super::exchange::{
    argv_request, call_frame, checked, closed, ended_access_or, env_endpoint, frame, hello,
    hello_answer, host_frame, into_result, json_request, manifest, payload, raw_request, typed,
    typed_request, unprompted_argv_outcome,
};
use crate::ipc::command::argv::ArgvOutcome;
use crate::ipc::command::ipc_command::IpcCommand;
use crate::ipc::endpoint::Endpoint;
use crate::ipc::protocol::{self, CallRef, Cancel, ClientFrame, HostFrame, Request, Response};
use crate::sync::LockUnpoisoned;
use crate::tool::Manifest;

type Pending = HashMap<u64, Waiter>;

/// Who waits for a call's frames.
enum Waiter {
    /// Only the answer.
    Answer(oneshot::Sender<Result<Response, ClientError>>),
    /// Every frame of the call, the answer last (bounded: a stream not
    /// read holds the connection's reader, as a pipe would).
    Stream(mpsc::Sender<Result<HostFrame, ClientError>>),
}

impl Waiter {
    fn fail(self, error: ClientError) {
        match self {
            Waiter::Answer(answer) => {
                let _ = answer.send(Err(error));
            }
            Waiter::Stream(frames) => {
                let _ = frames.try_send(Err(error));
            }
        }
    }
}

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
    /// Becomes `true` once the connection is lost.
    lost: watch::Receiver<bool>,
    next_id: AtomicU64,
    max_frame: usize,
    cancel_grace: Option<std::time::Duration>,
    idle: Option<std::time::Duration>,
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

/// Removes a call's waiter when the call is given up on (or done).
struct PendingGuard {
    id: u64,
    pending: Arc<Mutex<Option<Pending>>>,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        if let Some(pending) = self.pending.lock_unpoisoned().as_mut() {
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
    /// As [`IpcClient::connect`](super::IpcClient::connect).
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
        AsyncIpcClient::connect_to(&endpoint, &token)
            .await
            .map_err(ended_access_or)
    }

    /// Connects to a parsed endpoint and presents the token.
    ///
    /// # Errors
    ///
    /// As [`IpcClient::connect`](super::IpcClient::connect).
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
        let greeting = hello_answer(read, sent)?;
        let max_frame = greeting.max_frame;
        let pending: Arc<Mutex<Option<Pending>>> = Arc::new(Mutex::new(Some(HashMap::new())));
        let (lose, lost) = watch::channel(false);
        let lose = Arc::new(lose);
        let write_lose = lose.clone();
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
            fail_all(&write_pending, None, &write_lose);
        });
        let reader_task = tokio::spawn(read_answers(reader, pending.clone(), max_frame, lose));
        Ok(AsyncIpcClient {
            inner: Arc::new(AsyncInner {
                outbox,
                pending,
                lost,
                next_id: AtomicU64::new(1),
                max_frame,
                cancel_grace: greeting.cancel_grace,
                idle: greeting.idle,
                tasks: [writer_task.abort_handle(), reader_task.abort_handle()],
            }),
        })
    }

    /// The largest frame the host takes (from its welcome).
    pub fn max_frame(&self) -> usize {
        self.inner.max_frame
    }

    /// How long the host gives a cancelled call's handler to finish before
    /// it answers (from its welcome; `None` from a host that does not say).
    pub fn cancel_grace(&self) -> Option<std::time::Duration> {
        self.inner.cancel_grace
    }

    /// How long the host lets this connection sit with no call running and
    /// nothing sent before it closes it (from its welcome; `None` from a
    /// host that does not say). A client keeping the connection across
    /// quiet spells sends a [`list`](AsyncIpcClient::list) within it.
    pub fn idle_timeout(&self) -> Option<std::time::Duration> {
        self.inner.idle
    }

    /// Whether the connection is lost: every call from now on fails.
    pub fn is_closed(&self) -> bool {
        *self.inner.lost.borrow()
    }

    /// Completes once the connection is lost (the host closed it or went
    /// away, or a write failed), for a program that should stop then.
    pub async fn closed(&self) {
        let mut lost = self.inner.lost.clone();
        // An error means the connection's tasks are gone: lost too.
        let _ = lost.wait_for(|lost| *lost).await;
    }

    /// Sends a call with `waiter` registered for its frames, until the
    /// guard it returns is dropped (also if this future is, while it waits
    /// for room to send).
    async fn send(
        &self,
        mut request: Request,
        waiter: Waiter,
    ) -> Result<PendingGuard, ClientError> {
        self.send_frame(
            |id| {
                request.id = id;
                call_frame(request)
            },
            waiter,
        )
        .await
    }

    /// [`send`](AsyncIpcClient::send) for any frame that starts an
    /// exchange, encoded by `encode` under the id it is given.
    async fn send_frame(
        &self,
        encode: impl FnOnce(u64) -> Vec<u8>,
        waiter: Waiter,
    ) -> Result<PendingGuard, ClientError> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let body = checked(encode(id), self.inner.max_frame)?;
        {
            let mut pending = self.inner.pending.lock_unpoisoned();
            let Some(pending) = pending.as_mut() else {
                return Err(closed());
            };
            pending.insert(id, waiter);
        }
        let guard = PendingGuard {
            id,
            pending: self.inner.pending.clone(),
        };
        // Once queued, the frame is written whole by the writer task even if
        // this call is given up on.
        if self.inner.outbox.send(body).await.is_err() {
            return Err(closed());
        }
        Ok(guard)
    }

    async fn exchange(&self, request: Request) -> Result<Response, ClientError> {
        let (answer, answered) = oneshot::channel();
        let _guard = self.send(request, Waiter::Answer(answer)).await?;
        match answered.await {
            Ok(result) => result.and_then(into_result),
            Err(_) => Err(closed()),
        }
    }

    /// As [`IpcClient::list`](super::IpcClient::list): the commands this
    /// client's token may call.
    ///
    /// # Errors
    ///
    /// As [`IpcClient::list`](super::IpcClient::list).
    pub async fn list(&self) -> Result<Manifest, ClientError> {
        let (answer, answered) = oneshot::channel();
        let list = |id| protocol::encode(&ClientFrame::List(CallRef { id }));
        let _guard = self.send_frame(list, Waiter::Answer(answer)).await?;
        match answered.await {
            Ok(result) => result.and_then(into_result).and_then(manifest),
            Err(_) => Err(closed()),
        }
    }

    /// As [`IpcClient::call_raw`](super::IpcClient::call_raw).
    ///
    /// # Errors
    ///
    /// As [`IpcClient::call_raw`](super::IpcClient::call_raw).
    pub async fn call_raw(&self, method: &str, params: &[u8]) -> Result<Vec<u8>, ClientError> {
        let response = self.exchange(raw_request(method, params)).await?;
        Ok(payload(response))
    }

    /// As [`IpcClient::call_json`](super::IpcClient::call_json).
    ///
    /// # Errors
    ///
    /// As [`IpcClient::call_json`](super::IpcClient::call_json).
    pub async fn call_json(
        &self,
        method: &str,
        args: &serde_json::Value,
    ) -> Result<Vec<u8>, ClientError> {
        let response = self.exchange(json_request(method, args)).await?;
        Ok(payload(response))
    }

    /// Calls `method` with a JSON object of arguments, as
    /// [`call_json`](AsyncIpcClient::call_json) does, and gives the call as
    /// a [`CallStream`] whose output and progress arrive as events; its
    /// [`finish`](CallStream::finish) gives the MessagePack-encoded
    /// response as [`ArgvOutcome::Response`]. What `gangway mcp` forwards
    /// an agent's tool call with.
    ///
    /// # Errors
    ///
    /// As [`call_argv_streaming`](AsyncIpcClient::call_argv_streaming).
    pub async fn call_json_streaming(
        &self,
        method: &str,
        args: &serde_json::Value,
    ) -> Result<CallStream, ClientError> {
        self.stream(json_request(method, args)).await
    }

    /// As [`IpcClient::call`](super::IpcClient::call).
    ///
    /// # Errors
    ///
    /// As [`IpcClient::call`](super::IpcClient::call).
    pub async fn call<C: IpcCommand>(&self, command: &C) -> Result<C::Response, ClientError> {
        let request = typed_request(command)?;
        typed::<C>(self.exchange(request).await)
    }

    /// As [`IpcClient::call_argv`](super::IpcClient::call_argv).
    ///
    /// # Errors
    ///
    /// As [`IpcClient::call_argv`](super::IpcClient::call_argv).
    pub async fn call_argv<S: AsRef<str>>(
        &self,
        method: &str,
        argv: &[S],
        stdin: Option<Vec<u8>>,
    ) -> Result<ArgvOutcome, ClientError> {
        let response = self
            .exchange(argv_request(method, argv, stdin, false))
            .await?;
        unprompted_argv_outcome(response)
    }

    /// Calls `method` with shell words, as
    /// [`call_argv`](AsyncIpcClient::call_argv) does, and gives the call as
    /// a [`CallStream`]: the output and progress the handler streams arrive
    /// as events, then the result. `stdin` is sent whole with the call (a
    /// command whose stdin argument is an
    /// [`InputStream`](crate::ipc::InputStream) reads it as one chunk).
    ///
    /// ```no_run
    /// use gangway::ipc::{AsyncIpcClient, CallEvent};
    /// use gangway::ipc::protocol::OutputStream;
    ///
    /// # async fn demo(client: AsyncIpcClient) -> Result<(), gangway::ipc::ClientError> {
    /// let mut call = client.call_argv_streaming("build", &["--release"], None).await?;
    /// while let Some(event) = call.next_event().await {
    ///     if let CallEvent::Output { stream: OutputStream::Stdout, data } = event {
    ///         print!("{}", String::from_utf8_lossy(&data));
    ///     }
    /// }
    /// let outcome = call.finish().await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`call_argv`](AsyncIpcClient::call_argv), for sending the call;
    /// the call's own errors come from [`CallStream::finish`].
    pub async fn call_argv_streaming<S: AsRef<str>>(
        &self,
        method: &str,
        argv: &[S],
        stdin: Option<Vec<u8>>,
    ) -> Result<CallStream, ClientError> {
        self.stream(argv_request(method, argv, stdin, false)).await
    }

    /// Sends `request` with its frames going to the [`CallStream`] returned.
    async fn stream(&self, request: Request) -> Result<CallStream, ClientError> {
        let (frames, incoming) = mpsc::channel(16);
        let guard = self.send(request, Waiter::Stream(frames)).await?;
        Ok(CallStream {
            id: guard.id,
            _guard: guard,
            client: self.clone(),
            incoming,
            answer: None,
        })
    }
}

/// A call in progress whose output and progress arrive as events before
/// its result (from [`AsyncIpcClient::call_argv_streaming`] or
/// [`AsyncIpcClient::call_json_streaming`]). Dropping it
/// gives up on the call: its late frames are dropped (use
/// [`cancel`](CallStream::cancel) to stop the handler).
pub struct CallStream {
    id: u64,
    /// Takes the call's waiter away when the stream is dropped.
    _guard: PendingGuard,
    client: AsyncIpcClient,
    incoming: mpsc::Receiver<Result<HostFrame, ClientError>>,
    /// The call's end, once it arrived.
    answer: Option<Result<Response, ClientError>>,
}

impl fmt::Debug for CallStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallStream")
            .field("id", &self.id)
            .field("finished", &self.answer.is_some())
            .finish_non_exhaustive()
    }
}

impl CallStream {
    /// The next event, in the order the handler produced them; `None` once
    /// the call has ended (then [`finish`](CallStream::finish) gives its
    /// result).
    pub async fn next_event(&mut self) -> Option<CallEvent<'static>> {
        while self.answer.is_none() {
            match self.incoming.recv().await {
                Some(Ok(HostFrame::Answer(response))) => self.answer = Some(Ok(response)),
                Some(Ok(frame)) => {
                    if let Some(event) = CallEvent::from_frame(frame, self.id) {
                        return Some(event);
                    }
                }
                Some(Err(error)) => self.answer = Some(Err(error)),
                None => self.answer = Some(Err(closed())),
            }
        }
        None
    }

    /// The call's result, once it ends; events not read yet are dropped.
    ///
    /// # Errors
    ///
    /// As [`AsyncIpcClient::call_argv`].
    pub async fn finish(mut self) -> Result<ArgvOutcome, ClientError> {
        while self.next_event().await.is_some() {}
        let answer = self.answer.take().unwrap_or_else(|| Err(closed()));
        unprompted_argv_outcome(answer.and_then(into_result)?)
    }

    /// Asks the host to cancel the call: the handler sees
    /// [`CancelReason::Interrupted`](crate::ipc::CancelReason::Interrupted),
    /// and the call ends once it returns (or after the host's cancel
    /// grace). Keep reading events, then [`finish`](CallStream::finish).
    ///
    /// # Errors
    ///
    /// [`ClientError::Io`] when the connection is closed.
    pub async fn cancel(&self) -> Result<(), ClientError> {
        let frame = protocol::encode(&ClientFrame::Cancel(Cancel {
            id: self.id,
            signal: None,
        }));
        self.client
            .inner
            .outbox
            .send(frame)
            .await
            .map_err(|_| closed())
    }

    /// Sends the cancel without waiting for room to send it: queued now if
    /// there is room, else by a task of its own, so a caller that must go
    /// on reading this call's events (and so keep the connection moving)
    /// never waits on it. Must be called within a Tokio runtime.
    pub fn cancel_soon(&self) {
        let frame = protocol::encode(&ClientFrame::Cancel(Cancel {
            id: self.id,
            signal: None,
        }));
        if let Err(mpsc::error::TrySendError::Full(frame)) =
            self.client.inner.outbox.try_send(frame)
        {
            let outbox = self.client.inner.outbox.clone();
            tokio::spawn(async move {
                let _ = outbox.send(frame).await;
            });
        }
    }
}

/// Fails every waiting call, and every later one, and says the connection
/// is lost.
fn fail_all(
    pending: &Mutex<Option<Pending>>,
    remote: Option<&RemoteError>,
    lose: &watch::Sender<bool>,
) {
    lose.send_replace(true);
    let waiting = pending.lock_unpoisoned().take();
    for (_, waiter) in waiting.into_iter().flatten() {
        let error = match remote {
            Some(remote) => ClientError::Remote(Box::new(remote.clone())),
            None => closed(),
        };
        waiter.fail(error);
    }
}

/// Hands each answer to the call waiting for it; when the connection ends,
/// fails every call still waiting, and every later one.
async fn read_answers<R>(
    mut reader: R,
    pending: Arc<Mutex<Option<Pending>>>,
    max_frame: usize,
    lose: Arc<watch::Sender<bool>>,
) where
    R: tokio::io::AsyncRead + Unpin,
{
    let ended: ClientError = loop {
        let body = match frame(protocol::read_frame_async(&mut reader, max_frame).await) {
            Ok(body) => body,
            Err(error) => break error,
        };
        let frame = match host_frame(&body) {
            Ok(frame) => frame,
            Err(error) => break error,
        };
        let (id, answer) = match &frame {
            HostFrame::Answer(response) => (response.id, true),
            HostFrame::Output(chunk) => (chunk.id, false),
            HostFrame::Progress(progress) => (progress.id, false),
            // Input is sent whole by this client: no credit to take.
            _ => continue,
        };
        if !answer {
            let frames = match pending.lock_unpoisoned().as_ref().and_then(|p| p.get(&id)) {
                Some(Waiter::Stream(frames)) => frames.clone(),
                _ => continue,
            };
            let _ = frames.send(Ok(frame)).await;
            continue;
        }
        let HostFrame::Answer(response) = frame else {
            continue;
        };
        if response.id == 0 {
            // The host speaks for the connection as a whole (a bad frame,
            // say): every waiting call gets that answer.
            break into_result(response).err().unwrap_or_else(closed);
        }
        let waiter = pending
            .lock_unpoisoned()
            .as_mut()
            .and_then(|p| p.remove(&response.id));
        match waiter {
            Some(Waiter::Answer(answer)) => {
                let _ = answer.send(Ok(response));
            }
            Some(Waiter::Stream(frames)) => {
                let _ = frames.send(Ok(HostFrame::Answer(response))).await;
            }
            None => {}
        }
    };
    fail_all(&pending, ended.remote(), &lose);
}
