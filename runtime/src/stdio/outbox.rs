//! Where outgoing lines go: the writer task's two lanes (the bounded queue
//! for requests and notifications, the lane that never waits for
//! responses), and where a call's request stands in the queue.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

/// Where outgoing lines go.
pub(super) enum Outbox {
    /// To the writer task: requests and notifications through the bounded
    /// queue (taken away to close the peer's stdin), responses and cancel
    /// notices through the lane that never waits (capped in bytes).
    Pipe {
        queue: Mutex<Option<mpsc::Sender<Queued>>>,
        urgent: mpsc::UnboundedSender<Vec<u8>>,
    },
    /// To a test, one message per string, without the newline.
    #[cfg(any(test, feature = "test-util"))]
    Testing(mpsc::UnboundedSender<String>),
}

/// A request or notification waiting to be written.
pub(super) struct Queued {
    pub(super) line: Vec<u8>,
    /// For a request: whether it was written or given up on first.
    pub(super) call: Option<Arc<CallState>>,
}

/// Where a call's request stands: queued, written, or given up on before
/// it was written (then it never is).
pub(super) struct CallState(AtomicU8);

impl CallState {
    const QUEUED: u8 = 0;
    const WRITTEN: u8 = 1;
    const ABANDONED: u8 = 2;

    pub(super) fn new() -> Arc<Self> {
        Arc::new(CallState(AtomicU8::new(Self::QUEUED)))
    }

    /// The writer's claim: false when the call was given up on.
    pub(super) fn mark_written(&self) -> bool {
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
    pub(super) fn abandon(&self) -> bool {
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
