//! A connection's calls: the list of those running (where their input and
//! cancels go), each call's place in it, and the audit record each call
//! writes once, however it ends.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::mpsc;

use super::auditor::call_record;
use super::call_io::ServedCall;
use super::grants::Grant;
use super::outbox::{Control, answer_body};
use super::state::ServerState;
use crate::ipc::authority::audit::{AuditOutcome, AuditRecord};
use crate::ipc::call::cancel::CancelReason;
use crate::ipc::error::kind::ErrorKind;
use crate::ipc::exit;
use crate::ipc::protocol::{Request, Response, WireError};
use crate::sync::LockUnpoisoned;

/// The calls running on a connection, by id: where their input, and a
/// cancel, go.
pub(super) type Calls = Arc<CallList>;

/// The calls of a connection, and a signal for when the last one ends.
#[derive(Default)]
pub(super) struct CallList {
    by_id: Mutex<HashMap<u64, ServedCall>>,
    pub(super) emptied: tokio::sync::Notify,
    /// A call was answered with a request for its whole standard input,
    /// and the caller has not called again since: it is reading its input
    /// (`slow | command`), and the connection is not idle.
    pub(super) awaiting_stdin: AtomicBool,
}

impl CallList {
    pub(super) fn lock_unpoisoned(&self) -> std::sync::MutexGuard<'_, HashMap<u64, ServedCall>> {
        self.by_id.lock_unpoisoned()
    }
}

/// Takes a call off the connection's list when it ends.
pub(super) struct Registered {
    pub(super) calls: Calls,
    pub(super) id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut calls = self.calls.lock_unpoisoned();
        calls.remove(&self.id);
        if calls.is_empty() {
            self.calls.emptied.notify_waiters();
        }
    }
}

/// A call read from the connection, with what records it and its place in
/// the connection's list of calls.
pub(super) struct Admitted {
    pub(super) request: Request,
    pub(super) call: CallRecorder,
    pub(super) _registered: Registered,
}

/// Writes a call's audit record, once: as it ended, or, if it is dropped
/// unrecorded (its connection or the server stopped first), as cancelled.
pub(super) struct CallRecorder {
    pub(super) shared: Arc<ServerState>,
    pub(super) method: String,
    pub(super) served: ServedCall,
    /// When it was read.
    pub(super) read_at: Instant,
    /// The size of its frame.
    pub(super) frame_len: usize,
    pub(super) recorded: bool,
}

impl CallRecorder {
    /// Records the call as ended with `outcome` (and `exit`, when an answer
    /// of `answer_len` bytes goes out), waiting for room in the audit queue.
    pub(super) async fn record(
        &mut self,
        outcome: AuditOutcome,
        exit: Option<i32>,
        answer_len: usize,
    ) {
        if self.recorded {
            return;
        }
        if let Some(auditor) = &self.shared.auditor {
            let record = self.build(outcome, exit, answer_len);
            // Cancel-safe: dropped while waiting, the record was not queued,
            // and `drop` records it.
            auditor.record(record, &self.shared.hard).await;
        }
        self.recorded = true;
    }

    fn build(&self, outcome: AuditOutcome, exit: Option<i32>, answer_len: usize) -> AuditRecord {
        call_record(
            &self.method,
            &self.served,
            outcome,
            exit,
            self.read_at,
            self.frame_len,
            answer_len,
        )
    }

    /// How a call that ends unanswered ended: denied if its scope lapsed
    /// (revoked or expired), else cancelled.
    pub(super) fn unanswered(&self) -> AuditOutcome {
        match self.served.context.cancel_reason() {
            Some(CancelReason::Revoked | CancelReason::Expired) => AuditOutcome::Denied,
            _ => AuditOutcome::Cancelled,
        }
    }
}

impl Drop for CallRecorder {
    fn drop(&mut self) {
        if self.recorded {
            return;
        }
        let Some(auditor) = &self.shared.auditor else {
            return;
        };
        let record = self.build(self.unanswered(), None, 0);
        // Queued at once if there is room; else by a task that waits for
        // it (counted lost where no task can run).
        let Err(record) = auditor.try_queue(record) else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(_) => {
                let shared = self.shared.clone();
                self.shared.tracker.spawn(async move {
                    if let Some(auditor) = &shared.auditor {
                        auditor.record(record, &shared.hard).await;
                    }
                });
            }
            Err(_) => auditor.try_record(record),
        }
    }
}

/// Why a call read as the server began shutting down was not started.
const SHUTTING_DOWN: &str = "the host is shutting down; the call was not started";

/// Answers a call read but not started, as the server began shutting down
/// or the caller's access lapsed, that it did not start, and records it.
pub(super) async fn not_started(
    control: &mpsc::UnboundedSender<Control>,
    mut call: Admitted,
    grant: &Grant,
) {
    let (error, outcome) = match grant.lapse() {
        Some(lapse) => (lapse.error(), AuditOutcome::Denied),
        None => (
            WireError::server(ErrorKind::Busy, SHUTTING_DOWN, exit::UNAVAILABLE),
            AuditOutcome::Error,
        ),
    };
    let exit = error.exit;
    let body = answer_body(Response::failure(call.request.id, error));
    call.call.record(outcome, Some(exit), body.len()).await;
    let _ = control.send(Control::Frame(body));
}
