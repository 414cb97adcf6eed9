//! JSON-RPC 2.0 over a child process's standard input and output, one
//! message per line: how a host talks to a local agent (ACP) or tool server
//! (MCP).
//!
//! ```no_run
//! use std::time::Duration;
//! use gangway::stdio::StdioTransport;
//! use serde_json::json;
//!
//! # async fn run() -> Result<(), gangway::stdio::RpcError> {
//! let mut command = tokio::process::Command::new("my-agent");
//! command.arg("--stdio");
//! let agent = StdioTransport::builder()
//!     .rpc_timeout(Duration::from_secs(30))
//!     .spawn(command)?;
//! agent.set_notification_handler(std::sync::Arc::new(|message| {
//!     println!("agent says: {message}");
//!     Ok(())
//! }));
//! let answer = agent.call("initialize", json!({"protocolVersion": 1})).await?;
//! println!("{answer}");
//! agent.shutdown(Duration::from_secs(2)).await;
//! # Ok(()) }
//! ```
//!
//! What it guarantees:
//! - Lines over the frame limit (64 MiB by default) are read through and
//!   dropped, never held whole; blank lines are skipped; a line that is not
//!   JSON is logged with an excerpt and skipped.
//! - Responses are matched by id whether the peer echoes it as a number or
//!   a string; a response to an unknown id is logged and dropped.
//! - When the peer exits or its stdout ends, every waiting call fails at
//!   once with [`RpcError::Closed`] (with the tail of its stderr), and so
//!   does every later call.
//! - A call that times out frees its slot, and can send the peer a cancel
//!   notification ([`CancelNotice`]).
//! - Requests and notifications wait for room in a bounded write queue;
//!   responses to the peer's requests never wait.
//! - Incoming requests go to an async handler, run concurrently (bounded),
//!   whose value or error is sent back; or to the notification handler,
//!   which answers with [`respond`](StdioTransport::respond).
//! - A spawned peer leads its own session; dropping the transport kills
//!   every process group in it, and the child is reaped (by the
//!   transport's task, so while the runtime runs). What the peer leaves in
//!   its session when it exits is killed too.

mod error;
mod lines;
mod process;

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use nix::sys::signal::Signal;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::{Semaphore, mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

pub use error::{ResponseError, RpcError};
use lines::{Line, LineReader};
pub use process::ExitOutcome;

/// The code a peer's request is answered with when too many are already
/// in progress (in JSON-RPC's range for implementation errors).
pub const SERVER_BUSY: i64 = -32000;

/// The error a notification handler may return; it is logged.
pub type HandlerError = Box<dyn std::error::Error + Send + Sync>;

/// Receives every incoming message that is not a response to a call:
/// notifications, and requests when no request handler is set (answer those
/// with [`StdioTransport::respond`]). It runs on the reading task, in
/// order, so it must be quick.
pub type NotificationHandler = Arc<dyn Fn(Value) -> Result<(), HandlerError> + Send + Sync>;

/// A request handler's answer.
pub type RequestFuture = Pin<Box<dyn Future<Output = Result<Value, ResponseError>> + Send>>;

type RequestHandler = Arc<dyn Fn(IncomingRequest) -> RequestFuture + Send + Sync>;

/// A request from the peer.
#[derive(Debug, Clone, PartialEq)]
pub struct IncomingRequest {
    /// Its id, as the peer wrote it (a number, a string, or null).
    pub id: Value,
    /// The method.
    pub method: String,
    /// The parameters (`null` when absent).
    pub params: Value,
}

/// What to tell the peer when a call times out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CancelNotice {
    /// Nothing.
    #[default]
    None,
    /// `$/cancelRequest` with `{"id": id}` (LSP, and ACP agents).
    CancelRequest,
    /// `notifications/cancelled` with `{"requestId": id, "reason": ...}`
    /// (MCP).
    Cancelled,
}

/// Options for a [`StdioTransport`].
#[derive(Debug, Clone)]
#[must_use]
pub struct StdioBuilder {
    rpc_timeout: Duration,
    max_frame: usize,
    write_queue: usize,
    max_concurrent_requests: usize,
    stderr_tail: usize,
    cancel_notice: CancelNotice,
    jsonrpc_field: bool,
}

impl Default for StdioBuilder {
    fn default() -> Self {
        StdioBuilder {
            rpc_timeout: Duration::from_secs(60),
            max_frame: 64 * 1024 * 1024,
            write_queue: 256,
            max_concurrent_requests: 64,
            stderr_tail: 64 * 1024,
            cancel_notice: CancelNotice::None,
            jsonrpc_field: true,
        }
    }
}

impl StdioBuilder {
    /// How long a call waits for room in the queue and its response
    /// together (60 seconds by default).
    pub fn rpc_timeout(mut self, timeout: Duration) -> Self {
        self.rpc_timeout = timeout;
        self
    }

    /// The longest line read from the peer (64 MiB by default); a longer
    /// one is dropped and logged.
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes.max(1);
        self
    }

    /// How many requests and notifications may wait to be written (256 by
    /// default); past that, `call` and `notify` wait.
    pub fn write_queue(mut self, messages: usize) -> Self {
        self.write_queue = messages.clamp(1, Semaphore::MAX_PERMITS);
        self
    }

    /// How many of the peer's requests the async handler runs at once (64
    /// by default); past that they wait their turn, and past 16 times that
    /// they are answered [`SERVER_BUSY`] without running.
    pub fn max_concurrent_requests(mut self, requests: usize) -> Self {
        self.max_concurrent_requests = requests.clamp(1, Semaphore::MAX_PERMITS);
        self
    }

    /// How much of the peer's standard error to keep for
    /// [`RpcError::Closed`] (64 KiB by default).
    pub fn stderr_tail(mut self, bytes: usize) -> Self {
        self.stderr_tail = bytes;
        self
    }

    /// What to tell the peer when a call times out (nothing by default).
    pub fn cancel_notice(mut self, notice: CancelNotice) -> Self {
        self.cancel_notice = notice;
        self
    }

    /// Leave `"jsonrpc": "2.0"` out of every message, for peers that reject
    /// it.
    pub fn omit_jsonrpc_field(mut self, omit: bool) -> Self {
        self.jsonrpc_field = !omit;
        self
    }

    /// Starts `command` as the leader of its own session (so its own
    /// process group too) with piped standard streams, and talks to it. (A
    /// command already set to lead a process group keeps that, and is
    /// signalled as a group.) Call it within a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`RpcError::Io`] naming the program when it cannot be started;
    /// [`RpcError::Internal`] outside a tokio runtime.
    pub fn spawn(self, mut command: tokio::process::Command) -> Result<StdioTransport, RpcError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(RpcError::Internal(
                "StdioTransport runs its reader and writer on tokio: spawn it from within a tokio runtime"
                    .to_owned(),
            ));
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        crate::process_tree::start_own_session(&mut command);
        let program = command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned();
        let mut child = command.spawn().map_err(|error| {
            RpcError::Io(std::io::Error::new(
                error.kind(),
                format!("cannot start `{program}`: {error}"),
            ))
        })?;
        let missing = || RpcError::Internal("a piped standard stream is missing".to_owned());
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stderr = child.stderr.take().ok_or_else(missing)?;
        Ok(self.from_child(child, stdin, stdout, stderr))
    }

    /// Talks to an already spawned child over its piped streams. Must be
    /// called within a tokio runtime (it starts the reading, writing and
    /// watching tasks).
    pub fn from_child(
        self,
        child: Child,
        stdin: ChildStdin,
        stdout: ChildStdout,
        stderr: ChildStderr,
    ) -> StdioTransport {
        self.from_streams(Some(child), stdin, stdout, Some(stderr))
    }

    /// Talks over any pair of streams (a socket, a pipe pair), with the
    /// process behind them if there is one (watched, killed on drop) and
    /// its stderr if there is one. Must be called within a tokio runtime.
    pub fn from_streams<W, R, E>(
        self,
        child: Option<Child>,
        stdin: W,
        stdout: R,
        stderr: Option<E>,
    ) -> StdioTransport
    where
        W: AsyncWrite + Unpin + Send + 'static,
        R: AsyncRead + Unpin + Send + 'static,
        E: AsyncRead + Unpin + Send + 'static,
    {
        let (queue_tx, queue_rx) = mpsc::channel::<Queued>(self.write_queue);
        let (urgent_tx, urgent_rx) = mpsc::unbounded_channel();
        let pid = child.as_ref().and_then(Child::id);
        let shared = Arc::new(Shared::new(
            self,
            Outbox::Pipe {
                queue: Mutex::new(Some(queue_tx)),
                urgent: urgent_tx,
            },
            pid,
        ));
        let stderr_done = CancellationToken::new();
        match stderr {
            Some(stderr) => {
                tokio::spawn(keep_stderr(stderr, shared.clone(), stderr_done.clone()));
            }
            None => stderr_done.cancel(),
        }
        let stdout_done = CancellationToken::new();
        tokio::spawn(write_lines(stdin, queue_rx, urgent_rx, shared.clone()));
        tokio::spawn(read_lines(
            stdout,
            shared.clone(),
            stdout_done.clone(),
            stderr_done,
        ));
        if let Some(child) = child {
            tokio::spawn(watch_child(child, shared.clone(), stdout_done));
        }
        StdioTransport { shared }
    }
}

/// A JSON-RPC 2.0 connection to a peer process over its standard input and
/// output. See the [module](self) for what it guarantees.
///
/// The child process (its whole process group, when it leads one) is
/// killed when the transport is dropped.
pub struct StdioTransport {
    shared: Arc<Shared>,
}

impl fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioTransport")
            .field("pid", &self.shared.pid)
            .field("pending", &self.shared.lock_pending().calls.len())
            .field("closed", &self.shared.closed.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// Where outgoing lines go.
enum Outbox {
    /// To the writer task: requests and notifications through the bounded
    /// queue (taken away to close the peer's stdin), responses and cancel
    /// notices through the lane that never waits (capped in bytes).
    Pipe {
        queue: Mutex<Option<mpsc::Sender<Queued>>>,
        urgent: mpsc::UnboundedSender<Vec<u8>>,
    },
    /// To a test, one message per string, without the newline.
    Testing(mpsc::UnboundedSender<String>),
}

/// A request or notification waiting to be written.
struct Queued {
    line: Vec<u8>,
    /// For a request: whether it was written or given up on first.
    call: Option<Arc<CallState>>,
}

/// Where a call's request stands: queued, written, or given up on before
/// it was written (then it never is).
struct CallState(AtomicU8);

impl CallState {
    const QUEUED: u8 = 0;
    const WRITTEN: u8 = 1;
    const ABANDONED: u8 = 2;

    fn new() -> Arc<Self> {
        Arc::new(CallState(AtomicU8::new(Self::QUEUED)))
    }

    /// The writer's claim: false when the call was given up on.
    fn mark_written(&self) -> bool {
        self.0
            .compare_exchange(
                Self::QUEUED,
                Self::WRITTEN,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    /// The caller's: true when the request already went out.
    fn abandon(&self) -> bool {
        self.0
            .compare_exchange(
                Self::QUEUED,
                Self::ABANDONED,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
    }
}

struct Pending {
    calls: HashMap<i64, oneshot::Sender<Result<Value, RpcError>>>,
    /// Set once the connection is gone: why.
    closed: Option<String>,
}

struct Shared {
    options: StdioBuilder,
    outbox: Outbox,
    pending: Mutex<Pending>,
    next_id: AtomicI64,
    notification_handler: RwLock<Option<NotificationHandler>>,
    request_handler: RwLock<Option<RequestHandler>>,
    /// Peer requests admitted (running or waiting to run).
    requests_admitted: Arc<Semaphore>,
    requests_running: Arc<Semaphore>,
    /// Bytes in the lane that never waits, not yet written.
    urgent_bytes: AtomicUsize,
    /// Lines read from stdout, and whether the reader now waits for more:
    /// how the exit watcher tells a reader still draining from one left
    /// waiting on a pipe someone else holds open.
    lines_read: AtomicU64,
    reader_waiting: AtomicBool,
    /// Fires once the connection is gone.
    closed: CancellationToken,
    stderr: Mutex<StderrTail>,
    pid: Option<u32>,
    /// How the process ended, once it has.
    exit: watch::Sender<Option<ExitOutcome>>,
    /// Kill the process now.
    kill: CancellationToken,
}

impl Shared {
    fn new(options: StdioBuilder, outbox: Outbox, pid: Option<u32>) -> Self {
        let running = options.max_concurrent_requests;
        let tail = options.stderr_tail;
        Shared {
            options,
            outbox,
            pending: Mutex::new(Pending {
                calls: HashMap::new(),
                closed: None,
            }),
            next_id: AtomicI64::new(1),
            notification_handler: RwLock::new(None),
            request_handler: RwLock::new(None),
            requests_admitted: Arc::new(Semaphore::new(
                running.saturating_mul(16).min(Semaphore::MAX_PERMITS),
            )),
            requests_running: Arc::new(Semaphore::new(running)),
            urgent_bytes: AtomicUsize::new(0),
            lines_read: AtomicU64::new(0),
            reader_waiting: AtomicBool::new(false),
            closed: CancellationToken::new(),
            stderr: Mutex::new(StderrTail::new(tail)),
            pid,
            exit: watch::Sender::new(None),
            kill: CancellationToken::new(),
        }
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn closed_error(&self, reason: &str) -> RpcError {
        RpcError::Closed {
            reason: reason.to_owned(),
            stderr: self.stderr.lock().unwrap_or_else(|e| e.into_inner()).text(),
        }
    }

    /// Marks the connection gone and fails every waiting call, at once.
    fn close(&self, reason: String) {
        let waiting = {
            let mut pending = self.lock_pending();
            if pending.closed.is_some() {
                return;
            }
            pending.closed = Some(reason.clone());
            std::mem::take(&mut pending.calls)
        };
        self.closed.cancel();
        for (_, waiter) in waiting {
            let _ = waiter.send(Err(self.closed_error(&reason)));
        }
    }

    /// Why the connection is gone, if it is.
    fn check_open(&self) -> Result<(), RpcError> {
        match &self.lock_pending().closed {
            Some(reason) => Err(self.closed_error(reason)),
            None => Ok(()),
        }
    }

    fn writer_gone(&self) -> RpcError {
        match &self.lock_pending().closed {
            Some(reason) => self.closed_error(reason),
            None => self.closed_error("the peer stopped reading its standard input"),
        }
    }

    /// Queues a request or notification, waiting for room.
    async fn send(&self, line: Vec<u8>, call: Option<Arc<CallState>>) -> Result<(), RpcError> {
        match &self.outbox {
            Outbox::Pipe { queue, .. } => {
                let queue = queue.lock().unwrap_or_else(|e| e.into_inner()).clone();
                let Some(queue) = queue else {
                    return Err(self.closed_error("the transport is shutting down"));
                };
                queue
                    .send(Queued { line, call })
                    .await
                    .map_err(|_| self.writer_gone())
            }
            Outbox::Testing(sink) => {
                if let Some(call) = call {
                    call.mark_written();
                }
                sink.send(testing_text(line))
                    .map_err(|_| self.writer_gone())
            }
        }
    }

    /// Queues a response or cancel notice without waiting. A peer that
    /// sends requests but does not read the answers is cut off once they
    /// pass the frame limit in bytes.
    fn send_now(&self, line: Vec<u8>) -> Result<(), RpcError> {
        let sent = match &self.outbox {
            Outbox::Pipe { urgent, .. } => {
                let waiting =
                    self.urgent_bytes.fetch_add(line.len(), Ordering::AcqRel) + line.len();
                if waiting > self.options.max_frame {
                    self.close(format!(
                        "the peer sends requests but does not read the answers ({waiting} bytes of \
                         them waiting)"
                    ));
                    return Err(self.writer_gone());
                }
                urgent.send(line).is_ok()
            }
            Outbox::Testing(sink) => sink.send(testing_text(line)).is_ok(),
        };
        if sent {
            Ok(())
        } else {
            Err(self.writer_gone())
        }
    }

    /// One message as a line.
    fn encode(&self, message: &impl Serialize) -> Result<Vec<u8>, RpcError> {
        let mut line = serde_json::to_vec(message)
            .map_err(|error| RpcError::Internal(format!("the message does not encode: {error}")))?;
        line.push(b'\n');
        Ok(line)
    }

    fn version(&self) -> Option<&'static str> {
        self.options.jsonrpc_field.then_some("2.0")
    }

    fn response_line(
        &self,
        id: Value,
        outcome: Result<Value, ResponseError>,
    ) -> Result<Vec<u8>, RpcError> {
        let (result, error) = match outcome {
            Ok(result) => (Some(result), None),
            Err(error) => (None, Some(error)),
        };
        self.encode(&OutgoingResponse {
            jsonrpc: self.version(),
            id,
            result,
            error,
        })
    }

    fn respond(&self, id: Value, outcome: Result<Value, ResponseError>) -> Result<(), RpcError> {
        let line = self.response_line(id, outcome)?;
        self.send_now(line)
    }

    /// Tells the peer a call was given up on, if so configured.
    fn send_cancel_notice(&self, id: i64, method: &str, timed_out: bool) {
        let reason = if timed_out {
            format!("`{method}` timed out")
        } else {
            format!("the caller gave up on `{method}`")
        };
        let (name, params) = match self.options.cancel_notice {
            CancelNotice::None => return,
            CancelNotice::CancelRequest => ("$/cancelRequest", serde_json::json!({ "id": id })),
            CancelNotice::Cancelled => (
                "notifications/cancelled",
                serde_json::json!({ "requestId": id, "reason": reason }),
            ),
        };
        let notice = OutgoingRequest {
            jsonrpc: self.version(),
            id: None,
            method: name,
            params: &params,
        };
        if let Ok(line) = self.encode(&notice) {
            let _ = self.send_now(line);
        }
    }

    /// Handles one line from the peer.
    async fn receive(self: &Arc<Self>, line: &[u8]) {
        let line = line.trim_ascii();
        if line.is_empty() {
            return;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Array(batch)) => {
                for message in batch {
                    self.receive_message(message).await;
                }
            }
            Ok(message) => self.receive_message(message).await,
            Err(error) => tracing::warn!(
                target: "gangway::stdio",
                pid = self.pid,
                "skipped a line that is not JSON ({error}): {}",
                excerpt(line)
            ),
        }
    }

    async fn receive_message(self: &Arc<Self>, message: Value) {
        let Value::Object(mut fields) = message else {
            tracing::warn!(target: "gangway::stdio", pid = self.pid, "skipped a message that is not an object: {}", excerpt(message.to_string().as_bytes()));
            return;
        };
        if fields.get("method").is_some_and(Value::is_string) {
            if fields.contains_key("id") {
                self.receive_request(fields).await;
            } else {
                self.receive_notification(Value::Object(fields));
            }
        } else if fields.contains_key("result") || fields.contains_key("error") {
            self.receive_response(&mut fields);
        } else {
            let shown = excerpt(Value::Object(fields).to_string().as_bytes());
            tracing::warn!(target: "gangway::stdio", pid = self.pid, "skipped a message that is neither a request, a notification nor a response: {shown}");
        }
    }

    fn receive_response(&self, fields: &mut Map<String, Value>) {
        let id = fields.get("id").and_then(call_id);
        let waiter = id.and_then(|id| self.lock_pending().calls.remove(&id));
        let Some(waiter) = waiter else {
            let shown = fields
                .get("id")
                .map_or_else(|| "none".to_owned(), ToString::to_string);
            tracing::warn!(
                target: "gangway::stdio",
                pid = self.pid,
                "dropped a response to an id no call is waiting for: {shown}"
            );
            return;
        };
        let outcome = match (fields.remove("error"), fields.remove("result")) {
            (Some(Value::Null) | None, Some(result)) => Ok(result),
            (Some(error), _) => Err(remote_error(error)),
            (None, None) => Err(RpcError::Protocol(
                "a response with neither result nor error".to_owned(),
            )),
        };
        let _ = waiter.send(outcome);
    }

    fn receive_notification(&self, message: Value) {
        let handler = self
            .notification_handler
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match handler {
            Some(handler) => self.run_notification_handler(&handler, message),
            None => {
                tracing::debug!(target: "gangway::stdio", pid = self.pid, "no notification handler; dropped: {}", excerpt(message.to_string().as_bytes()))
            }
        }
    }

    fn run_notification_handler(&self, handler: &NotificationHandler, message: Value) {
        match std::panic::catch_unwind(AssertUnwindSafe(|| handler(message))) {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::warn!(target: "gangway::stdio", pid = self.pid, "the notification handler failed: {error}");
            }
            Err(_) => {
                tracing::error!(target: "gangway::stdio", pid = self.pid, "the notification handler panicked; the message is dropped");
            }
        }
    }

    async fn receive_request(self: &Arc<Self>, mut fields: Map<String, Value>) {
        let handler = self
            .request_handler
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(handler) = handler {
            let request = IncomingRequest {
                id: fields.remove("id").unwrap_or(Value::Null),
                method: match fields.remove("method") {
                    Some(Value::String(method)) => method,
                    _ => String::new(),
                },
                params: fields.remove("params").unwrap_or(Value::Null),
            };
            // Reading never waits on handlers (they may be waiting on a
            // response only reading brings); past the admission limit the
            // peer is told to slow down instead.
            let Ok(admitted) = self.requests_admitted.clone().try_acquire_owned() else {
                let busy = ResponseError::new(
                    SERVER_BUSY,
                    format!(
                        "too many requests in progress; `{}` was not run",
                        request.method
                    ),
                );
                let _ = self.respond(request.id, Err(busy));
                return;
            };
            let shared = self.clone();
            tokio::spawn(async move {
                let id = request.id.clone();
                let method = request.method.clone();
                let run = async {
                    let _running = shared.requests_running.acquire().await;
                    // Called inside the task, so a panic before the future
                    // exists is caught as well.
                    match tokio::spawn(async move { handler(request).await }).await {
                        Ok(outcome) => outcome,
                        Err(_) => Err(ResponseError::internal(format!(
                            "the handler of `{method}` panicked"
                        ))),
                    }
                };
                let outcome = tokio::select! {
                    biased;
                    () = shared.closed.cancelled() => return,
                    outcome = run => outcome,
                };
                if let Err(error) = shared.respond(id, outcome) {
                    tracing::debug!(target: "gangway::stdio", pid = shared.pid, "a response was not sent: {error}");
                }
                drop(admitted);
            });
            return;
        }
        let notification_handler = self
            .notification_handler
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match notification_handler {
            Some(handler) => self.run_notification_handler(&handler, Value::Object(fields)),
            None => {
                // Nobody will answer: say so rather than leave the peer waiting.
                let method = fields
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let id = fields.remove("id").unwrap_or(Value::Null);
                let _ = self.respond(id, Err(ResponseError::method_not_found(&method)));
            }
        }
    }
}

impl StdioTransport {
    /// Options for a transport.
    pub fn builder() -> StdioBuilder {
        StdioBuilder::default()
    }

    /// Starts `command` in its own process group with default options; see
    /// [`StdioBuilder::spawn`].
    ///
    /// # Errors
    ///
    /// As [`StdioBuilder::spawn`].
    pub fn spawn(command: tokio::process::Command) -> Result<StdioTransport, RpcError> {
        StdioTransport::builder().spawn(command)
    }

    /// Wires the transport to a spawned child's streams: starts the writer
    /// (stdin), the reader (stdout), the stderr keeper, and the task that
    /// notices the child's exit. Must be called within a tokio runtime.
    pub fn from_child(
        child: Child,
        stdin: ChildStdin,
        stdout: ChildStdout,
        stderr: ChildStderr,
        rpc_timeout: Duration,
    ) -> Self {
        StdioTransport::builder()
            .rpc_timeout(rpc_timeout)
            .from_child(child, stdin, stdout, stderr)
    }

    /// A transport with no process and no background tasks: every message
    /// it sends arrives on `write_tx`'s receiver as one JSON string (no
    /// newline); feed it the peer's side with
    /// [`receive_line`](StdioTransport::receive_line) and
    /// [`receive_close`](StdioTransport::receive_close).
    pub fn new_for_testing(write_tx: mpsc::UnboundedSender<String>, rpc_timeout: Duration) -> Self {
        StdioTransport::new_for_testing_with(
            write_tx,
            StdioTransport::builder().rpc_timeout(rpc_timeout),
        )
    }

    /// Like [`new_for_testing`](StdioTransport::new_for_testing) with these
    /// options.
    pub fn new_for_testing_with(
        write_tx: mpsc::UnboundedSender<String>,
        options: StdioBuilder,
    ) -> Self {
        StdioTransport {
            shared: Arc::new(Shared::new(options, Outbox::Testing(write_tx), None)),
        }
    }

    /// Handles one line as if the peer had written it.
    pub async fn receive_line(&self, line: &str) {
        self.shared.receive(line.as_bytes()).await;
    }

    /// Acts as if the peer had gone away, for `reason`.
    pub fn receive_close(&self, reason: impl Into<String>) {
        self.shared.close(reason.into());
    }

    /// Sets the handler for incoming notifications, and for requests while
    /// no [request handler](StdioTransport::set_request_handler) is set.
    /// Replaces the previous one. A handler that needs the transport (to
    /// [`respond`](StdioTransport::respond)) should hold a
    /// [`Weak`](std::sync::Weak) to it: a strong one makes a cycle, and the
    /// transport, never dropped, never kills its peer.
    pub fn set_notification_handler(&self, handler: NotificationHandler) {
        *self
            .shared
            .notification_handler
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(handler);
    }

    /// Sets the async handler for incoming requests: each runs on its own
    /// task (up to the concurrency limit), and its value or error is sent
    /// back as the response. A handler that panics answers with an internal
    /// error. Past 16 times the concurrency limit waiting, a request is
    /// answered [`SERVER_BUSY`] without running. Replaces the previous one;
    /// hold the transport weakly, as for the notification handler.
    pub fn set_request_handler<F, Fut>(&self, handler: F)
    where
        F: Fn(IncomingRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ResponseError>> + Send + 'static,
    {
        let handler: RequestHandler = Arc::new(move |request| Box::pin(handler(request)));
        *self
            .shared
            .request_handler
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(handler);
    }

    /// Sends a request and waits for its response, within the transport's
    /// timeout.
    ///
    /// # Errors
    ///
    /// [`RpcError::Remote`] for the peer's error, [`RpcError::Timeout`],
    /// [`RpcError::Closed`] when the peer is gone.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        self.call_with_timeout(method, params, self.shared.options.rpc_timeout)
            .await
    }

    /// [`call`](StdioTransport::call) with its own timeout.
    ///
    /// # Errors
    ///
    /// As [`call`](StdioTransport::call).
    pub async fn call_with_timeout(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, RpcError> {
        let shared = &self.shared;
        let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
        let line = shared.encode(&OutgoingRequest {
            jsonrpc: shared.version(),
            id: Some(id),
            method,
            params: &params,
        })?;
        let (answer, answered) = oneshot::channel();
        {
            let mut pending = shared.lock_pending();
            if let Some(reason) = &pending.closed {
                return Err(shared.closed_error(reason));
            }
            pending.calls.insert(id, answer);
        }
        let state = CallState::new();
        let mut guard = PendingCall {
            shared,
            id,
            method,
            state: state.clone(),
            timed_out: false,
        };
        let exchange = async {
            shared.send(line, Some(state)).await?;
            match answered.await {
                Ok(outcome) => outcome,
                // `close` answers before it drops a waiter, so this cannot
                // happen; answer as closed all the same.
                Err(_) => Err(shared.writer_gone()),
            }
        };
        match tokio::time::timeout(timeout, exchange).await {
            Ok(outcome) => outcome,
            Err(_) => {
                guard.timed_out = true;
                Err(RpcError::Timeout {
                    method: method.to_owned(),
                    after: timeout,
                })
            }
        }
    }

    /// Sends a notification, waiting for room in the queue.
    ///
    /// # Errors
    ///
    /// [`RpcError::Closed`] when the peer is gone.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), RpcError> {
        self.shared.check_open()?;
        let line = self.shared.encode(&OutgoingRequest {
            jsonrpc: self.shared.version(),
            id: None,
            method,
            params: &params,
        })?;
        self.shared.send(line, None).await
    }

    /// Answers the peer's request `id` with `result`.
    ///
    /// # Errors
    ///
    /// [`RpcError::Closed`] when the peer is gone.
    pub fn respond(&self, id: i64, result: Value) -> Result<(), RpcError> {
        self.respond_to(Value::from(id), result)
    }

    /// Answers the peer's request whose id is any JSON value (a string, say)
    /// with `result`.
    ///
    /// # Errors
    ///
    /// [`RpcError::Closed`] when the peer is gone.
    pub fn respond_to(&self, id: Value, result: Value) -> Result<(), RpcError> {
        self.shared.respond(id, Ok(result))
    }

    /// Answers the peer's request `id` with an error.
    ///
    /// # Errors
    ///
    /// [`RpcError::Closed`] when the peer is gone.
    pub fn respond_error(
        &self,
        id: i64,
        code: i32,
        message: impl Into<String>,
    ) -> Result<(), RpcError> {
        self.respond_error_to(
            Value::from(id),
            ResponseError::new(i64::from(code), message),
        )
    }

    /// Answers the peer's request whose id is any JSON value with an error.
    ///
    /// # Errors
    ///
    /// [`RpcError::Closed`] when the peer is gone.
    pub fn respond_error_to(&self, id: Value, error: ResponseError) -> Result<(), RpcError> {
        self.shared.respond(id, Err(error))
    }

    /// The peer's process id, if there is a process.
    pub fn pid(&self) -> Option<u32> {
        self.shared.pid
    }

    /// Whether the peer is gone.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.is_cancelled()
    }

    /// Waits until the peer process has ended, and says how (at once,
    /// [`ExitOutcome::NoProcess`], for a transport without one).
    pub async fn exited(&self) -> ExitOutcome {
        if self.shared.pid.is_none() {
            return ExitOutcome::NoProcess;
        }
        let mut exit = self.shared.exit.subscribe();
        match exit.wait_for(Option::is_some).await {
            Ok(outcome) => outcome.unwrap_or(ExitOutcome::Killed),
            Err(_) => ExitOutcome::Killed,
        }
    }

    /// Sends `signal` to the peer (its process group when it leads one).
    #[cfg(feature = "controller")]
    pub(crate) fn signal_peer(&self, signal: Signal) {
        if let Some(pid) = self.shared.pid
            && self.shared.exit.borrow().is_none()
        {
            crate::process_tree::signal_tree(pid, signal);
        }
    }

    /// The last of the peer's standard error.
    pub fn stderr_tail(&self) -> String {
        self.shared
            .stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .text()
    }

    /// Ends the conversation: closes the peer's stdin (after what is
    /// queued), waits for it to exit until `deadline`, then kills its
    /// process group; then fails whatever calls still wait. Returns how it
    /// ended; calling it again returns the same.
    pub async fn shutdown(&self, deadline: Duration) -> ExitOutcome {
        let shared = &self.shared;
        if let Outbox::Pipe { queue, .. } = &shared.outbox {
            // The writer closes stdin once the queue drains.
            queue.lock().unwrap_or_else(|e| e.into_inner()).take();
        }
        if shared.pid.is_none() {
            shared.close("the transport was shut down".to_owned());
            return ExitOutcome::NoProcess;
        }
        let mut exit = shared.exit.subscribe();
        let ended = tokio::time::timeout(deadline, exit.wait_for(Option::is_some))
            .await
            .is_ok();
        if !ended {
            shared.kill.cancel();
        }
        // The kill lands at once; the bound only guards against a watcher
        // that can no longer run.
        let outcome = match tokio::time::timeout(
            Duration::from_secs(5),
            exit.wait_for(Option::is_some),
        )
        .await
        {
            Ok(Ok(outcome)) => outcome.unwrap_or(ExitOutcome::Killed),
            _ => ExitOutcome::Killed,
        };
        shared.close(format!("the transport was shut down; the peer {outcome}"));
        outcome
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        let shared = &self.shared;
        shared.close("the transport was dropped".to_owned());
        if let Some(pid) = shared.pid
            && shared.exit.borrow().is_none()
        {
            // Kill now, even if no runtime is left to run the watcher; the
            // watcher (or tokio's reaper) collects the exit status.
            crate::process_tree::signal_tree(pid, Signal::SIGKILL);
        }
        shared.kill.cancel();
    }
}

/// Frees a call's slot when it ends or is given up on. A call given up on
/// before its request was written is never written; one given up on after
/// gets the peer told, if so configured.
struct PendingCall<'a> {
    shared: &'a Shared,
    id: i64,
    method: &'a str,
    state: Arc<CallState>,
    timed_out: bool,
}

impl Drop for PendingCall<'_> {
    fn drop(&mut self) {
        let unanswered = self.shared.lock_pending().calls.remove(&self.id).is_some();
        if unanswered && self.state.abandon() {
            self.shared
                .send_cancel_notice(self.id, self.method, self.timed_out);
        }
    }
}

#[derive(Serialize)]
struct OutgoingRequest<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    jsonrpc: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<i64>,
    method: &'a str,
    #[serde(skip_serializing_if = "Value::is_null")]
    params: &'a Value,
}

#[derive(Serialize)]
struct OutgoingResponse {
    #[serde(skip_serializing_if = "Option::is_none")]
    jsonrpc: Option<&'static str>,
    id: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ResponseError>,
}

/// Our call id from the id a response carries: a number, or a string of
/// one.
fn call_id(id: &Value) -> Option<i64> {
    match id {
        Value::Number(number) => number.as_i64().or_else(|| {
            number
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        }),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

fn remote_error(error: Value) -> RpcError {
    match serde_json::from_value::<ResponseError>(error.clone()) {
        Ok(ResponseError {
            code,
            message,
            data,
        }) => RpcError::Remote {
            code,
            message,
            data,
        },
        Err(_) => RpcError::Protocol(format!(
            "an error response whose error is not a JSON-RPC error object: {}",
            excerpt(error.to_string().as_bytes())
        )),
    }
}

/// The start of a line, for a log.
fn excerpt(bytes: &[u8]) -> String {
    const SHOWN: usize = 200;
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(SHOWN)]);
    if bytes.len() > SHOWN {
        format!("{text}... ({} bytes)", bytes.len())
    } else {
        text.into_owned()
    }
}

fn testing_text(mut line: Vec<u8>) -> String {
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    String::from_utf8(line).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The last bytes of the peer's stderr.
struct StderrTail {
    bytes: std::collections::VecDeque<u8>,
    max: usize,
}

impl StderrTail {
    fn new(max: usize) -> Self {
        StderrTail {
            bytes: std::collections::VecDeque::new(),
            max,
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        let chunk = &chunk[chunk.len().saturating_sub(self.max)..];
        let overflow = (self.bytes.len() + chunk.len()).saturating_sub(self.max);
        self.bytes.drain(..overflow);
        self.bytes.extend(chunk);
    }

    fn text(&self) -> String {
        let (front, back) = self.bytes.as_slices();
        String::from_utf8_lossy(&[front, back].concat()).into_owned()
    }
}

/// Writes queued lines to the peer's stdin, batching what is ready before
/// each flush. Ends (closing stdin) when the queue is closed and drained,
/// or when the peer stops reading.
async fn write_lines<W>(
    stdin: W,
    mut queue: mpsc::Receiver<Queued>,
    mut urgent: mpsc::UnboundedReceiver<Vec<u8>>,
    shared: Arc<Shared>,
) where
    W: AsyncWrite + Unpin,
{
    let mut out = BufWriter::with_capacity(64 * 1024, stdin);
    // The next line to write, if any: urgent first. `None` once the queue
    // is closed (by `shutdown`) and drained.
    let next = |urgent: &mut mpsc::UnboundedReceiver<Vec<u8>>,
                queue: &mut mpsc::Receiver<Queued>|
     -> Option<Vec<u8>> {
        if let Ok(line) = urgent.try_recv() {
            shared.urgent_bytes.fetch_sub(line.len(), Ordering::AcqRel);
            return Some(line);
        }
        while let Ok(queued) = queue.try_recv() {
            if queued.call.as_ref().is_none_or(|call| call.mark_written()) {
                return Some(queued.line);
            }
        }
        None
    };
    let failed = 'write: loop {
        let first = tokio::select! {
            biased;
            () = shared.closed.cancelled() => break None,
            Some(line) = urgent.recv() => {
                shared.urgent_bytes.fetch_sub(line.len(), Ordering::AcqRel);
                line
            }
            queued = queue.recv() => match queued {
                Some(queued) if queued.call.as_ref().is_none_or(|call| call.mark_written()) => queued.line,
                // Given up on before it was written: never written.
                Some(_) => continue,
                // Closed by `shutdown`: what was queued is written.
                None => break None,
            },
        };
        let mut line = Some(first);
        // Whatever else is ready goes out in the same flush.
        while let Some(current) = line.take() {
            let written = tokio::select! {
                biased;
                () = shared.closed.cancelled() => break 'write None,
                written = out.write_all(&current) => written,
            };
            if let Err(error) = written {
                break 'write Some(error);
            }
            line = next(&mut urgent, &mut queue);
        }
        let flushed = tokio::select! {
            biased;
            () = shared.closed.cancelled() => break None,
            flushed = out.flush() => flushed,
        };
        if let Err(error) = flushed {
            break Some(error);
        }
    };
    if !shared.closed.is_cancelled() {
        // Answers owed to the peer still go out before stdin closes.
        while let Ok(line) = urgent.try_recv() {
            if out.write_all(&line).await.is_err() {
                break;
            }
        }
        let _ = out.flush().await;
        let _ = out.shutdown().await;
    }
    if let Some(error) = failed {
        tracing::debug!(target: "gangway::stdio", pid = shared.pid, "writing to the peer failed: {error}");
        shared.close(format!(
            "the peer stopped reading its standard input ({error})"
        ));
    }
}

/// Reads the peer's stdout line by line until it ends, then fails what
/// waits.
async fn read_lines<R>(
    stdout: R,
    shared: Arc<Shared>,
    done: CancellationToken,
    stderr_done: CancellationToken,
) where
    R: AsyncRead + Unpin,
{
    let mut reader = LineReader::new(
        BufReader::with_capacity(64 * 1024, stdout),
        shared.options.max_frame,
    );
    let mut line = Vec::new();
    let ended = loop {
        shared.reader_waiting.store(true, Ordering::Release);
        let next = tokio::select! {
            biased;
            // Dropped or shut down: nothing more to read for.
            () = shared.closed.cancelled() => return,
            next = reader.next(&mut line) => next,
        };
        shared.reader_waiting.store(false, Ordering::Release);
        shared.lines_read.fetch_add(1, Ordering::AcqRel);
        match next {
            Ok(Line::Complete) => shared.receive(&line).await,
            Ok(Line::TooLong(len)) => tracing::error!(
                target: "gangway::stdio",
                pid = shared.pid,
                "dropped a line of {len} bytes from the peer, over the {}-byte frame limit",
                shared.options.max_frame
            ),
            Ok(Line::End) => break "the peer closed its standard output".to_owned(),
            Err(error) => break format!("reading the peer's standard output failed: {error}"),
        }
    };
    done.cancel();
    // Let the exit status and the last of stderr arrive, briefly, so the
    // error says why.
    let mut exit = shared.exit.subscribe();
    let settle = async {
        if shared.pid.is_some() {
            let _ = exit.wait_for(Option::is_some).await;
        }
        stderr_done.cancelled().await;
    };
    let _ = tokio::time::timeout(Duration::from_millis(50), settle).await;
    let outcome = *shared.exit.borrow();
    let reason = match outcome {
        Some(outcome) => format!("{ended}; it {outcome}"),
        None => ended,
    };
    shared.close(reason);
}

/// Keeps the tail of the peer's stderr and logs each line.
async fn keep_stderr<E>(stderr: E, shared: Arc<Shared>, done: CancellationToken)
where
    E: AsyncRead + Unpin,
{
    let mut reader = LineReader::new(BufReader::new(stderr), 64 * 1024);
    let mut line = Vec::new();
    loop {
        let next = tokio::select! {
            biased;
            () = shared.closed.cancelled() => break,
            next = reader.next(&mut line) => next,
        };
        match next {
            Ok(Line::Complete) => {
                tracing::info!(target: "gangway::stdio::stderr", pid = shared.pid, "{}", String::from_utf8_lossy(&line));
                line.push(b'\n');
                shared
                    .stderr
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(&line);
            }
            Ok(Line::TooLong(len)) => {
                let note = format!("[a stderr line of {len} bytes, not kept]\n");
                shared
                    .stderr
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(note.as_bytes());
            }
            Ok(Line::End) | Err(_) => break,
        }
    }
    done.cancel();
}

/// Waits for the child to exit (or kills it when told to), records how it
/// ended, clears out what is left of its process group, and closes the
/// connection if its stdout does not end by itself soon after.
async fn watch_child(mut child: Child, shared: Arc<Shared>, stdout_done: CancellationToken) {
    let pid = child.id();
    let (status, killed) = tokio::select! {
        status = child.wait() => (status, false),
        () = shared.kill.cancelled() => {
            if let Some(pid) = pid {
                crate::process_tree::signal_tree(pid, Signal::SIGKILL);
            }
            let _ = child.start_kill();
            (child.wait().await, true)
        }
    };
    // Helpers the peer left in its group go with it.
    if let Some(pid) = pid {
        crate::process_tree::signal_tree(pid, Signal::SIGKILL);
    }
    let outcome = match status {
        Ok(status) => ExitOutcome::from_status(status, killed),
        Err(_) => ExitOutcome::Killed,
    };
    shared.exit.send_replace(Some(outcome));
    // Its stdout usually ends with it, and the reader closes the connection
    // once it has read what is left. Close here only when the reader has
    // drained the pipe and still waits on it: a process the peer left
    // behind holds it open.
    let mut seen = shared.lines_read.load(Ordering::Acquire);
    loop {
        tokio::select! {
            () = stdout_done.cancelled() => return,
            () = shared.closed.cancelled() => return,
            () = tokio::time::sleep(Duration::from_millis(50)) => {}
        }
        let now = shared.lines_read.load(Ordering::Acquire);
        if now == seen && shared.reader_waiting.load(Ordering::Acquire) {
            shared.close(format!(
                "the peer {outcome}, though something it left behind still holds its standard \
                 output open"
            ));
            return;
        }
        seen = now;
    }
}

#[cfg(test)]
mod tests;
