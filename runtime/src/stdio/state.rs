//! The state a transport's handle and its tasks share: the calls waiting
//! for a response, the handlers, the limits, the tail of the peer's
//! stderr, how the process ended; and closing the connection, which fails
//! every waiting call at once.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::{Semaphore, oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::builder::StdioBuilder;
use super::error::RpcError;
use super::handler::{NotificationHandler, RequestHandler};
use super::outbox::{CallState, Outbox};
use super::process::ExitOutcome;
use crate::sync::LockUnpoisoned;

/// The calls waiting for a response, by id.
pub(super) struct Pending {
    pub(super) calls: HashMap<i64, oneshot::Sender<Result<Value, RpcError>>>,
    /// Set once the connection is gone: why.
    pub(super) closed: Option<String>,
}

pub(super) struct TransportState {
    pub(super) options: StdioBuilder,
    pub(super) outbox: Outbox,
    pending: Mutex<Pending>,
    pub(super) next_id: AtomicI64,
    pub(super) notification_handler: Mutex<Option<NotificationHandler>>,
    pub(super) request_handler: Mutex<Option<RequestHandler>>,
    /// Peer requests admitted (running or waiting to run).
    pub(super) requests_admitted: Arc<Semaphore>,
    pub(super) requests_running: Arc<Semaphore>,
    /// Bytes in the lane that never waits, not yet written.
    pub(super) urgent_bytes: AtomicUsize,
    /// Lines read from stdout, and whether the reader now waits for more:
    /// how the exit watcher tells a reader still draining from one left
    /// waiting on a pipe someone else holds open.
    pub(super) lines_read: AtomicU64,
    pub(super) reader_waiting: AtomicBool,
    /// Fires once the connection is gone.
    pub(super) closed: CancellationToken,
    pub(super) stderr: Mutex<StderrTail>,
    pub(super) pid: Option<u32>,
    /// How the process ended, once it has.
    pub(super) exit: watch::Sender<Option<ExitOutcome>>,
    /// Kill the process now.
    pub(super) kill: CancellationToken,
}

impl TransportState {
    pub(super) fn new(options: StdioBuilder, outbox: Outbox, pid: Option<u32>) -> Self {
        let running = options.max_concurrent_requests;
        let tail = options.stderr_tail;
        TransportState {
            options,
            outbox,
            pending: Mutex::new(Pending {
                calls: HashMap::new(),
                closed: None,
            }),
            next_id: AtomicI64::new(1),
            notification_handler: Mutex::new(None),
            request_handler: Mutex::new(None),
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

    pub(super) fn lock_pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock_unpoisoned()
    }

    pub(super) fn closed_error(&self, reason: &str) -> RpcError {
        RpcError::Closed {
            reason: reason.to_owned(),
            stderr: self.stderr.lock_unpoisoned().text(),
        }
    }

    /// Marks the connection gone and fails every waiting call, at once.
    pub(super) fn close(&self, reason: String) {
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
    pub(super) fn check_open(&self) -> Result<(), RpcError> {
        match &self.lock_pending().closed {
            Some(reason) => Err(self.closed_error(reason)),
            None => Ok(()),
        }
    }

    pub(super) fn writer_gone(&self) -> RpcError {
        match &self.lock_pending().closed {
            Some(reason) => self.closed_error(reason),
            None => self.closed_error("the peer stopped reading its standard input"),
        }
    }
}

/// Frees a call's slot when it ends or is given up on. A call given up on
/// before its request was written is never written; one given up on after
/// gets the peer told, if so configured.
pub(super) struct PendingCall<'a> {
    pub(super) shared: &'a TransportState,
    pub(super) id: i64,
    pub(super) method: &'a str,
    pub(super) state: Arc<CallState>,
    pub(super) timed_out: bool,
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

/// The last bytes of the peer's stderr.
pub(super) struct StderrTail {
    bytes: VecDeque<u8>,
    max: usize,
}

impl StderrTail {
    pub(super) fn new(max: usize) -> Self {
        StderrTail {
            bytes: VecDeque::new(),
            max,
        }
    }

    pub(super) fn push(&mut self, chunk: &[u8]) {
        let chunk = &chunk[chunk.len().saturating_sub(self.max)..];
        let overflow = (self.bytes.len() + chunk.len()).saturating_sub(self.max);
        self.bytes.drain(..overflow);
        self.bytes.extend(chunk);
    }

    pub(super) fn text(&self) -> String {
        let (front, back) = self.bytes.as_slices();
        String::from_utf8_lossy(&[front, back].concat()).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stderr_tail_keeps_the_last_bytes() {
        let mut tail = StderrTail::new(8);
        tail.push(b"hello ");
        tail.push(b"world\n");
        assert_eq!(tail.text(), "o world\n");
        tail.push(b"a much longer line than the tail\n");
        assert_eq!(tail.text(), "he tail\n");
    }
}
