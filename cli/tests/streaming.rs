//! Long calls end to end, through the real wrappers under every shell and
//! inside bubblewrap: output streamed as the handler writes it, input
//! streamed as the caller reads it, progress, Ctrl-C and SIGTERM cancelling
//! the call on the host, and protocol versions that refuse each other.

mod common;

use std::process::Command;
use std::sync::atomic::Ordering;

use common::process::{
    finish, read_until, signal_client, signal_group, spawn, wait_catching_signals,
};
use common::streaming::{FNV_START, fnv1a, probed_host};
use common::{Host, Style, each_style, require, shells, text, wait_until};
use gangway::ipc::CancelReason;

/// Every way a sandboxed shell runs wrapper `name`: under each shell from
/// `PATH` and directly, then inside bwrap; each with a description.
fn every_way(host: &Host, name: &str, args: &[&str]) -> Vec<(String, Command)> {
    let mut ways = Vec::new();
    for shell in shells() {
        ways.extend(host.both_ways(&shell, name, args));
    }
    // `exec name "$@"`: the client is the sandbox's process, as a wrapper
    // run by an agent's shell is.
    let script = format!("exec {name} \"$@\"");
    let mut bwrap = gangway::ipc::Bwrap::new(&host.env())
        .command("sh", ["-c", &script, name])
        .unwrap();
    bwrap.args(args);
    ways.push((
        format!("{name} {args:?} inside bwrap ({:?})", host.style),
        bwrap,
    ));
    ways
}

#[test]
#[ignore = "needs dash, bash, busybox, zsh and bwrap"]
fn output_arrives_while_the_handler_is_still_running() {
    require(&["dash", "bash", "busybox", "zsh", "bwrap"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        for (how, command) in every_way(&host, "lines", &["3", "--hold"]) {
            let mut child = spawn(command);
            // Line 1 shows while the handler waits on the barrier, which
            // only this test releases: it was streamed, not buffered.
            let first = read_until(&mut child, "line 1\n");
            assert_eq!(text(&first), "line 1\n", "{how}");
            host.tally.barrier.open();
            let (code, rest, stderr) = finish(child);
            assert_eq!(code, Some(0), "{how}: {stderr}");
            assert_eq!(rest, "line 2\nline 3\n", "{how}");
        }
    });
}

#[test]
#[ignore = "needs dash, bash, busybox, zsh and bwrap"]
fn ten_thousand_lines_arrive_complete_and_in_order() {
    require(&["dash", "bash", "busybox", "zsh", "bwrap"]);
    let expected: String = (1..=10_000).map(|n| format!("line {n}\n")).collect();
    each_style(|style| {
        let host = Host::start_styled(style);
        for (how, command) in every_way(&host, "lines", &["10000"]) {
            let (code, stdout, stderr) = finish(spawn(command));
            assert_eq!(code, Some(0), "{how}: {stderr}");
            assert!(stdout == expected, "{how}: {} bytes differ", stdout.len());
        }
    });
}

/// Starts `linger` (with `extra` words), waits until its handler runs,
/// sends `signal` to the wrapper's group, and gives how it ended.
fn interrupt(host: &Host, command: Command, signal: &str) -> (Option<i32>, String, String) {
    let before = host.tally.waits_started.load(Ordering::SeqCst);
    let child = spawn(command);
    wait_until("the handler started", || {
        host.tally.waits_started.load(Ordering::SeqCst) > before
    });
    wait_catching_signals(&child);
    signal_client(&child, signal);
    finish(child)
}

#[test]
#[ignore = "needs dash, bash, busybox, zsh and bwrap"]
fn ctrl_c_and_sigterm_cancel_the_call_on_the_host_and_exit_as_shells_expect() {
    require(&["dash", "bash", "busybox", "zsh", "bwrap"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        let mut expected_interrupts = 0;
        for (signal, code) in [("INT", 130), ("TERM", 143), ("HUP", 129)] {
            for (how, command) in direct_ways(&host, "linger", &[]) {
                let (status, stdout, stderr) = interrupt(&host, command, signal);
                expected_interrupts += 1;
                assert_eq!(status, Some(code), "{how}, SIG{signal}: {stderr}");
                assert_eq!(stdout, "", "{how}");
                // The handler saw a cancel message, not a hang-up (the
                // client may exit before the host has acted on it).
                wait_until(&format!("{how}, SIG{signal}: the handler saw it"), || {
                    host.tally.waits_interrupted.load(Ordering::SeqCst) == expected_interrupts
                });
            }
        }
        assert_eq!(host.tally.waits_caller_gone.load(Ordering::SeqCst), 0);
    });
}

/// The ways to run wrapper `name` where the client is the process a
/// signal to the group reaches (as a terminal's Ctrl-C reaches the
/// foreground job): a script wrapper under each shell (it `exec`s the
/// client), a link by its path, and inside bwrap.
fn direct_ways(host: &Host, name: &str, args: &[&str]) -> Vec<(String, Command)> {
    let mut ways: Vec<(String, Command)> = Vec::new();
    for shell in shells() {
        let [_, direct] = host.both_ways(&shell, name, args);
        ways.push(direct);
        if host.style == Style::Links {
            // A link is run by its path: once is enough.
            break;
        }
    }
    let bwrap = every_way(host, name, args).pop().unwrap();
    ways.push(bwrap);
    ways
}

#[test]
#[ignore = "needs dash, bash, busybox, zsh and bwrap"]
fn a_handler_that_ignores_ctrl_c_is_dropped_after_the_grace_and_the_caller_still_exits() {
    require(&["dash", "bash", "busybox", "zsh", "bwrap"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        for (n, (how, command)) in direct_ways(&host, "linger", &["--stubborn"])
            .into_iter()
            .enumerate()
        {
            let (status, _, stderr) = interrupt(&host, command, "INT");
            assert_eq!(status, Some(130), "{how}: {stderr}");
            // The host dropped the handler once its grace (300 ms here) ran out.
            wait_until("the stubborn handler dropped", || {
                host.tally.waits_abandoned.load(Ordering::SeqCst) == n as u64 + 1
            });
        }
    });
}

#[test]
#[ignore = "needs dash"]
fn a_second_ctrl_c_exits_at_once_without_waiting_for_the_host() {
    require(&["dash"]);
    // A grace far longer than the test waits: only the second Ctrl-C can
    // end the caller while the host still runs the handler.
    let (host, probes) = probed_host(
        gangway::ipc::IpcServer::builder(),
        Style::Scripts,
        std::time::Duration::from_secs(3600),
    );
    let command = host.wrapper_command(&["dash"], "keep", &["--stubborn"]);
    let child = spawn(command);
    wait_until("the handler started", || probes.kept.count() == 1);
    wait_catching_signals(&child);
    signal_group(&child, "INT");
    // The first Ctrl-C was handled (the host got its cancel) before the
    // second is sent: two signals sent back to back may arrive as one.
    wait_until("the host saw the first Ctrl-C", || {
        probes.kept.reason(0) == Some(CancelReason::Interrupted)
    });
    signal_group(&child, "INT");
    // Within the test's patience, an hour before the host could answer.
    let (status, _, stderr) = finish(child);
    assert_eq!(status, Some(130), "{stderr}");
}

/// (That the caller's pipe blocks a credit window ahead of the handler,
/// and flows on as it reads, is `stream_flow.rs`'s to show.)
#[test]
#[ignore = "needs dash, bash, busybox, zsh and bwrap"]
fn sixty_four_mebibytes_stream_through_an_input_stream_argument() {
    require(&["dash", "bash", "busybox", "zsh", "bwrap"]);
    let total: u64 = 64 * 1024 * 1024;
    let expected_hash = (0..total / 2).fold(FNV_START, |hash, _| fnv1a(hash, b"y\n"));
    let expected = format!("{total} {expected_hash:016x}\n");
    each_style(|style| {
        let host = Host::start_styled(style);
        let script = format!("yes | head -c {total} | sum");
        let mut runs = vec![(
            "dash -c".to_owned(),
            host.shell_command(&["dash"], &script, &[]),
        )];
        runs.push((
            "inside bwrap".to_owned(),
            gangway::ipc::Bwrap::new(&host.env())
                .command("sh", ["-c", &script])
                .unwrap(),
        ));
        for (how, command) in runs {
            let chunks_before = host.tally.sum_chunks.load(Ordering::SeqCst);
            let (code, stdout, stderr) = finish(spawn(command));
            assert_eq!(code, Some(0), "{how}: {stderr}");
            assert_eq!(stdout, expected, "{how}");
            // Consumed as it came, in chunks: never the whole input at once.
            let chunks = host.tally.sum_chunks.load(Ordering::SeqCst) - chunks_before;
            assert!(chunks >= 64, "{how}: {chunks} chunks");
            assert!(
                host.tally.sum_largest_chunk.load(Ordering::SeqCst) <= 1024 * 1024,
                "{how}"
            );
        }
        // And under every shell and way, a smaller input.
        for (how, command) in every_way(&host, "sum", &[]) {
            let (code, stdout, stderr) = run_with_stdin(command, b"hello\n");
            assert_eq!(code, Some(0), "{how}: {stderr}");
            let hash = fnv1a(FNV_START, b"hello\n");
            assert_eq!(stdout, format!("6 {hash:016x}\n"), "{how}");
        }
    });
}

/// Runs `command` with `input` on its standard input.
fn run_with_stdin(command: Command, input: &[u8]) -> (Option<i32>, String, String) {
    let output = common::run(command, Some(input));
    (
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr),
    )
}

#[test]
#[ignore = "needs dash, bash, busybox, zsh and bwrap"]
fn a_reader_that_leaves_early_ends_the_handler() {
    require(&["dash", "bash", "busybox", "zsh", "bwrap"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        let mut runs = Vec::new();
        for shell in shells() {
            runs.push((
                format!("{shell:?}"),
                host.shell_command(&shell, "generate 1073741824 | head -c 10", &[]),
            ));
        }
        runs.push((
            "inside bwrap".to_owned(),
            gangway::ipc::Bwrap::new(&host.env())
                .command("sh", ["-c", "generate 1073741824 | head -c 10"])
                .unwrap(),
        ));
        for (n, (how, command)) in runs.into_iter().enumerate() {
            let (code, stdout, stderr) = finish(spawn(command));
            assert_eq!(code, Some(0), "{how}: {stderr}");
            assert_eq!(stdout, "xxxxxxxxxx", "{how}");
            wait_until("the handler saw its writes fail", || {
                host.tally.generate_ended_early.load(Ordering::SeqCst) == n as u64 + 1
            });
        }
    });
}

#[test]
#[ignore = "needs dash"]
fn progress_prints_lines_when_asked_and_nothing_on_a_pipe() {
    require(&["dash"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        let mut command = host.shell_command(&["dash"], "work 3", &[]);
        command.env("GANGWAY_PROGRESS", "lines");
        let (code, stdout, stderr) = finish(spawn(command));
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(stdout, "done\n");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.last(), Some(&"progress: 3/3 building"), "{stderr}");
        assert!(
            lines.iter().all(|line| line.starts_with("progress: ")),
            "{stderr}"
        );

        let (code, stdout, stderr) = finish(spawn(host.shell_command(&["dash"], "work 3", &[])));
        assert_eq!((code, stdout.as_str()), (Some(0), "done\n"));
        assert_eq!(stderr, "", "no progress on a pipe");
    });
}

#[test]
#[ignore = "needs script (bsdutils)"]
fn progress_draws_a_line_on_a_terminal_and_clears_it() {
    require(&["script"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        // `script` runs the wrapper on a pseudo-terminal and copies what it
        // draws to its own stdout.
        let wrapper = host.wrapper("work");
        let mut command = Command::new("script");
        command
            .args(["-qfec"])
            .arg(format!("{} 3 --hold", wrapper.display()))
            .arg("/dev/null")
            .env("TERM", "xterm")
            .env_remove("GANGWAY_PROGRESS");
        host.env().apply(&mut command);
        let mut child = spawn(command);
        let drawn = read_until(&mut child, "building");
        host.tally.barrier.open();
        let (code, rest, stderr) = finish(child);
        assert_eq!(code, Some(0), "{stderr}");
        let mut screen = vt100::Parser::new(24, 100, 0);
        screen.process(&drawn);
        assert!(
            screen.screen().contents().contains("building")
                && screen.screen().contents().contains("1/3"),
            "the bar while the call runs: {:?}",
            screen.screen().contents()
        );
        screen.process(rest.as_bytes());
        let last = screen.screen().contents();
        assert!(!last.contains("building"), "the bar is cleared: {last:?}");
        assert_eq!(last.trim(), "done", "{last:?}");
    });
}

#[test]
fn an_older_client_is_refused_with_both_versions_named() {
    use gangway::ipc::protocol;
    let host = Host::start();
    let env = host.env();
    let gangway::ipc::Endpoint::Unix(path) = env.endpoint() else {
        panic!("not a Unix socket");
    };
    let mut raw = std::os::unix::net::UnixStream::connect(path).unwrap();
    let hello = protocol::Hello {
        v: 1,
        token: env.token().to_owned(),
    };
    protocol::write_frame(&mut raw, &protocol::encode(&hello)).unwrap();
    let body = protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
    // The refusal is a bare answer, as version 1 reads it.
    let response: protocol::Response = protocol::decode(&body).unwrap();
    let error = response.error.unwrap();
    assert_eq!((error.kind.as_str(), error.exit), ("protocol", 69));
    assert!(
        error.message.contains("version 1")
            && error
                .message
                .contains(&format!("version {}", protocol::VERSION)),
        "{}",
        error.message
    );
}

#[test]
fn a_client_meeting_a_newer_host_exits_69_naming_both_versions() {
    use gangway::ipc::protocol;
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("host.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    // A host of a later release: it answers every hello with its version.
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let _ = protocol::read_frame(&mut stream, protocol::MAX_HELLO_FRAME);
            let welcome = protocol::Welcome {
                v: protocol::VERSION + 1,
                max_frame: 1 << 20,
                cancel_grace_ms: None,
                idle_ms: None,
            };
            let _ = protocol::write_frame(&mut stream, &protocol::encode(&welcome));
        }
    });
    let mut command = Command::new(common::GANGWAY_CLIENT);
    command
        .args(["call", "ping"])
        .env("GANGWAY_ENDPOINT", format!("unix:{}", socket.display()))
        .env("GANGWAY_TOKEN", "t");
    let (code, stdout, stderr) = finish(spawn(command));
    assert_eq!(code, Some(69), "{stderr}");
    assert_eq!(stdout, "");
    let (ours, theirs) = (protocol::VERSION, protocol::VERSION + 1);
    assert!(
        stderr.contains(&format!("version {ours}"))
            && stderr.contains(&format!("version {theirs}")),
        "{stderr}"
    );
}

#[test]
fn the_async_client_streams_a_calls_events_then_its_result() {
    use gangway::ipc::protocol::OutputStream;
    use gangway::ipc::{ArgvOutcome, AsyncIpcClient, CallEvent};
    let host = Host::start();
    let env = host.env();
    host.runtime.block_on(async {
        let client = AsyncIpcClient::connect_to(env.endpoint(), env.token())
            .await
            .unwrap();
        let mut call = client
            .call_argv_streaming("lines", &["3"], None)
            .await
            .unwrap();
        let mut out = Vec::new();
        while let Some(event) = call.next_event().await {
            match event {
                CallEvent::Output {
                    stream: OutputStream::Stdout,
                    data,
                } => out.extend_from_slice(&data),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(text(&out), "line 1\nline 2\nline 3\n");
        let ArgvOutcome::Response(reply) = call.finish().await.unwrap() else {
            panic!("help");
        };
        assert_eq!(rmp_serde::from_slice::<()>(&reply).unwrap(), ());

        // Progress arrives as events too; the last one is the last step.
        let mut call = client
            .call_argv_streaming("work", &["2"], None)
            .await
            .unwrap();
        let mut last = None;
        while let Some(event) = call.next_event().await {
            last = Some(event);
        }
        assert_eq!(
            last,
            Some(CallEvent::Progress {
                done: 2,
                total: Some(2),
                message: Some("building".to_owned())
            })
        );
        let ArgvOutcome::Response(reply) = call.finish().await.unwrap() else {
            panic!("help");
        };
        assert_eq!(rmp_serde::from_slice::<String>(&reply).unwrap(), "done");

        // Cancelling reaches the handler as an interruption.
        let call = client
            .call_argv_streaming("linger", &[] as &[&str], None)
            .await
            .unwrap();
        while host.tally.waits_started.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        call.cancel().await.unwrap();
        let ArgvOutcome::Response(reply) = call.finish().await.unwrap() else {
            panic!("help");
        };
        assert_eq!(
            rmp_serde::from_slice::<String>(&reply).unwrap(),
            "cancelled"
        );
        assert_eq!(host.tally.waits_interrupted.load(Ordering::SeqCst), 1);

        // A stdin sent whole fills an `InputStream` argument.
        let ArgvOutcome::Response(reply) = client
            .call_argv("sum", &[] as &[&str], Some(b"hello\n".to_vec()))
            .await
            .unwrap()
        else {
            panic!("help");
        };
        let hash = fnv1a(FNV_START, b"hello\n");
        assert_eq!(
            rmp_serde::from_slice::<String>(&reply).unwrap(),
            format!("6 {hash:016x}")
        );
    });
}

#[test]
fn a_cancel_reaches_a_running_call_while_calls_queue_behind_the_limit() {
    use gangway::ipc::{AsyncIpcClient, IpcServer};
    let host = Host::start_with(IpcServer::builder().max_in_flight(2));
    let env = host.env();
    host.runtime.block_on(async {
        let client = AsyncIpcClient::connect_to(env.endpoint(), env.token())
            .await
            .unwrap();
        let none: &[&str] = &[];
        let first = client
            .call_argv_streaming("linger", none, None)
            .await
            .unwrap();
        let second = client
            .call_argv_streaming("linger", none, None)
            .await
            .unwrap();
        while host.tally.waits_started.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        // Both slots busy; three more calls wait to start. Each is queued
        // on the connection once its stream is returned, so the host reads
        // them ahead of the cancel below.
        let mut queued = Vec::new();
        for _ in 0..3 {
            queued.push(
                client
                    .call_argv_streaming("ping", none, None)
                    .await
                    .unwrap(),
            );
        }
        first.cancel().await.unwrap();
        assert_eq!(answer(first).await, "cancelled");
        second.cancel().await.unwrap();
        assert_eq!(answer(second).await, "cancelled");
        for call in queued {
            assert_eq!(
                answer(call).await,
                "pong\n",
                "the queued calls run once slots free"
            );
        }
    });
}

/// A streamed call's answer, as text.
async fn answer(call: gangway::ipc::CallStream) -> String {
    match call.finish().await.unwrap() {
        gangway::ipc::ArgvOutcome::Response(reply) => rmp_serde::from_slice(&reply).unwrap(),
        other => panic!("not an answer: {other:?}"),
    }
}
