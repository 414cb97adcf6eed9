//! The audit log: one [`AuditRecord`] per call a sandbox made (and per
//! connection refused at its hello), handed to an [`AuditSink`] when the
//! call ends. Built in: [`AuditLog::jsonl`], one JSON object per line in an
//! append-only file only its owner can read, and [`AuditLog::tracing`], a
//! `tracing` event per record.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use super::ruling::{ApprovalOutcome, Decision};

/// How a call ended, as its audit record says (`outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuditOutcome {
    /// The handler answered (help included): `ok`.
    Ok,
    /// The handler reported failure, or panicked: `handler_error`.
    HandlerError,
    /// The words or arguments did not fit the command: `usage`.
    Usage,
    /// The call was not allowed (scope, guard, expired or revoked access):
    /// `denied`.
    Denied,
    /// The caller interrupted the call or went away: `cancelled`.
    Cancelled,
    /// The call ran past its timeout: `timeout`.
    Timeout,
    /// No command has the name called: `unknown_command`.
    UnknownCommand,
    /// The host could not run or answer the call (its response too large
    /// or not encodable, the host shutting down): `error`.
    Error,
    /// A connection was turned away at its hello (a wrong, expired or
    /// revoked token): `refused`. Such a record has no command.
    Refused,
}

impl AuditOutcome {
    /// How a call answered with an error of `kind` ended.
    pub(crate) fn of_error(kind: &crate::ipc::ErrorKind) -> AuditOutcome {
        use crate::ipc::ErrorKind;
        match kind {
            ErrorKind::Handler | ErrorKind::Panicked => AuditOutcome::HandlerError,
            ErrorKind::Usage | ErrorKind::InvalidParams => AuditOutcome::Usage,
            ErrorKind::Denied => AuditOutcome::Denied,
            ErrorKind::Cancelled => AuditOutcome::Cancelled,
            ErrorKind::Timeout => AuditOutcome::Timeout,
            ErrorKind::UnknownMethod => AuditOutcome::UnknownCommand,
            _ => AuditOutcome::Error,
        }
    }

    /// The name in a record.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditOutcome::Ok => "ok",
            AuditOutcome::HandlerError => "handler_error",
            AuditOutcome::Usage => "usage",
            AuditOutcome::Denied => "denied",
            AuditOutcome::Cancelled => "cancelled",
            AuditOutcome::Timeout => "timeout",
            AuditOutcome::UnknownCommand => "unknown_command",
            AuditOutcome::Error => "error",
            AuditOutcome::Refused => "refused",
        }
    }
}

/// One call a sandbox made, or one connection refused at its hello.
///
/// As JSON (what [`AuditLog::jsonl`] writes, keys in this order): `ts`
/// (RFC 3339, UTC, milliseconds), `scope` (`null` for the full-access
/// token), `pid`, `uid` (`null` over TCP), `command`, `args` (the bound
/// arguments, secrets redacted; `null` when the call never bound), `decision`
/// (`"allow"`, `"deny"`, or `null` when no decision was reached, as for a
/// usage error), `reason` (a denial's), `rule` (only when the guard named
/// the rule that decided), `approval` (only when a person's answer
/// decided: `once`, `session`, `always` or `denied`), `outcome`, `exit` (the code the caller
/// exits with; `null` when no answer was sent), `duration_ms`, `bytes_in`,
/// `bytes_out`. Tokens never appear: a live token of the server's (or an MCP
/// server's bearer token) pasted into a command's name, its arguments or a
/// guard's reason is replaced with `<token>` before the record reaches its
/// sink. Every record reaches its sink with its
/// strings capped (what is kept, `…`, and the original length: `command` at
/// 256 bytes, `reason` at 512, `rule` at 128, each string of `args` at 200, each list or
/// map of `args` at 32 items, `args` as a whole at 2 KiB of JSON, past
/// which only its size is written), so one record stays under 4 KiB.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AuditRecord {
    /// When the call ended.
    pub ts: SystemTime,
    /// The caller's scope; `None` for the full-access token or an unknown
    /// one.
    pub scope: Option<String>,
    /// The calling process (over a Unix socket).
    pub pid: Option<i32>,
    /// The calling user (over a Unix socket).
    pub uid: Option<u32>,
    /// The command called; `None` for a refused hello.
    pub command: Option<String>,
    /// The bound arguments, secrets redacted.
    pub args: Option<Value>,
    /// Whether the call was allowed, and why not.
    pub decision: Option<Decision>,
    /// The rule that decided, when the guard named one (a
    /// [`Policy`](crate::policy::Policy)'s rule id); written only then.
    pub rule: Option<String>,
    /// What a person asked about the call answered, when one was (or an
    /// answer for the session decided); written only then.
    pub approval: Option<ApprovalOutcome>,
    /// How it ended.
    pub outcome: AuditOutcome,
    /// The exit code its answer gives the caller.
    pub exit: Option<i32>,
    /// From the call being read to its answer being queued.
    pub duration: Duration,
    /// Bytes received for the call: its request and its streamed input.
    pub bytes_in: u64,
    /// Bytes sent for the call: its streamed output and its answer.
    pub bytes_out: u64,
}

impl Serialize for AuditRecord {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("ts", &humantime::format_rfc3339_millis(self.ts).to_string())?;
        map.serialize_entry("scope", &self.scope)?;
        map.serialize_entry("pid", &self.pid)?;
        map.serialize_entry("uid", &self.uid)?;
        map.serialize_entry("command", &self.command)?;
        map.serialize_entry("args", &self.args)?;
        let (decision, reason) = match &self.decision {
            Some(Decision::Allow) => (Some("allow"), None),
            Some(Decision::Deny(reason)) => (Some("deny"), Some(reason.as_str())),
            None => (None, None),
        };
        map.serialize_entry("decision", &decision)?;
        if let Some(reason) = reason {
            map.serialize_entry("reason", reason)?;
        }
        if let Some(rule) = &self.rule {
            map.serialize_entry("rule", rule)?;
        }
        if let Some(approval) = self.approval {
            map.serialize_entry("approval", approval.as_str())?;
        }
        map.serialize_entry("outcome", self.outcome.as_str())?;
        map.serialize_entry("exit", &self.exit)?;
        map.serialize_entry(
            "duration_ms",
            &u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX),
        )?;
        map.serialize_entry("bytes_in", &self.bytes_in)?;
        map.serialize_entry("bytes_out", &self.bytes_out)?;
        map.end()
    }
}

/// Where audit records go
/// ([`IpcServerBuilder::audit`](crate::ipc::IpcServerBuilder::audit)).
///
/// The server hands records to the sink on a thread of its own, through a
/// bounded queue: a slow sink slows the answering of calls and loses
/// nothing. A sink that fails (`Err`) loses that record; the server reports
/// it through `tracing` and counts it in
/// [`IpcServer::audit_errors`](crate::ipc::IpcServer::audit_errors), and
/// calls go on.
pub trait AuditSink: Send + 'static {
    /// Takes one record.
    ///
    /// # Errors
    ///
    /// Why the record could not be kept.
    fn record(&mut self, record: &AuditRecord) -> io::Result<()>;

    /// Writes out the records taken so far (for a file: hands them to the
    /// operating system; gangway does not `fsync`); called when the queue
    /// runs empty, every 256 records under load, and at shutdown.
    ///
    /// # Errors
    ///
    /// Why they could not be.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The built-in audit sinks.
pub struct AuditLog {
    to: Destination,
}

enum Destination {
    Jsonl(BufWriter<File>),
    Tracing,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.to {
            Destination::Jsonl(_) => "AuditLog::jsonl",
            Destination::Tracing => "AuditLog::tracing",
        })
    }
}

impl AuditLog {
    /// Appends one JSON object per line to `path`, creating it with mode
    /// 0600 (only its owner may read what sandboxes asked for). An existing
    /// file is appended to, never truncated, and made 0600 if it was not.
    /// The path must name a regular file this user owns (or none): a
    /// symbolic link is not followed (someone who could place one would
    /// choose where the records go, or which file they grow), and a
    /// device, a FIFO or another user's file is refused.
    ///
    /// # Errors
    ///
    /// The error of opening the file, naming it; `InvalidInput` for a
    /// link, a file that is not regular, or one another user owns.
    pub fn jsonl(path: impl AsRef<Path>) -> io::Result<AuditLog> {
        let path = path.as_ref();
        let file = open_private_append(path).map_err(|error| {
            io::Error::new(
                error.kind(),
                format!("cannot open the audit log {}: {error}", path.display()),
            )
        })?;
        Ok(AuditLog {
            to: Destination::Jsonl(BufWriter::with_capacity(64 * 1024, file)),
        })
    }

    /// A `tracing` event per record, at level INFO under the target
    /// `gangway::audit`, its fields those of the JSON record (`args` as JSON
    /// text).
    pub fn tracing() -> AuditLog {
        AuditLog {
            to: Destination::Tracing,
        }
    }
}

impl AuditSink for AuditLog {
    fn record(&mut self, record: &AuditRecord) -> io::Result<()> {
        match &mut self.to {
            Destination::Jsonl(out) => {
                let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
                line.push(b'\n');
                out.write_all(&line)
            }
            Destination::Tracing => {
                let (decision, reason) = match &record.decision {
                    Some(Decision::Allow) => ("allow", ""),
                    Some(Decision::Deny(reason)) => ("deny", reason.as_str()),
                    None => ("", ""),
                };
                tracing::info!(
                    target: "gangway::audit",
                    ts = %humantime::format_rfc3339_millis(record.ts),
                    scope = record.scope.as_deref(),
                    pid = record.pid,
                    uid = record.uid,
                    command = record.command.as_deref(),
                    args = record.args.as_ref().map(|args| args.to_string()),
                    decision,
                    reason,
                    rule = record.rule.as_deref(),
                    approval = record.approval.map(ApprovalOutcome::as_str),
                    outcome = record.outcome.as_str(),
                    exit = record.exit,
                    duration_ms = u64::try_from(record.duration.as_millis()).unwrap_or(u64::MAX),
                    bytes_in = record.bytes_in,
                    bytes_out = record.bytes_out,
                    "call"
                );
                Ok(())
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.to {
            Destination::Jsonl(out) => out.flush(),
            Destination::Tracing => Ok(()),
        }
    }
}

/// Opens `path` for appending, creating it 0600: never through a link, only
/// a regular file of this user's, made 0600 if it was not.
fn open_private_append(path: &Path) -> io::Result<File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|error| match error.raw_os_error() {
            Some(libc::ELOOP) => io::Error::new(
                io::ErrorKind::InvalidInput,
                "it is a symbolic link, which an audit log is never opened through; name the \
                 file itself",
            ),
            // A directory; a FIFO without a reader.
            Some(libc::EISDIR | libc::ENXIO) => not_regular(),
            _ => error,
        })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    // SAFETY: `geteuid` cannot fail.
    let uid = unsafe { libc::geteuid() };
    if meta.uid() != uid {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "it is owned by uid {}, not this process's user (uid {uid}); give the host a file \
                 of its own",
                meta.uid()
            ),
        ));
    }
    // Another name for the same file (a hard link to the host's own
    // `.bashrc`, say) would have records appended there.
    if meta.nlink() > 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "it has {} hard links, and an audit log is a file of its own; name a new file",
                meta.nlink()
            ),
        ));
    }
    if meta.permissions().mode() & 0o777 != 0o600 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    // Non-blocking only to open a FIFO without hanging: the writes block.
    // SAFETY: `fcntl` on a descriptor this function owns.
    let blocking = unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        flags >= 0 && libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
    };
    if !blocking {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

fn not_regular() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "it is not a regular file; name a file (it is created if missing)",
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::{Arc, Mutex};

    use tracing::field::{Field, Visit};
    use tracing::span;

    use super::*;

    /// A `tracing` subscriber keeping each event's target and fields.
    #[derive(Clone, Default)]
    pub(crate) struct Capture(pub(crate) Arc<Mutex<Vec<(String, String)>>>);

    struct Fields(String);

    impl Visit for Fields {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            use std::fmt::Write as _;
            let _ = write!(self.0, "{}={value:?} ", field.name());
        }
    }

    impl tracing::Subscriber for Capture {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
            span::Id::from_u64(1)
        }
        fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
        fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
        fn event(&self, event: &tracing::Event<'_>) {
            let mut fields = Fields(String::new());
            event.record(&mut fields);
            let target = event.metadata().target().to_owned();
            self.0.lock().unwrap().push((target, fields.0));
        }
        fn enter(&self, _: &span::Id) {}
        fn exit(&self, _: &span::Id) {}
    }

    #[test]
    fn the_tracing_log_is_one_event_per_record_under_its_target() {
        let capture = Capture::default();
        tracing::subscriber::with_default(capture.clone(), || {
            let mut log = AuditLog::tracing();
            log.record(&record()).unwrap();
            log.flush().unwrap();
        });
        let events = capture.0.lock().unwrap();
        let [(target, fields)] = &events[..] else {
            panic!("{events:?}")
        };
        assert_eq!(target, "gangway::audit");
        for field in [
            "ts=2025-12-01T00:00:00.123Z",
            "scope=\"agent-1\"",
            "pid=42",
            "command=\"search\"",
            "args=\"{\\\"query\\\":\\\"rust\\\"}\"",
            "decision=\"deny\"",
            "reason=\"not now\"",
            "outcome=\"denied\"",
            "exit=77",
            "bytes_out=60",
        ] {
            assert!(fields.contains(field), "{field} in {fields}");
        }
    }

    fn record() -> AuditRecord {
        AuditRecord {
            ts: SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_547_200_123),
            scope: Some("agent-1".into()),
            pid: Some(42),
            uid: Some(1000),
            command: Some("search".into()),
            args: Some(serde_json::json!({"query": "rust"})),
            decision: Some(Decision::deny("not now")),
            rule: None,
            approval: None,
            outcome: AuditOutcome::Denied,
            exit: Some(77),
            duration: Duration::from_micros(2500),
            bytes_in: 40,
            bytes_out: 60,
        }
    }

    #[test]
    fn a_record_is_one_json_object_with_its_fields_in_order() {
        let text = serde_json::to_string(&record()).unwrap();
        assert_eq!(
            text,
            r#"{"ts":"2025-12-01T00:00:00.123Z","scope":"agent-1","pid":42,"uid":1000,"command":"search","args":{"query":"rust"},"decision":"deny","reason":"not now","outcome":"denied","exit":77,"duration_ms":2,"bytes_in":40,"bytes_out":60}"#
        );
    }

    #[test]
    fn the_jsonl_log_appends_to_a_file_only_its_owner_reads() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        for _ in 0..2 {
            let mut log = AuditLog::jsonl(&path).unwrap();
            log.record(&record()).unwrap();
            log.flush().unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let error = AuditLog::jsonl(dir.path().join("missing/audit.jsonl")).unwrap_err();
        assert!(error.to_string().contains("missing/audit.jsonl"), "{error}");
    }
}
