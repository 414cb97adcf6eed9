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

// Where each part lives (a maintainer's map):
// - `mod.rs`: `StdioTransport`, the public API;
// - `builder.rs`: `StdioBuilder`'s options; `spawn.rs`: starting the peer
//   and the tasks from them;
// - `handler.rs`: the handler types and `IncomingRequest`;
// - `state.rs`: what the handle and the tasks share, and closing;
// - `outbox.rs` and `outgoing.rs`: sending to the peer; `incoming.rs`:
//   what it sends;
// - `wire.rs`: the JSON-RPC messages, ids and error objects;
// - the tasks: `writer.rs`, `reader.rs` (with `lines.rs`), `stderr.rs`,
//   `watcher.rs` (the exit watcher; `process.rs` says how it ended);
// - `error.rs`: `RpcError` and `ResponseError`;
// - `testing.rs`: the test hooks (feature `test-util`).

mod builder;
mod error;
mod handler;
mod incoming;
mod lines;
mod outbox;
mod outgoing;
mod process;
mod reader;
mod spawn;
mod state;
mod stderr;
#[cfg(any(test, feature = "test-util"))]
mod testing;
mod watcher;
mod wire;
mod writer;

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::Value;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::oneshot;

use crate::sync::LockUnpoisoned;
pub use builder::{CancelNotice, StdioBuilder};
pub use error::{ResponseError, RpcError};
use handler::RequestHandler;
pub use handler::{HandlerError, IncomingRequest, NotificationHandler, RequestFuture, SERVER_BUSY};
use outbox::CallState;
pub use process::ExitOutcome;
use state::{PendingCall, TransportState};

/// A JSON-RPC 2.0 connection to a peer process over its standard input and
/// output. See the [module](self) for what it guarantees.
///
/// The child process (its whole process group, when it leads one) is
/// killed when the transport is dropped.
pub struct StdioTransport {
    shared: Arc<TransportState>,
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

    /// Sets the handler for incoming notifications, and for requests while
    /// no [request handler](StdioTransport::set_request_handler) is set.
    /// Replaces the previous one. A handler that needs the transport (to
    /// [`respond`](StdioTransport::respond)) should hold a
    /// [`Weak`](std::sync::Weak) to it: a strong one makes a cycle, and the
    /// transport, never dropped, never kills its peer.
    pub fn set_notification_handler(&self, handler: NotificationHandler) {
        *self.shared.notification_handler.lock_unpoisoned() = Some(handler);
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
        *self.shared.request_handler.lock_unpoisoned() = Some(handler);
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
        let line = shared.request_line(Some(id), method, &params)?;
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
        let line = self.shared.request_line(None, method, &params)?;
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
        self.shared.stderr.lock_unpoisoned().text()
    }

    /// Ends the conversation: closes the peer's stdin (after what is
    /// queued), waits for it to exit until `deadline`, then kills its
    /// process group; then fails whatever calls still wait. Returns how it
    /// ended; calling it again returns the same.
    pub async fn shutdown(&self, deadline: Duration) -> ExitOutcome {
        let shared = &self.shared;
        // The writer closes stdin once the queue drains.
        shared.close_queue();
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

#[cfg(test)]
mod tests;
