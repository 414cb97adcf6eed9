//! What decides on an MCP server's calls and what records them: the same
//! [`CallGuard`] and [`AuditSink`] an [`IpcServer`](crate::ipc::IpcServer)
//! takes, so a call made over MCP is allowed, denied and audited as a call
//! over the socket is (its record's scope is `mcp`). A forwarding server's
//! calls are decided and recorded by its host.

use std::fmt;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use tokio_util::sync::CancellationToken;

use crate::ipc::{
    Admission, AuditOutcome, AuditRecord, AuditSink, Auditor, CallGuard, KnownSecrets,
};

/// The scope an MCP call's record names.
const MCP_SCOPE: &str = "mcp";

/// How long a server that stops serving waits for its audit records to be
/// written.
const FLUSH_DEADLINE: Duration = Duration::from_secs(5);

/// An audit sink given, until serving starts it.
type PendingSink = Arc<Mutex<Option<Box<dyn AuditSink>>>>;

/// A server's guard and audit log.
#[derive(Clone, Default)]
pub(super) struct Authority {
    guard: Option<Arc<dyn CallGuard>>,
    sink: Option<PendingSink>,
    auditor: Option<Arc<Auditor>>,
}

impl fmt::Debug for Authority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authority")
            .field("guard", &self.guard.is_some())
            .field("audit", &(self.sink.is_some() || self.auditor.is_some()))
            .finish()
    }
}

impl Authority {
    /// Sets the guard every call is decided by.
    pub(super) fn set_guard(&mut self, guard: Arc<dyn CallGuard>) {
        self.guard = Some(guard);
    }

    /// Sets the sink every call's record goes to, once serving starts.
    pub(super) fn set_sink(&mut self, sink: Box<dyn AuditSink>) {
        self.sink = Some(Arc::new(Mutex::new(Some(sink))));
    }

    /// Readies the audit log for serving: its thread started, once (the
    /// server's clones share it).
    ///
    /// # Errors
    ///
    /// A forwarding server given a guard or an audit log (its host decides
    /// and records); the audit thread not starting; a sink another server
    /// took.
    /// `secrets` (an HTTP bearer token) are kept out of the records.
    pub(super) fn start(&mut self, forwarding: bool, secrets: Vec<String>) -> io::Result<()> {
        if forwarding && (self.guard.is_some() || self.sink.is_some()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a forwarding MCP server's calls are decided and recorded by its host: give the \
                 guard and the audit log to the host's `IpcServer::builder()`",
            ));
        }
        let Some(pending) = self.sink.take() else {
            return Ok(());
        };
        let sink = pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "this MCP server's audit sink belongs to a server started before; give each \
                     server a sink of its own",
                )
            })?;
        let secrets: Option<Arc<dyn KnownSecrets>> =
            (!secrets.is_empty()).then(|| Arc::new(secrets) as Arc<dyn KnownSecrets>);
        self.auditor = Some(Arc::new(Auditor::start(sink, secrets)?));
        Ok(())
    }

    /// Waits until every record queued so far is written and flushed, at
    /// most [`FLUSH_DEADLINE`]; how many were not by then.
    pub(super) async fn flush(&self) -> u64 {
        match &self.auditor {
            Some(auditor) => auditor.flush(FLUSH_DEADLINE).await,
            None => 0,
        }
    }

    /// What a call's context carries to admit it: the guard, and whether
    /// its arguments are recorded; `None` when nothing decides or records.
    pub(super) fn admission(&self) -> Option<Arc<Admission>> {
        (self.guard.is_some() || self.auditor.is_some()).then(|| {
            Arc::new(Admission::new(
                Some(Arc::from(MCP_SCOPE)),
                None,
                // An MCP server's calls have no scope of their own to lapse.
                None,
                self.guard.clone(),
                self.auditor.is_some(),
            ))
        })
    }

    /// Records a call of `command` that ended with `outcome` (and `exit`),
    /// begun at `started`, as `admission` saw it.
    pub(super) async fn record(&self, call: Ended<'_>) {
        let Some(auditor) = &self.auditor else {
            return;
        };
        let seen = call
            .admission
            .map(|admission| admission.seen())
            .unwrap_or_default();
        let record = AuditRecord {
            ts: SystemTime::now(),
            scope: Some(MCP_SCOPE.to_owned()),
            pid: None,
            uid: None,
            command: Some(call.command.to_owned()),
            args: seen.args,
            decision: seen.decision,
            rule: seen.rule,
            approval: seen.approval,
            outcome: call.outcome,
            exit: call.exit,
            duration: call.started.elapsed(),
            bytes_in: call.bytes_in,
            bytes_out: call.bytes_out,
        };
        // Nothing stops an MCP server's auditor but the process.
        auditor.record(record, &CancellationToken::new()).await;
    }
}

/// How a call ended, for its record.
pub(super) struct Ended<'a> {
    pub(super) command: &'a str,
    pub(super) admission: Option<&'a Admission>,
    pub(super) outcome: AuditOutcome,
    pub(super) exit: Option<i32>,
    pub(super) started: Instant,
    pub(super) bytes_in: u64,
    pub(super) bytes_out: u64,
}
