//! Who may call what, end to end: scopes (two bubblewrap sandboxes at
//! once, each seeing and calling only its own commands; expiry; revocation
//! mid-session; the errors of issuing one) and the call guard (a denial, a
//! wait the test answers, Ctrl-C during the wait, the call's timeout over
//! the wait, what it is told of each call).

mod common;

use std::process::Child;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::authority::{Gatekeeper, Scoped, audited, call, client, contains, records, scoped};
use common::process::{finish, signal_client, spawn, wait_catching_signals};
use common::{Host, Style, each_style, require, text, wait_until};
use gangway::ipc::{IpcClient, IpcServer, SandboxEnv, Scope, ScopeError};

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
            spawn(
                gangway::ipc::Bwrap::new(&scoped.env)
                    .command("sh", ["-c", &script])
                    .unwrap(),
            )
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

/// A client connected with `env`'s token.
fn connect(env: &SandboxEnv) -> IpcClient {
    IpcClient::connect_to(env.endpoint(), env.token()).unwrap()
}

/// How many `linger` calls have begun on `host`.
fn lingering(host: &Host) -> u64 {
    host.tally.waits_started.load(Ordering::SeqCst)
}

/// A 300 ms scope within whose life a call answers, a connection opens,
/// and a call starts (tried again under a fresh id on a machine too busy
/// to do that much in 300 ms): its id, its environment, the connection,
/// and the running call.
fn short_scope_with_a_running_call(host: &Host) -> (String, SandboxEnv, IpcClient, Child) {
    let server = host.server.as_ref().unwrap();
    (1..=5)
        .find_map(|attempt| {
            let id = format!("short-{attempt}");
            let before = lingering(host);
            let env = server.scope(
                Scope::new(&id)
                    .commands(["ping", "linger"])
                    .expires_in(Duration::from_millis(300)),
            );
            let mut idle = connect(&env);
            let answered = idle.call_raw("ping", &[0x80]).is_ok();
            let mut outliving = spawn(client(&env, &["call", "linger"]));
            wait_until("the call starts, or the scope expires", || {
                lingering(host) > before || server.manifest_for(&id).is_none()
            });
            if answered && lingering(host) > before {
                return Some((id, env, idle, outliving));
            }
            let _ = outliving.kill();
            let _ = outliving.wait();
            None
        })
        .expect("a 300 ms scope in which three things happen")
}

/// Waits for the scope `id` (of `env`) to expire and checks what that
/// ends: its socket and token file go (a new call is told its access
/// ended), the connection it opened (`idle`) is refused with the reason,
/// and the call it was running (`outliving`) is cancelled.
fn check_expiry(host: &Host, id: &str, env: &SandboxEnv, idle: &mut IpcClient, outliving: Child) {
    let server = host.server.as_ref().unwrap();
    wait_until("the scope expires", || server.manifest_for(id).is_none());
    wait_until("the expired scope's token file goes", || {
        !env.token_file().unwrap().exists()
    });
    let (code, err) = call(env, &["call", "ping"]);
    assert_eq!(code, Some(77), "{err}");
    assert!(err.contains("this sandbox's access has ended"), "{err}");
    let error = idle.call_raw("ping", &[0x80]).unwrap_err();
    assert_eq!(error.exit_code(), 77, "{error}");
    assert!(error.to_string().contains("expired"), "{error}");
    // Expiry ends what the scope was running, as revocation does.
    let (code, _, err) = finish(outliving);
    assert_eq!(code, Some(77), "{err}");
    assert!(err.contains("expired"), "{err}");
    wait_until("the handler saw its scope expire", || {
        host.tally.waits_expired.load(Ordering::SeqCst) == 1
    });
}

/// Checks the audit log after the expiry and revocations: only the wrong
/// token on the main socket was refused at its hello, the revoked scope's
/// running calls are recorded denied, and no token is in the file.
fn check_lapsed_records(records: &[serde_json::Value], bytes: &[u8], tokens: &[String]) {
    let refused: Vec<(Option<&str>, &str)> = records
        .iter()
        .filter(|r| r["outcome"] == "refused")
        .map(|r| (r["scope"].as_str(), r["reason"].as_str().unwrap()))
        .collect();
    // A lapsed scope's socket is gone, so its token reaches no hello; the
    // wrong token on the main socket does.
    assert_eq!(
        refused,
        [(
            None,
            "the token is missing or wrong for this socket; check GANGWAY_TOKEN (or \
             GANGWAY_TOKEN_FILE): a scope's token works on its own socket alone"
        )],
        "{refused:?}"
    );
    let revoked: Vec<_> = records
        .iter()
        .filter(|r| r["scope"] == "doomed" && r["command"] == "linger")
        .collect();
    assert_eq!(revoked.len(), 2, "{revoked:?}");
    for record in revoked {
        assert_eq!(record["outcome"], "denied", "{record}");
    }
    for token in tokens {
        assert!(
            !contains(bytes, token.as_bytes()),
            "a token is in the audit log"
        );
    }
}

#[test]
fn an_expired_scope_and_a_revoked_one_are_refused_and_revoking_cancels_running_calls() {
    let (host, dir) = audited(IpcServer::builder(), Style::Scripts);
    let server = host.server.as_ref().unwrap();
    let doomed = server.scope(Scope::new("doomed").commands(["ping", "linger"]));
    let kept = server.scope(Scope::new("kept").commands(["ping", "linger"]));

    // A connection kept open across the revocation, and calls running: one
    // that stops when cancelled, one that ignores it.
    let mut session = connect(&doomed);
    session.call_raw("ping", &[0x80]).unwrap();
    let running = spawn(client(&doomed, &["call", "linger"]));
    let stubborn = spawn(client(&doomed, &["call", "linger", "--", "--stubborn"]));
    let unaffected = spawn(client(&kept, &["call", "linger"]));
    wait_until("the calls run", || lingering(&host) == 3);

    // A 300 ms scope, expired while it has a connection and a call.
    let (short_id, short, mut idle, outliving) = short_scope_with_a_running_call(&host);
    check_expiry(&host, &short_id, &short, &mut idle, outliving);
    // An expired scope can still be revoked.
    assert!(server.revoke(&short_id));

    assert!(server.revoke("doomed"));
    for child in [running, stubborn] {
        let (code, _, err) = finish(child);
        assert_eq!(code, Some(77), "{err}");
        assert!(err.contains("revoked"), "{err}");
    }
    // The one that heeds its cancel saw why (the stubborn one never looks).
    wait_until("the running call saw its scope revoked", || {
        host.tally.waits_revoked.load(Ordering::SeqCst) == 1
    });
    assert_eq!(
        host.tally.waits_abandoned.load(Ordering::SeqCst),
        1,
        "the stubborn one"
    );
    let error = session.call_raw("ping", &[0x80]).unwrap_err();
    assert_eq!(error.exit_code(), 77, "{error}");
    wait_until("the revoked scope's token file goes", || {
        !doomed.token_file().unwrap().exists()
    });
    let (code, err) = call(&doomed, &["call", "ping"]);
    assert_eq!(code, Some(77), "{err}");
    assert!(err.contains("this sandbox's access has ended"), "{err}");
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

    let wrong = SandboxEnv::new(host.env().endpoint().clone(), "0".repeat(64));
    assert_eq!(call(&wrong, &["call", "ping"]).0, Some(69));

    drop(session);
    let tokens = [
        host.env().token().to_owned(),
        short.token().to_owned(),
        doomed.token().to_owned(),
        kept.token().to_owned(),
    ];
    let (records, bytes) = records(host, &dir);
    check_lapsed_records(&records, &bytes, &tokens);
}

#[test]
fn on_a_shared_tcp_port_a_lapsed_token_is_refused_at_the_hello_with_its_reason() {
    let builder = IpcServer::builder().tcp("127.0.0.1:0".parse().unwrap());
    let (host, dir) = audited(builder, Style::Scripts);
    let server = host.server.as_ref().unwrap();
    let revoked = server.scope(Scope::new("revoked"));
    let expired = server.scope(Scope::new("expired").expires_in(Duration::from_millis(100)));
    // Each scope still has a token file of its own, beside no socket.
    for env in [&revoked, &expired] {
        assert_eq!(env.endpoint(), host.env().endpoint());
        let file = env.token_file().unwrap();
        assert_eq!(std::fs::read_to_string(file).unwrap(), env.token());
    }
    assert_eq!(call(&revoked, &["call", "ping"]).0, Some(0));
    assert!(server.revoke("revoked"));
    wait_until("the scope expires", || {
        server.manifest_for("expired").is_none()
    });
    // Told by the token itself (GANGWAY_TOKEN), not its file.
    for (env, reason) in [
        (&revoked, "this sandbox's access was revoked by the host"),
        (
            &expired,
            "this sandbox's access expired; the host must issue a new scope",
        ),
    ] {
        let mut only_token = client(env, &["call", "ping"]);
        only_token.env_remove("GANGWAY_TOKEN_FILE");
        let out = common::run(only_token, None);
        assert_eq!(out.status.code(), Some(77));
        assert!(text(&out.stderr).contains(reason), "{}", text(&out.stderr));
    }
    let (records, _) = records(host, &dir);
    let refused: Vec<(&str, &str)> = records
        .iter()
        .filter(|r| r["outcome"] == "refused")
        .map(|r| (r["scope"].as_str().unwrap(), r["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        refused,
        [
            ("revoked", "this sandbox's access was revoked by the host"),
            (
                "expired",
                "this sandbox's access expired; the host must issue a new scope"
            ),
        ]
    );
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
    assert_eq!(
        host.tally.counter.load(Ordering::SeqCst),
        1,
        "the cancelled call never ran"
    );
    // Its guard's wait was dropped (the host may see the cancel after the
    // client exits): an answer then finds nobody waiting.
    wait_until("the guard's wait is given up", || {
        gate.given_up.load(Ordering::SeqCst) == 1
    });
    gate.release.add_permits(1);
    assert_eq!(gate.release.available_permits(), 1);
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

#[test]
fn a_scope_names_only_commands_the_server_serves_and_ids_are_unique_while_live() {
    let host = Host::start();
    let server = host.server.as_ref().unwrap();
    let error = server
        .try_scope(Scope::new("a").commands(["serch"]))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "scope `a` names `serch`, which this server does not serve; did you mean `search`?"
    );
    assert!(matches!(
        server.try_scope(Scope::new("")),
        Err(ScopeError::InvalidId { .. })
    ));
    for id in [
        "bad\nid",
        "has space",
        "é",
        "\u{202e}evil",
        &"x".repeat(129),
    ] {
        assert!(
            matches!(
                server.try_scope(Scope::new(id)),
                Err(ScopeError::InvalidId { .. })
            ),
            "{id:?}"
        );
    }
    // A lifetime past what the clock can say never ends.
    let forever = server.scope(Scope::new("forever").expires_in(Duration::MAX));
    assert_eq!(call(&forever, &["call", "ping"]).0, Some(0));
    let first = server.scope(Scope::new("a").commands(["search", "ping"]));
    assert!(matches!(
        server.try_scope(Scope::new("a")),
        Err(ScopeError::Duplicate { .. })
    ));
    let manifest = server.manifest_for("a").unwrap();
    let names: Vec<&str> = manifest.commands.iter().map(|c| &*c.name).collect();
    assert_eq!(names, ["ping", "search"]);
    assert!(server.manifest_for("b").is_none());
    // A scope's token is its own: not the server's, not another scope's.
    let second = server.scope(Scope::new("b"));
    assert_ne!(first.token(), server.token());
    assert_ne!(first.token(), second.token());
    // Once revoked, the id may be issued again, with a new token.
    assert!(server.revoke("a"));
    let again = server.scope(Scope::new("a").commands(["ping"]));
    assert_ne!(again.token(), first.token());
    assert_eq!(call(&again, &["call", "ping"]).0, Some(0));
    wait_until("the revoked scope's token file goes", || {
        !first.token_file().unwrap().exists()
    });
    assert_eq!(call(&first, &["call", "ping"]).0, Some(77));
    // The async client lists what the blocking one and `gangway list` do.
    let listed = host.runtime.block_on(async {
        let client = gangway::ipc::AsyncIpcClient::connect_to(again.endpoint(), again.token())
            .await
            .unwrap();
        client.list().await.unwrap()
    });
    let names: Vec<&str> = listed.commands.iter().map(|c| &*c.name).collect();
    assert_eq!(names, ["ping"]);
    // An unknown command in a scope suggests only what the scope allows.
    let (code, err) = call(&again, &["call", "serch"]);
    assert_eq!(code, Some(2));
    assert_eq!(err, "unknown command `serch`\n");
    let (code, err) = call(&again, &["call", "pong"]);
    assert_eq!(code, Some(2));
    assert_eq!(err, "unknown command `pong`; did you mean `ping`?\n");
}

#[test]
fn the_guard_is_told_the_scope_the_bound_arguments_and_the_calling_process() {
    let gate = Gatekeeper::new();
    let host = Host::start_with(IpcServer::builder().guard(gate.guard()));
    let server = host.server.as_ref().unwrap();
    let env = server.scope(Scope::new("agent-7"));
    let child = spawn(client(
        &env,
        &["call", "login", "--", "ada", "--key", "hunter2-KEY"],
    ));
    let pid = child.id();
    let (code, out, err) = finish(child);
    assert_eq!((code, out.as_str()), (Some(0), "welcome, ada\n"), "{err}");
    let seen = gate.seen.lock().unwrap().clone();
    let [info] = &seen[..] else {
        panic!("{seen:?}")
    };
    assert_eq!(info.scope(), Some("agent-7"));
    assert_eq!(info.command(), "login");
    assert_eq!(
        info.args(),
        &serde_json::json!({"user": "ada", "key": "<redacted>"})
    );
    let peer = info.peer().expect("a Unix socket tells the peer");
    assert_eq!(peer.pid, Some(i32::try_from(pid).unwrap()));
    assert_eq!(peer.uid, nix_uid());
    assert!(!format!("{info:?}").contains("hunter2"));
    // The full-access token has no scope; a usage error never reaches
    // the guard.
    assert_eq!(call(&host.env(), &["call", "ping"]).0, Some(0));
    assert_eq!(
        call(&host.env(), &["call", "ping", "--", "--bogus"]).0,
        Some(2)
    );
    let seen = gate.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[1].scope(), None);
}

/// This process's user id, as `id -u` prints it.
fn nix_uid() -> u32 {
    let out = std::process::Command::new("id").arg("-u").output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}
