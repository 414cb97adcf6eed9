//! Who may call what, end to end: scopes (two bubblewrap sandboxes at
//! once, each seeing and calling only its own commands; expiry; revocation
//! mid-session), the call guard (a denial, a wait the test answers, Ctrl-C
//! during the wait, the call's timeout over the wait), and the audit log
//! (under load from 32 shells, with secrets and tokens nowhere in it).

mod common;

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::process::{finish, signal_client, spawn, wait_catching_signals};
use common::{GANGWAY_CLIENT, Host, Style, each_style, require, run, text, wait_until};
use gangway::ipc::{AuditLog, CallInfo, Decision, IpcServer, SandboxEnv, Scope};

/// A scope's sandbox: its environment, with its own wrappers (only its
/// commands) first on `PATH`.
struct Scoped {
    env: SandboxEnv,
    _wrappers: tempfile::TempDir,
}

/// Issues `scope` on `host` and writes wrappers for its commands alone.
fn scoped(host: &Host, scope: Scope) -> Scoped {
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
fn client(env: &SandboxEnv, words: &[&str]) -> Command {
    let mut command = Command::new(GANGWAY_CLIENT);
    command.args(words);
    env.apply(&mut command);
    command
}

/// Runs `words` with the client and gives its exit code and stderr.
fn call(env: &SandboxEnv, words: &[&str]) -> (Option<i32>, String) {
    let output = run(client(env, words), None);
    (output.status.code(), text(&output.stderr))
}

/// The names `gangway list` printed, one per line.
fn listed(output: &str) -> Vec<&str> {
    output
        .lines()
        .map(|line| line.split_whitespace().next().unwrap_or(""))
        .collect()
}

#[test]
#[ignore = "needs bwrap"]
fn two_sandboxes_at_once_each_see_and_call_only_their_own_commands() {
    require(&["bwrap"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        let a = scoped(
            &host,
            Scope::new("agent-a").commands(["search", "echoargs"]),
        );
        let b = scoped(&host, Scope::new("agent-b").commands(["upper", "counter"]));
        // What the sandbox lists, the wrappers it has, and a call of each
        // side's commands by the client (the other side has no wrapper).
        // Link wrappers put the client on `PATH` as `gangway`; script
        // wrappers name it in `GANGWAY_BIN`.
        let list = match style {
            Style::Links => "gangway list",
            Style::Scripts => "\"$GANGWAY_BIN\" list",
        };
        let script = format!(
            r#"
            {list}
            echo ---
            ls "${{PATH%%:*}}" | grep -vx gangway
            echo ---
            {list} --json | tr -d ' \n'
            echo
            echo ---
            "$GANGWAY_BIN" call search -- rust >/dev/null; echo "search=$?"
            "$GANGWAY_BIN" call upper -- --text rust >/dev/null; echo "upper=$?"
            "$GANGWAY_BIN" call counter >/dev/null; echo "counter=$?"
        "#
        );
        let start = |scoped: &Scoped| {
            spawn(gangway::ipc::Bwrap::new(&scoped.env).command("sh", ["-c", &script]))
        };
        // Both sandboxes run at once.
        let (child_a, child_b) = (start(&a), start(&b));
        let (code_a, out_a, err_a) = finish(child_a);
        let (code_b, out_b, err_b) = finish(child_b);
        for (code, out, err, mine) in [
            (code_a, &out_a, &err_a, ["echoargs", "search"]),
            (code_b, &out_b, &err_b, ["counter", "upper"]),
        ] {
            assert_eq!(code, Some(0), "{out}\n{err}");
            let parts: Vec<&str> = out.split("---\n").collect();
            assert_eq!(parts.len(), 4, "{out}");
            assert_eq!(listed(parts[0]), mine, "gangway list: {out}");
            assert_eq!(listed(parts[1]), mine, "the wrappers: {out}");
            let json: serde_json::Value = serde_json::from_str(parts[2].trim()).unwrap();
            let names: Vec<&str> = json["commands"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, mine, "gangway list --json");
            for command in ["search", "upper", "counter"] {
                let expected = if mine.contains(&command) { 0 } else { 77 };
                assert!(
                    parts[3].contains(&format!("{command}={expected}\n")),
                    "{command}: {out}\n{err}"
                );
                if expected == 77 {
                    let message = format!("{command}: not available in this sandbox");
                    assert!(err.contains(&message), "{err}");
                }
            }
        }
        // The full-access environment still reaches everything.
        for words in [
            &["call", "search", "--", "rust"][..],
            &["call", "upper", "--", "--text", "rust"],
            &["call", "counter"],
            &["call", "echoargs", "--", "rust"],
        ] {
            let (code, err) = call(&host.env(), words);
            assert_eq!(code, Some(0), "{words:?}: {err}");
        }
    });
}

/// A host writing its audit log to a file in a directory of its own.
fn audited(builder: gangway::ipc::IpcServerBuilder, style: Style) -> (Host, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let log = AuditLog::jsonl(dir.path().join("audit.jsonl")).unwrap();
    (Host::start_with_styled(builder.audit(log), style), dir)
}

/// Shuts the host down (every record written) and reads its audit log.
fn records(mut host: Host, dir: &tempfile::TempDir) -> (Vec<serde_json::Value>, Vec<u8>) {
    let server = host.server.take().unwrap();
    assert_eq!(server.audit_errors(), 0);
    host.runtime
        .block_on(server.shutdown(Duration::from_secs(5)));
    let bytes = std::fs::read(dir.path().join("audit.jsonl")).unwrap();
    let records = text(&bytes)
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect();
    (records, bytes)
}

#[test]
fn an_expired_scope_and_a_revoked_one_are_refused_and_revoking_cancels_running_calls() {
    let (host, dir) = audited(IpcServer::builder(), Style::Scripts);
    let server = host.server.as_ref().unwrap();
    let issued = Instant::now();
    let short = server.scope(
        Scope::new("short")
            .commands(["ping"])
            .expires_in(Duration::from_millis(300)),
    );
    let doomed = server.scope(Scope::new("doomed").commands(["ping", "linger"]));
    let kept = server.scope(Scope::new("kept").commands(["ping", "linger"]));
    assert_eq!(call(&short, &["call", "ping"]).0, Some(0));

    // A connection kept open across the revocation, and a call running.
    let mut session =
        gangway::ipc::IpcClient::connect_to(doomed.endpoint(), doomed.token()).unwrap();
    session.call_raw("ping", &[0x80]).unwrap();
    let running = spawn(client(&doomed, &["call", "linger"]));
    let unaffected = spawn(client(&kept, &["call", "linger"]));
    wait_until("both calls run", || {
        host.tally.waits_started.load(Ordering::SeqCst) == 2
    });

    std::thread::sleep(Duration::from_millis(300).saturating_sub(issued.elapsed()));
    let (code, err) = call(&short, &["call", "ping"]);
    assert_eq!(code, Some(77), "{err}");
    assert!(err.contains("this sandbox's access expired"), "{err}");

    assert!(server.revoke("doomed"));
    let (code, _, err) = finish(running);
    assert_eq!(code, Some(77), "{err}");
    assert!(err.contains("revoked"), "{err}");
    assert_eq!(host.tally.waits_revoked.load(Ordering::SeqCst), 1);
    let error = session.call_raw("ping", &[0x80]).unwrap_err();
    assert_eq!(error.exit_code(), 77, "{error}");
    let (code, err) = call(&doomed, &["call", "ping"]);
    assert_eq!(code, Some(77), "{err}");
    assert!(err.contains("this sandbox's access was revoked"), "{err}");
    assert!(!server.revoke("doomed"), "revoked once");
    assert!(!server.revoke("nobody"));

    // The other scope is untouched: its call still runs, its token works.
    assert_eq!(call(&kept, &["call", "ping"]).0, Some(0));
    let mut unaffected = unaffected;
    assert!(
        unaffected.try_wait().unwrap().is_none(),
        "kept's call runs on"
    );
    assert!(server.revoke("kept"));
    let (code, _, err) = finish(unaffected);
    assert_eq!(code, Some(77), "{err}");
    assert!(server.manifest_for("kept").is_none());

    let wrong = SandboxEnv::new(doomed.endpoint().clone(), "0".repeat(64));
    assert_eq!(call(&wrong, &["call", "ping"]).0, Some(69));

    drop(session);
    let tokens = [
        host.env().token().to_owned(),
        short.token().to_owned(),
        doomed.token().to_owned(),
        kept.token().to_owned(),
    ];
    let (records, bytes) = records(host, &dir);
    let refused: Vec<(Option<&str>, &str)> = records
        .iter()
        .filter(|r| r["outcome"] == "refused")
        .map(|r| (r["scope"].as_str(), r["reason"].as_str().unwrap()))
        .collect();
    assert!(
        refused.contains(&(
            Some("short"),
            "this sandbox's access expired; the host must issue a new scope"
        )),
        "{refused:?}"
    );
    assert!(
        refused
            .iter()
            .any(|(scope, reason)| *scope == Some("doomed") && reason.contains("revoked")),
        "{refused:?}"
    );
    assert!(
        refused
            .iter()
            .any(|(scope, reason)| scope.is_none() && reason.contains("token")),
        "{refused:?}"
    );
    let revoked_call = records
        .iter()
        .find(|r| r["scope"] == "doomed" && r["command"] == "linger")
        .expect("the revoked call's record");
    assert_eq!(revoked_call["outcome"], "denied");
    assert_eq!(revoked_call["exit"], 77);
    for token in &tokens {
        assert!(
            !contains(&bytes, token.as_bytes()),
            "a token is in the audit log"
        );
    }
}

/// Whether `needle` occurs in `haystack`, byte for byte.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// A guard that refuses `upper`, holds `counter` until the test releases
/// it, and allows the rest.
struct Gatekeeper {
    waiting: Arc<AtomicU64>,
    release: Arc<tokio::sync::Semaphore>,
}

impl Gatekeeper {
    fn new() -> Self {
        Gatekeeper {
            waiting: Arc::new(AtomicU64::new(0)),
            release: Arc::new(tokio::sync::Semaphore::new(0)),
        }
    }

    fn guard(&self) -> impl gangway::ipc::CallGuard {
        let waiting = self.waiting.clone();
        let release = self.release.clone();
        move |call: &CallInfo| {
            let command = call.command().to_owned();
            let waiting = waiting.clone();
            let release = release.clone();
            async move {
                match command.as_str() {
                    "upper" => Decision::deny("upper is switched off on this host; use echoargs"),
                    "counter" => {
                        waiting.fetch_add(1, Ordering::SeqCst);
                        match release.acquire().await {
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

#[test]
fn the_guard_denies_with_its_reason_waits_for_an_answer_and_yields_to_ctrl_c() {
    let gate = Gatekeeper::new();
    let host = Host::start_with(IpcServer::builder().guard(gate.guard()));
    let env = host.env();

    let (code, err) = call(&env, &["call", "upper", "--", "--text", "hi"]);
    assert_eq!(code, Some(77));
    assert_eq!(
        err,
        "upper: upper is switched off on this host; use echoargs\n"
    );
    assert_eq!(call(&env, &["call", "echoargs", "--", "x"]).0, Some(0));

    // A call waits while the guard does; the test's answer lets it run.
    let mut waiting = spawn(client(&env, &["call", "counter"]));
    wait_until("the guard waits", || {
        gate.waiting.load(Ordering::SeqCst) == 1
    });
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        waiting.try_wait().unwrap().is_none(),
        "the call waits for the guard"
    );
    assert_eq!(
        host.tally.counter.load(Ordering::SeqCst),
        0,
        "nothing ran yet"
    );
    gate.release.add_permits(1);
    let (code, _, err) = finish(waiting);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(host.tally.counter.load(Ordering::SeqCst), 1);

    // Ctrl-C while the guard waits: the call is cancelled, never run.
    let interrupted = spawn(client(&env, &["call", "counter"]));
    wait_until("the guard waits again", || {
        gate.waiting.load(Ordering::SeqCst) == 2
    });
    wait_catching_signals(&interrupted);
    signal_client(&interrupted, "INT");
    let (code, _, err) = finish(interrupted);
    assert_eq!(code, Some(130), "{err}");
    gate.release.add_permits(1);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        host.tally.counter.load(Ordering::SeqCst),
        1,
        "the cancelled call never ran"
    );
}

#[test]
fn the_calls_timeout_covers_the_guards_wait() {
    let gate = Gatekeeper::new();
    let host = Host::start_with(
        IpcServer::builder()
            .guard(gate.guard())
            .call_timeout(Some(Duration::from_millis(300))),
    );
    let (code, err) = call(&host.env(), &["call", "counter"]);
    assert_eq!(code, Some(124), "{err}");
    assert!(err.contains("timed out after 300ms"), "{err}");
    assert_eq!(host.tally.counter.load(Ordering::SeqCst), 0);
}

/// The secret arguments the load test passes.
const SECRET_KEY: &str = "S3CRET-KEY-f00d";
const SECRET_PIN: &str = "S3CRET-PIN-beef";

#[test]
#[ignore = "slow: 3,200 calls from 32 shells"]
fn every_call_under_load_has_one_record_and_no_secret_is_anywhere() {
    const SHELLS: usize = 32;
    const ROUNDS: usize = 20;
    let gate = Gatekeeper::new();
    let (host, dir) = audited(IpcServer::builder().guard(gate.guard()), Style::Scripts);
    let server = host.server.as_ref().unwrap();
    let sandbox = scoped(&host, Scope::new("load"));
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
            sandbox.env.apply(&mut command);
            spawn(command)
        })
        .collect();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut stderr = String::new();
    for shell in shells {
        let (code, out, err) = finish(shell);
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
    assert_eq!(records.len(), SHELLS * ROUNDS * 5 + 1);
    let mut recorded: BTreeMap<String, usize> = BTreeMap::new();
    for record in &records[..] {
        if record["command"] != "ping" {
            *recorded
                .entry(record["outcome"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
        assert_eq!(record["scope"], "load");
        assert!(record["uid"].is_u64() && record["duration_ms"].is_u64());
    }
    assert_eq!(
        recorded, seen,
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
