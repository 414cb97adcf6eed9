//! What the authority tests share: scoped sandboxes with their own
//! wrappers, the client making one call, a host writing an audit log and
//! its shutdown checked, and a guard the test controls.

use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gangway::ipc::{AuditLog, CallInfo, Decision, SandboxEnv, Scope, ShutdownReport};

use super::{GANGWAY_CLIENT, Host, Style, run, text};

/// A scope's sandbox: its environment, with its own wrappers (only its
/// commands) first on `PATH`.
pub struct Scoped {
    pub env: SandboxEnv,
    _wrappers: tempfile::TempDir,
}

/// Issues `scope` on `host` and writes wrappers for its commands alone.
pub fn scoped(host: &Host, scope: Scope) -> Scoped {
    let server = host.server.as_ref().unwrap();
    let id = scope.id().to_owned();
    let env = server.scope(scope);
    let wrappers = tempfile::tempdir().unwrap();
    let manifest = server.manifest_for(&id).expect("the scope is live");
    gangway_codegen::write_wrappers_with(&manifest, wrappers.path(), &host.style.wrapper_style())
        .unwrap();
    Scoped {
        env: env.with_wrapper_dir(Some(wrappers.path().to_path_buf())),
        _wrappers: wrappers,
    }
}

/// The in-sandbox client making one call with `env`'s token.
pub fn client(env: &SandboxEnv, words: &[&str]) -> Command {
    let mut command = Command::new(GANGWAY_CLIENT);
    command.args(words);
    env.apply(&mut command);
    command
}

/// Runs `words` with the client and gives its exit code and stderr.
pub fn call(env: &SandboxEnv, words: &[&str]) -> (Option<i32>, String) {
    let output = run(client(env, words), None);
    (output.status.code(), text(&output.stderr))
}

/// A host writing its audit log to a file in a directory of its own.
pub fn audited(builder: gangway::ipc::IpcServerBuilder, style: Style) -> (Host, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::jsonl(dir.path().join("audit.jsonl")).unwrap();
    (Host::start_with_styled(builder.audit(log), style), dir)
}

/// Shuts `host`'s server down, its calls given `grace`, and checks the
/// audit counts it reports: `errors` records the sink failed to keep, and
/// `unwritten` it had not written by then. The report, for the rest.
pub fn shut_down(host: &mut Host, grace: Duration, errors: u64, unwritten: u64) -> ShutdownReport {
    let server = host.server.take().unwrap();
    let report = host.runtime.block_on(server.shutdown(grace));
    assert_eq!(
        (report.audit_errors, report.audit_unwritten),
        (errors, unwritten),
        "{report:?}"
    );
    report
}

/// Shuts the host down (every record written) and reads its audit log.
pub fn records(mut host: Host, dir: &tempfile::TempDir) -> (Vec<serde_json::Value>, Vec<u8>) {
    shut_down(&mut host, Duration::from_secs(5), 0, 0);
    let bytes = std::fs::read(dir.path().join("audit.jsonl")).unwrap();
    let records = text(&bytes)
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect();
    (records, bytes)
}

/// Whether `needle` occurs in `haystack`, byte for byte.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// A guard that refuses `upper`, holds `counter` until the test releases
/// it, allows the rest, and keeps every call it saw.
pub struct Gatekeeper {
    pub waiting: Arc<AtomicU64>,
    /// Waits given up before an answer (the call was cancelled).
    pub given_up: Arc<AtomicU64>,
    pub release: Arc<tokio::sync::Semaphore>,
    pub seen: Arc<Mutex<Vec<CallInfo>>>,
}

impl Gatekeeper {
    pub fn new() -> Self {
        Gatekeeper {
            waiting: Arc::new(AtomicU64::new(0)),
            given_up: Arc::new(AtomicU64::new(0)),
            release: Arc::new(tokio::sync::Semaphore::new(0)),
            seen: Arc::default(),
        }
    }

    pub fn guard(&self) -> impl gangway::ipc::CallGuard {
        let waiting = self.waiting.clone();
        let given_up = self.given_up.clone();
        let release = self.release.clone();
        let seen = self.seen.clone();
        move |call: &CallInfo| {
            seen.lock().unwrap().push(call.clone());
            let command = call.command().to_owned();
            let waiting = waiting.clone();
            let given_up = given_up.clone();
            let release = release.clone();
            async move {
                match command.as_str() {
                    "upper" => Decision::deny("upper is switched off on this host; use echoargs"),
                    "counter" => {
                        waiting.fetch_add(1, Ordering::SeqCst);
                        let mut wait = GivenUp(Some(given_up));
                        let acquired = release.acquire().await;
                        wait.0 = None;
                        match acquired {
                            Ok(permit) => permit.forget(),
                            Err(_) => return Decision::deny("the approver left"),
                        }
                        Decision::Allow
                    }
                    _ => Decision::Allow,
                }
            }
        }
    }
}

/// Counts a guard's wait dropped before its answer came.
struct GivenUp(Option<Arc<AtomicU64>>);

impl Drop for GivenUp {
    fn drop(&mut self) {
        if let Some(count) = self.0.take() {
            count.fetch_add(1, Ordering::SeqCst);
        }
    }
}
