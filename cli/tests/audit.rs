//! The audit log end to end: one record per call under load from 32
//! shells, outcomes matching what the shells saw, the calling client's pid,
//! secrets and tokens nowhere in the file or in error messages; a sink that
//! fails is counted and calls go on; a slow sink loses nothing (how it
//! holds the answers back, and each record's values, are `audit_values.rs`).

mod common;

use std::collections::BTreeMap;
use std::io;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::authority::{Gatekeeper, audited, client, contains, records, scoped, shut_down};
use common::process::{finish, spawn};
use common::{Host, Style};
use gangway::ipc::{AuditRecord, AuditSink, IpcClient, IpcServer, SandboxEnv, Scope};

/// The secret arguments the load test passes.
const SECRET_KEY: &str = "S3CRET-KEY-f00d";
const SECRET_PIN: &str = "S3CRET-PIN-beef";

/// How many shells the load test runs at once, and the rounds each runs.
const SHELLS: usize = 32;
const ROUNDS: usize = 20;
/// How long the whole load may take on a loaded machine.
const LOAD_PATIENCE: Duration = Duration::from_secs(600);

#[test]
#[ignore = "slow: 3,200 calls from 32 shells"]
fn every_call_under_load_has_one_record_and_no_secret_is_anywhere() {
    let gate = Gatekeeper::new();
    let (host, dir) = audited(IpcServer::builder().guard(gate.guard()), Style::Scripts);
    let server = host.server.as_ref().unwrap();
    let sandbox = scoped(&host, Scope::new("load"));
    let (seen, stderr) = run_load(&sandbox.env);
    assert_eq!(seen.values().sum::<usize>(), SHELLS * ROUNDS * 5);

    // One more call, straight from the test: its record names its pid.
    let direct = spawn(client(&sandbox.env, &["call", "ping"]));
    let pid = direct.id();
    assert_eq!(finish(direct).0, Some(0));

    let tokens = [
        host.env().token().to_owned(),
        sandbox.env.token().to_owned(),
    ];
    assert_eq!(server.audit_errors(), 0);
    let (records, bytes) = records(host, &dir);
    check_load_records(&records, &seen, pid);

    for secret in [SECRET_KEY, SECRET_PIN].iter().map(|s| s.as_bytes()) {
        assert!(!contains(&bytes, secret), "a secret is in the audit log");
        assert!(
            !contains(stderr.as_bytes(), secret),
            "a secret is in an error message: {stderr}"
        );
    }
    for token in &tokens {
        assert!(
            !contains(&bytes, token.as_bytes()),
            "a token is in the audit log"
        );
    }
    assert!(
        stderr.contains("`--pin`"),
        "the usage error names the argument: {stderr}"
    );
}

/// Runs the load: [`SHELLS`] shells at once in the sandbox of `env`, each
/// [`ROUNDS`] rounds of five outcomes, checking every exit code. Gives how
/// many of each outcome the shells saw, and all they wrote to stderr.
fn run_load(env: &SandboxEnv) -> (BTreeMap<String, usize>, String) {
    // Five outcomes a round: ok (a secret given), usage (a secret's value
    // that does not fit), handler_error, denied, unknown_command.
    let script = format!(
        r#"i=0
        while [ $i -lt {ROUNDS} ]; do
            login ada --key {SECRET_KEY} >/dev/null; echo "ok $?"
            login ada --key {SECRET_KEY} --pin {SECRET_PIN} >/dev/null; echo "usage $?"
            fail boom >/dev/null; echo "handler_error $?"
            upper --text hi >/dev/null; echo "denied $?"
            "$GANGWAY_BIN" call nosuch >/dev/null; echo "unknown_command $?"
            i=$((i + 1))
        done"#
    );
    let shells: Vec<_> = (0..SHELLS)
        .map(|_| {
            let mut command = Command::new("sh");
            command.args(["-c", &script]);
            env.apply(&mut command);
            spawn(command)
        })
        .collect();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut stderr = String::new();
    // One deadline for the whole load, not a minute per shell counted from
    // the same start: 32 shells share two loaded cores.
    let deadline = std::time::Instant::now() + LOAD_PATIENCE;
    for shell in shells {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let output = common::wait_output(shell, left);
        let (code, out, err) = (
            output.status.code(),
            common::text(&output.stdout),
            common::text(&output.stderr),
        );
        assert_eq!(code, Some(0), "{err}");
        for line in out.lines() {
            let (outcome, exit) = line.split_once(' ').unwrap();
            let expected = match outcome {
                "ok" => "0",
                "usage" | "unknown_command" => "2",
                "handler_error" => "1",
                _ => "77",
            };
            assert_eq!(exit, expected, "{outcome}: {err}");
            *seen.entry(outcome.to_owned()).or_default() += 1;
        }
        stderr.push_str(&err);
    }
    (seen, stderr)
}

/// Checks the load's audit records: one per call, with the outcomes the
/// shells `seen`, the direct `ping`'s `pid`, the secret redacted and the
/// denial's reason.
fn check_load_records(records: &[serde_json::Value], seen: &BTreeMap<String, usize>, pid: u32) {
    assert_eq!(records.len(), SHELLS * ROUNDS * 5 + 1);
    let mut recorded: BTreeMap<String, usize> = BTreeMap::new();
    for record in records {
        if record["command"] != "ping" {
            *recorded
                .entry(record["outcome"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
        assert_eq!(record["scope"], "load");
        assert_eq!(record["uid"], unsafe { libc::getuid() }, "the shells' user");
        assert!(record["duration_ms"].is_u64(), "{record}");
    }
    assert_eq!(
        &recorded, seen,
        "the records' outcomes are what the shells saw"
    );
    let ping = records.iter().find(|r| r["command"] == "ping").unwrap();
    assert_eq!(ping["pid"], pid, "the recorded pid is the calling client's");
    let login = records
        .iter()
        .find(|r| r["command"] == "login" && r["outcome"] == "ok")
        .unwrap();
    assert_eq!(login["args"]["key"], "<redacted>");
    assert_eq!(login["args"]["user"], "ada");
    assert_eq!(login["decision"], "allow");
    let denied = records.iter().find(|r| r["outcome"] == "denied").unwrap();
    assert_eq!(denied["decision"], "deny");
    assert_eq!(
        denied["reason"],
        "upper is switched off on this host; use echoargs"
    );
}

/// A sink that fails (or panics) while `failing` is set, counting what it
/// took.
struct Flaky {
    failing: Arc<Mutex<bool>>,
    panics: bool,
    taken: Arc<AtomicU64>,
}

impl AuditSink for Flaky {
    fn record(&mut self, _: &AuditRecord) -> io::Result<()> {
        if *self.failing.lock().unwrap() {
            assert!(!self.panics, "a sink with a bug");
            return Err(io::Error::other("no space left on device"));
        }
        self.taken.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[test]
fn a_failing_sink_is_counted_and_calls_go_on() {
    failing_sink(false);
}

#[test]
fn a_panicking_sink_is_counted_like_a_failing_one() {
    failing_sink(true);
}

fn failing_sink(panics: bool) {
    let failing = Arc::new(Mutex::new(true));
    let taken = Arc::new(AtomicU64::new(0));
    let sink = Flaky {
        failing: failing.clone(),
        panics,
        taken: taken.clone(),
    };
    let mut host = Host::start_with(IpcServer::builder().audit(sink));
    let env = host.env();
    let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    for _ in 0..5 {
        client.call_raw("ping", &[0x80]).unwrap();
    }
    let server = host.server.as_ref().unwrap();
    common::wait_until("the failures are counted", || server.audit_errors() == 5);
    *failing.lock().unwrap() = false;
    for _ in 0..3 {
        client.call_raw("ping", &[0x80]).unwrap();
    }
    drop(client);
    // The five lost records are in the report.
    let report = shut_down(&mut host, Duration::from_secs(5), 5, 0);
    assert_eq!(report.abandoned_calls, 0, "{report:?}");
    assert_eq!(taken.load(Ordering::SeqCst), 3, "the sink works again");
}

/// A sink that takes its time over each record.
struct Slow {
    records: Arc<Mutex<Vec<AuditRecord>>>,
}

impl AuditSink for Slow {
    fn record(&mut self, record: &AuditRecord) -> io::Result<()> {
        std::thread::sleep(Duration::from_micros(300));
        self.records.lock().unwrap().push(record.clone());
        Ok(())
    }
}

#[test]
fn a_slow_sink_loses_no_record_from_four_busy_connections() {
    const CALLS: usize = 3_000;
    let records = Arc::new(Mutex::new(Vec::new()));
    let mut host = Host::start_with(IpcServer::builder().audit(Slow {
        records: records.clone(),
    }));
    let env = host.env();
    // Four connections, each far more calls than the queue holds.
    let callers: Vec<_> = (0..4)
        .map(|_| {
            let env = env.clone();
            std::thread::spawn(move || {
                let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
                for _ in 0..CALLS / 4 {
                    client.call_raw("ping", &[0x80]).unwrap();
                }
            })
        })
        .collect();
    for caller in callers {
        caller.join().unwrap();
    }
    shut_down(&mut host, Duration::from_secs(30), 0, 0);
    let records = records.lock().unwrap();
    assert_eq!(records.len(), CALLS, "every call has its record");
    assert!(records.iter().all(|r| r.command.as_deref() == Some("ping")));
}
