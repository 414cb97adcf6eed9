//! Feeding the audit sink: records go through a bounded queue to a thread
//! of the sink's own, so a slow disk slows the answering of calls (each
//! answer waits for room in the queue) and loses nothing, and a failing
//! sink is reported once per failure and counted while calls go on.

use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::call_io::ServedCall;
use crate::ipc::authority::audit::{AuditOutcome, AuditRecord, AuditSink};
use crate::ipc::authority::scrub::{KnownSecrets, Scrubber};

/// How many records may wait for the sink.
const QUEUE: usize = 1024;

/// How many records the sink takes between flushes under steady load.
const FLUSH_EVERY: u64 = 256;

/// The server's end of the audit queue.
pub(crate) struct Auditor {
    queue: mpsc::Sender<Message>,
    lost: Arc<AtomicU64>,
    /// Records queued, and records the sink's thread has dealt with
    /// (written or failed): what is left between them at shutdown was not
    /// written by its deadline.
    queued: AtomicU64,
    handled: Arc<AtomicU64>,
    /// Whether losing records at this end (the sink's thread gone, the
    /// queue full for a record that may not wait) was reported.
    reported: AtomicBool,
}

enum Message {
    Record(Box<AuditRecord>),
    /// Write out everything queued before this, then say so.
    Flush(oneshot::Sender<()>),
}

impl Auditor {
    /// Starts the sink's thread, which takes every one of `secrets` out
    /// of the records before they reach the sink.
    pub(crate) fn start(
        sink: Box<dyn AuditSink>,
        secrets: Option<Arc<dyn KnownSecrets>>,
    ) -> io::Result<Auditor> {
        let (queue, records) = mpsc::channel(QUEUE);
        let lost = Arc::new(AtomicU64::new(0));
        let handled = Arc::new(AtomicU64::new(0));
        let (counted, dealt_with) = (lost.clone(), handled.clone());
        std::thread::Builder::new()
            .name("gangway-audit".into())
            .spawn(move || {
                let scrubber = secrets.map(Scrubber::new);
                write_records(sink, scrubber, records, &counted, &dealt_with);
            })?;
        Ok(Auditor {
            queue,
            lost,
            queued: AtomicU64::new(0),
            handled,
            reported: AtomicBool::new(false),
        })
    }

    /// Queues a record, waiting while the queue is full, unless the server
    /// stops everything first (`hard`): then the record is counted lost.
    pub(crate) async fn record(
        &self,
        record: impl Into<Box<AuditRecord>>,
        hard: &CancellationToken,
    ) {
        let sent = tokio::select! {
            biased;
            sent = self.queue.send(Message::Record(record.into())) => sent.is_ok(),
            () = hard.cancelled() => false,
        };
        if sent {
            self.queued_one();
        } else {
            self.lose(1, "the server stopped before the audit sink took them");
        }
    }

    /// Queues a record if there is room now; hands it back if not.
    pub(super) fn try_queue(&self, record: AuditRecord) -> Result<(), Box<AuditRecord>> {
        self.try_queue_boxed(Box::new(record))
    }

    fn try_queue_boxed(&self, record: Box<AuditRecord>) -> Result<(), Box<AuditRecord>> {
        match self.queue.try_send(Message::Record(record)) {
            Ok(()) => {
                self.queued_one();
                Ok(())
            }
            Err(mpsc::error::TrySendError::Full(Message::Record(record))) => Err(record),
            Err(_) => {
                self.lose(1, "the audit sink's thread is gone");
                Ok(())
            }
        }
    }

    fn queued_one(&self) {
        self.queued.fetch_add(1, Ordering::Relaxed);
        // A loss after this one is a new episode, reported again.
        if self.reported.load(Ordering::Relaxed) {
            self.reported.store(false, Ordering::Relaxed);
        }
    }

    /// Queues a record that may not wait (a connection refused at its
    /// hello: anyone who can connect may send those); with the queue full,
    /// it is counted lost.
    pub(super) fn try_record(&self, record: impl Into<Box<AuditRecord>>) {
        if self.try_queue_boxed(record.into()).is_err() {
            self.lose(1, "the audit queue was full");
        }
    }

    /// Counts records lost before reaching the sink, reporting it once.
    fn lose(&self, records: u64, why: &str) {
        self.lost.fetch_add(records, Ordering::Relaxed);
        if !self.reported.swap(true, Ordering::Relaxed) {
            tracing::error!(target: "gangway::audit", "audit records were lost: {why}");
        }
    }

    /// Waits until every record queued so far is written and flushed, at
    /// most `deadline`; gives how many were not by then (the sink's thread
    /// goes on with them).
    pub(crate) async fn flush(&self, deadline: Duration) -> u64 {
        let (done, written) = oneshot::channel();
        let flushed = tokio::time::timeout(deadline, async {
            if self.queue.send(Message::Flush(done)).await.is_ok() {
                let _ = written.await;
            }
        })
        .await;
        if flushed.is_ok() {
            return 0;
        }
        let queued = self.queued.load(Ordering::Relaxed);
        let unwritten = queued.saturating_sub(self.handled.load(Ordering::Relaxed));
        tracing::error!(
            target: "gangway::audit",
            "{unwritten} audit records were not written by the shutdown deadline"
        );
        unwritten
    }

    /// How many records the sink failed to keep.
    pub(super) fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }
}

/// The sink's thread: writes records as they come, flushing whenever the
/// queue runs empty, until the server is gone.
fn write_records(
    mut sink: Box<dyn AuditSink>,
    mut scrubber: Option<Scrubber>,
    mut records: mpsc::Receiver<Message>,
    lost: &AtomicU64,
    handled: &AtomicU64,
) {
    let mut health = Health::default();
    // Records taken since the last flush: lost too if it fails.
    let mut unflushed = 0;
    while let Some(first) = records.blocking_recv() {
        let mut next = Some(first);
        while let Some(message) = next.take().or_else(|| records.try_recv().ok()) {
            match message {
                Message::Record(record) => {
                    // Scrubbed and fitted here, off the calls' path; scrubbed
                    // first, so a cap cannot leave part of a token.
                    let mut record = *record;
                    if let Some(scrubber) = &mut scrubber {
                        scrubber.scrub(&mut record);
                    }
                    let record = crate::ipc::authority::audit_caps::fitted(record);
                    match guarded(|| sink.record(&record)) {
                        Ok(()) => unflushed += 1,
                        Err(error) => health.failed(&error, 1, lost),
                    }
                    handled.fetch_add(1, Ordering::Relaxed);
                    if unflushed >= FLUSH_EVERY {
                        flush(&mut *sink, &mut unflushed, &mut health, lost);
                    }
                }
                Message::Flush(done) => {
                    flush(&mut *sink, &mut unflushed, &mut health, lost);
                    let _ = done.send(());
                }
            }
        }
        // The queue ran empty.
        flush(&mut *sink, &mut unflushed, &mut health, lost);
    }
}

/// Flushes the sink, accounting for the records taken since the last flush.
fn flush(sink: &mut dyn AuditSink, unflushed: &mut u64, health: &mut Health, lost: &AtomicU64) {
    match guarded(|| sink.flush()) {
        Ok(()) => health.recovered(*unflushed),
        Err(error) => health.failed(&error, *unflushed, lost),
    }
    *unflushed = 0;
}

/// Runs a sink's method, a panic in it turned into an error: a sink that
/// panics fails its record, and the thread goes on.
fn guarded(call: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
    catch_unwind(AssertUnwindSafe(call))
        .unwrap_or_else(|_| Err(io::Error::other("the audit sink panicked")))
}

/// Whether the sink is failing, so each failure is reported once.
#[derive(Default)]
struct Health {
    failing: bool,
}

impl Health {
    fn failed(&mut self, error: &io::Error, records: u64, lost: &AtomicU64) {
        lost.fetch_add(records, Ordering::Relaxed);
        if !self.failing {
            self.failing = true;
            tracing::error!(
                target: "gangway::audit",
                "the audit sink failed: {error}; calls go on, and their records are lost until it recovers"
            );
        }
    }

    fn recovered(&mut self, written: u64) {
        if self.failing && written > 0 {
            self.failing = false;
            tracing::warn!(target: "gangway::audit", "the audit sink works again");
        }
    }
}

/// The record of a call that ended with `outcome` (and `exit`, when an
/// answer of `answer_len` bytes went out), from what its context saw.
pub(super) fn call_record(
    method: &str,
    served: &ServedCall,
    outcome: AuditOutcome,
    exit: Option<i32>,
    read_at: Instant,
    frame_len: usize,
    answer_len: usize,
) -> AuditRecord {
    let admission = served.context.admission();
    let seen = admission
        .map(|admission| admission.seen())
        .unwrap_or_default();
    let peer = admission.and_then(|admission| admission.peer());
    let (streamed_in, streamed_out) = served.io.traffic();
    AuditRecord {
        ts: SystemTime::now(),
        scope: admission
            .and_then(|admission| admission.scope())
            .map(str::to_owned),
        pid: peer.and_then(|peer| peer.pid),
        uid: peer.map(|peer| peer.uid),
        command: Some(method.to_owned()),
        args: seen.args,
        decision: seen.decision,
        rule: seen.rule,
        approval: seen.approval,
        outcome,
        exit,
        duration: read_at.elapsed(),
        bytes_in: frame_len as u64 + streamed_in,
        bytes_out: answer_len as u64 + streamed_out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipc::authority::audit::tests::Capture;

    #[test]
    fn a_failing_sink_is_reported_once_per_failure_and_every_lost_record_counted() {
        let capture = Capture::default();
        let lost = AtomicU64::new(0);
        tracing::subscriber::with_default(capture.clone(), || {
            let mut health = Health::default();
            let full = io::Error::other("no space left on device");
            health.failed(&full, 1, &lost);
            health.failed(&full, 3, &lost);
            health.recovered(2);
            health.failed(&full, 1, &lost);
        });
        assert_eq!(lost.load(Ordering::Relaxed), 5);
        let events = capture.0.lock().unwrap();
        let failures = events
            .iter()
            .filter(|(target, fields)| {
                target == "gangway::audit" && fields.contains("no space left")
            })
            .count();
        assert_eq!(failures, 2, "{events:?}");
        assert!(
            events
                .iter()
                .any(|(_, fields)| fields.contains("works again"))
        );
    }
}
