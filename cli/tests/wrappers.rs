//! Generated wrappers run by real shells against a live host: arguments,
//! types, errors, state, output, stdin.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{GANGWAY, Host, Style, each_style, require, shells, text};

fn json(output: &std::process::Output) -> serde_json::Value {
    assert!(
        output.status.success(),
        "status {:?}, stderr: {}",
        output.status,
        text(&output.stderr)
    );
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&output.stdout)))
}

/// Everything a wrapper must do, under one shell.
fn behaves(host: &Host, shell: &[&str]) {
    parses_arguments(host, shell);
    refuses_bad_arguments(host, shell);
    keeps_state_prints_and_fails(host, shell);
    helps_and_runs_directly(host, shell);
}

/// Options in every spelling, flags, `--`, and each argument type.
fn parses_arguments(host: &Host, shell: &[&str]) {
    let call = |script: &str| host.shell(shell, script, &[], None);

    let out = json(&call("search rust"));
    assert_eq!(
        (out["query"].clone(), out["limit"].clone()),
        ("rust".into(), 10.into()),
        "{shell:?}"
    );

    for script in [
        "search --limit 3 rust",
        "search --limit=3 rust",
        "search -n 3 rust",
        "search rust -n3",
    ] {
        assert_eq!(json(&call(script))["limit"], 3, "{shell:?}: {script}");
    }
    let out = json(&call("search --verbose rust"));
    assert_eq!(
        (out["verbose"].clone(), out["query"].clone()),
        (true.into(), "rust".into()),
        "{shell:?}"
    );
    assert_eq!(
        json(&call("search -- -rust"))["query"],
        "-rust",
        "{shell:?}"
    );

    let out = json(&call("search --ratio 0.25 --order oldest -t a --tag b x"));
    assert_eq!(out["ratio"], 0.25);
    assert_eq!(out["order"], "oldest");
    assert_eq!(out["tag"], serde_json::json!(["a", "b"]));
}

/// A value of the wrong type, and a misspelt flag: usage errors.
fn refuses_bad_arguments(host: &Host, shell: &[&str]) {
    let call = |script: &str| host.shell(shell, script, &[], None);

    let bad = call("search -n many x");
    assert_eq!(bad.status.code(), Some(2), "{shell:?}");
    let stderr = text(&bad.stderr);
    assert!(
        stderr.contains("invalid value `many` for `-n`: expected a whole number"),
        "{stderr}"
    );
    assert!(stderr.contains("try `search --help`"), "{stderr}");
    let bad = call("search --limt 3 x");
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("unknown flag `--limt`; did you mean `--limit`?"),
        "{}",
        text(&bad.stderr)
    );
}

/// State kept across calls, a string printed raw, a handler's error, an
/// unknown command and a missing wrapper.
fn keeps_state_prints_and_fails(host: &Host, shell: &[&str]) {
    let call = |script: &str| host.shell(shell, script, &[], None);

    let counted = call("counter; counter; counter");
    assert!(counted.status.success());
    let counts: Vec<u64> = text(&counted.stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(counts.len(), 3);
    assert!(
        counts.windows(2).all(|w| w[1] == w[0] + 1),
        "state persists: {counts:?}"
    );

    let ping = call("ping");
    assert_eq!(ping.stdout, b"pong\n", "a string prints raw");
    let failed = call("fail why");
    assert_eq!(failed.status.code(), Some(1), "a handler error exits 1");
    assert_eq!(text(&failed.stderr).trim(), "fail: failed: why");
    assert!(failed.stdout.is_empty());

    let unknown = host.shell(shell, "\"$GANGWAY_BIN\" call serch rust", &[], None);
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(
        text(&unknown.stderr).trim(),
        "unknown command `serch`; did you mean `search`?"
    );
    let missing = call("no_such_command_here");
    assert_eq!(
        missing.status.code(),
        Some(127),
        "no wrapper for a command the host lacks"
    );
}

/// `--help`, and the wrapper run itself rather than found on `PATH`.
fn helps_and_runs_directly(host: &Host, shell: &[&str]) {
    let call = |script: &str| host.shell(shell, script, &[], None);

    let help = call("search --help");
    assert!(help.status.success());
    let help = text(&help.stdout);
    assert!(
        help.starts_with("Search the notes.\n\nUsage: search [OPTIONS] <query>"),
        "{help}"
    );
    assert!(
        help.contains("-n, --limit <LIMIT>") && help.contains("How many."),
        "{help}"
    );

    // The wrapper itself: a script run by this shell rather than its `#!`,
    // a link run by its path.
    let [_, (how, direct)] = host.both_ways(shell, "search", &["-v", "direct"]);
    let out = json(&common::run(direct, None));
    assert_eq!(
        (out["verbose"].clone(), out["query"].clone()),
        (true.into(), "direct".into()),
        "{how}"
    );
}

#[test]
fn wrappers_work_under_sh() {
    each_style(|style| {
        behaves(&Host::start_styled(style), &["sh"]);
    });
}

#[test]
#[ignore = "needs dash, bash, busybox and zsh"]
fn wrappers_work_under_dash_bash_busybox_and_zsh() {
    require(&["dash", "bash", "busybox", "zsh"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        for shell in shells() {
            behaves(&host, &shell);
        }
    });
}

/// A small deterministic generator of awkward words.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn word(&mut self) -> String {
        const PIECES: &[&str] = &[
            "a", "Z", "0", " ", "\t", "\n", "'", "\"", "\\", "$(id)", "`id`", "${HOME}", "$1", "*",
            "?", "[a]", "~", "-", "--", "-x", "--help", "=", ";", "|", "&", "<", ">", "#", "!",
            "é", "日本", "🦀", "\u{200b}",
        ];
        let len = self.next() % 5;
        (0..len)
            .map(|_| PIECES[(self.next() % PIECES.len() as u64) as usize])
            .collect()
    }

    fn words(&mut self) -> Vec<String> {
        let count = self.next() % 6;
        (0..count).map(|_| self.word()).collect()
    }
}

/// Sends `lists` random argument lists through the `echoargs` wrapper: a
/// script run as `shell`'s own script (`SHELL WRAPPER -- words...`), so
/// `shell`, not the wrapper's `#!/bin/sh`, expands its `"$@"`; a link
/// called by a `shell -c` script.
fn round_trip(host: &Host, shell: &[&str], lists: usize, seed: u64) {
    let mut rng = Rng(seed);
    for case in 0..lists {
        let words = rng.words();
        let mut args = vec!["--"];
        args.extend(words.iter().map(String::as_str));
        // A script wrapper as the shell's own script; a link from `PATH`
        // under the shell, which expands the words.
        let command = match host.style {
            Style::Scripts => host.wrapper_command(shell, "echoargs", &args),
            Style::Links => host.shell_command(shell, "echoargs \"$@\"", &args),
        };
        let out = common::run(command, None);
        let got: Vec<String> = serde_json::from_value(json(&out)).unwrap();
        assert_eq!(got, words, "{shell:?} case {case}");
    }
}

#[test]
fn argv_arrives_byte_identical_under_sh() {
    each_style(|style| {
        round_trip(
            &Host::start_styled(style),
            &["sh"],
            150,
            0x1234_5678_9abc_def1,
        );
    });
}

#[test]
#[ignore = "needs dash, bash, busybox and zsh"]
fn two_thousand_argument_lists_arrive_byte_identical_under_every_shell() {
    require(&["dash", "bash", "busybox", "zsh"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        let shells = shells();
        assert_eq!(shells.len(), 6, "{shells:?}");
        // Through a link the shell only expands `"$@"`, as it does for a
        // script from `PATH`; the script run as the shell's own script is
        // where shells differ, so it gets the most lists.
        let lists = match style {
            Style::Scripts => 2_000,
            Style::Links => 300,
        };
        std::thread::scope(|scope| {
            for (i, shell) in shells.into_iter().enumerate() {
                let host = &host;
                scope.spawn(move || round_trip(host, &shell, lists, 0xdead_beef_0000 + i as u64));
            }
        });
    });
}

/// Runs `command` with a stdin pipe that is never closed, and returns its
/// output, or fails if it has not finished in `limit`.
fn with_open_stdin(mut command: Command, what: &str, limit: Duration) -> std::process::Output {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let _held_open = child.stdin.take();
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{what}: still waits for stdin after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Bytes with NULs, a lone `\r` and no final newline come back exact.
fn nul_bytes_arrive(host: &Host, shell: &[&str]) {
    let mut data: Vec<u8> = (0..=255u8).collect();
    data.extend([0, 0, 0, b'\n', b'\r', b'\n', 0]);
    for (how, command) in host.both_ways(shell, "cat", &[]) {
        let out = common::run(command, Some(&data));
        assert!(out.status.success(), "{how}: {}", text(&out.stderr));
        assert_eq!(out.stdout, data, "{how}");
    }
}

/// A text answer gets the final newline its input lacked.
fn text_gets_a_final_newline(host: &Host, shell: &[&str]) {
    for (how, command) in host.both_ways(shell, "upper", &[]) {
        let out = common::run(command, Some(b"no newline\n\nat the end"));
        assert!(out.status.success(), "{how}: {}", text(&out.stderr));
        assert_eq!(out.stdout, b"NO NEWLINE\n\nAT THE END\n", "{how}");
    }
}

/// 8 MiB of pseudo-random bytes come back exact.
fn eight_mebibytes_arrive(host: &Host, shell: &[&str]) {
    let mut state = 7u32;
    let data: Vec<u8> = (0..8 * 1024 * 1024)
        .map(|_| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (state >> 16) as u8
        })
        .collect();
    for (how, command) in host.both_ways(shell, "cat", &[]) {
        let out = common::run(command, Some(&data));
        assert!(out.status.success(), "{how}: {}", text(&out.stderr));
        assert_eq!(out.stdout.len(), data.len(), "{how}");
        assert!(out.stdout == data, "{how}: the bytes differ");
    }
}

/// An explicit `--text` is used, and the piped bytes are not.
fn an_explicit_argument_wins(host: &Host, shell: &[&str]) {
    for (how, command) in host.both_ways(shell, "upper", &["--text", "given"]) {
        let out = common::run(command, Some(b"piped"));
        assert!(out.status.success(), "{how}: {}", text(&out.stderr));
        assert_eq!(out.stdout, b"GIVEN\n", "{how}");
    }
}

/// A command that takes no stdin answers with a pipe that never closes.
fn no_stdin_argument_never_reads_stdin(host: &Host, shell: &[&str]) {
    for (how, command) in host.both_ways(shell, "ping", &[]) {
        let out = with_open_stdin(command, &how, Duration::from_secs(20));
        assert_eq!(out.stdout, b"pong\n", "{how}: {}", text(&out.stderr));
    }
}

/// Help answers with a pipe that never closes.
fn help_with_a_pipe_open(host: &Host, shell: &[&str]) {
    for args in [&["--help"][..], &["-h"], &["--data", "x", "--help"]] {
        for (how, command) in host.both_ways(shell, "cat", args) {
            let out = with_open_stdin(command, &how, Duration::from_secs(20));
            assert!(out.status.success(), "{how}: {}", text(&out.stderr));
            assert!(
                text(&out.stdout).contains("Usage: cat [OPTIONS]"),
                "{how}: {}",
                text(&out.stdout)
            );
        }
    }
}

/// An explicit stdin argument, or a usage error, answers with a pipe that
/// never closes.
fn explicit_argument_or_usage_error_with_a_pipe_open(host: &Host, shell: &[&str]) {
    let open = |args: &[&str]| {
        host.both_ways(shell, "upper", args)
            .map(|(how, command)| (with_open_stdin(command, &how, Duration::from_secs(20)), how))
    };
    for (out, how) in open(&["--text", "given"]) {
        assert_eq!(out.stdout, b"GIVEN\n", "{how}: {}", text(&out.stderr));
    }
    // `-h` as the option's value is text to upper-case, not a call for help.
    for (out, how) in open(&["--text=-h"]) {
        assert_eq!(out.stdout, b"-H\n", "{how}: {}", text(&out.stderr));
    }
    for (out, how) in open(&["--txet", "x"]) {
        assert_eq!(out.status.code(), Some(2), "{how}");
        assert!(
            text(&out.stderr).contains("unknown flag `--txet`"),
            "{how}: {}",
            text(&out.stderr)
        );
    }
}

/// Every standard-input case, each run from `PATH` and as the shell's
/// script.
const STDIN_CASES: [fn(&Host, &[&str]); 7] = [
    nul_bytes_arrive,
    text_gets_a_final_newline,
    eight_mebibytes_arrive,
    an_explicit_argument_wins,
    no_stdin_argument_never_reads_stdin,
    help_with_a_pipe_open,
    explicit_argument_or_usage_error_with_a_pipe_open,
];

#[test]
fn binary_stdin_with_nuls_arrives_byte_identical() {
    each_style(|style| {
        nul_bytes_arrive(&Host::start_styled(style), &["sh"]);
    });
}

#[test]
fn text_without_a_final_newline_gets_one() {
    each_style(|style| {
        text_gets_a_final_newline(&Host::start_styled(style), &["sh"]);
    });
}

#[test]
fn eight_mebibytes_of_stdin_arrive_byte_identical() {
    each_style(|style| {
        eight_mebibytes_arrive(&Host::start_styled(style), &["sh"]);
    });
}

#[test]
fn an_explicit_argument_wins_over_stdin() {
    each_style(|style| {
        an_explicit_argument_wins(&Host::start_styled(style), &["sh"]);
    });
}

#[test]
fn a_command_without_a_stdin_argument_never_reads_stdin() {
    each_style(|style| {
        no_stdin_argument_never_reads_stdin(&Host::start_styled(style), &["sh"]);
    });
}

#[test]
fn help_does_not_read_stdin() {
    each_style(|style| {
        help_with_a_pipe_open(&Host::start_styled(style), &["sh"]);
    });
}

#[test]
fn an_explicit_stdin_argument_or_a_usage_error_does_not_read_stdin() {
    each_style(|style| {
        explicit_argument_or_usage_error_with_a_pipe_open(&Host::start_styled(style), &["sh"]);
    });
}

#[test]
#[ignore = "needs dash, bash, busybox and zsh"]
fn the_stdin_cases_hold_under_dash_bash_busybox_and_zsh() {
    require(&["dash", "bash", "busybox", "zsh"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        let shells = shells();
        assert_eq!(shells.len(), 6, "{shells:?}");
        for shell in &shells {
            for case in STDIN_CASES {
                case(&host, shell);
            }
        }
    });
}

#[test]
fn without_a_host_the_client_exits_69() {
    let out = common::run(
        {
            let mut c = Command::new(GANGWAY);
            c.args(["call", "ping"])
                .env_remove("GANGWAY_ENDPOINT")
                .env_remove("GANGWAY_TOKEN");
            c
        },
        None,
    );
    assert_eq!(out.status.code(), Some(69));
    assert!(
        text(&out.stderr).contains("GANGWAY_ENDPOINT is not set"),
        "{}",
        text(&out.stderr)
    );

    let out = common::run(
        {
            let mut c = Command::new(GANGWAY);
            c.args(["call", "ping"])
                .env("GANGWAY_ENDPOINT", "unix:/nonexistent/gangway.sock")
                .env("GANGWAY_TOKEN", "x");
            c
        },
        None,
    );
    assert_eq!(out.status.code(), Some(69));
    assert!(
        text(&out.stderr).contains("cannot reach the gangway host"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn stdin_over_the_hosts_limit_is_refused_with_the_fix() {
    each_style(|style| {
        let host = Host::start_with_styled(
            gangway::ipc::IpcServer::builder().max_frame(64 * 1024),
            style,
        );
        let data = vec![b'z'; 100 * 1024];
        let out = host.shell(&["sh"], "cat", &[], Some(&data));
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let stderr = text(&out.stderr);
        assert!(
            stderr.starts_with("cat: standard input is over the ")
                && stderr.contains("bytes the host takes in one call; pass large input as a file"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
        // Just under the limit goes through.
        let data = vec![b'z'; 60 * 1024];
        let out = host.shell(&["sh"], "cat", &[], Some(&data));
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(out.stdout, data);
    });
}

#[test]
fn unreadable_stdin_is_named_as_such() {
    each_style(|style| {
        let host = Host::start_styled(style);
        // A directory as standard input: reading it fails with EISDIR.
        let mut command = Command::new("sh");
        command.arg("-c").arg("cat < /");
        host.env().apply(&mut command);
        let out = common::run(command, None);
        assert_eq!(out.status.code(), Some(74), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).starts_with("cat: cannot read standard input:"),
            "{}",
            text(&out.stderr)
        );
    });
}

#[test]
fn a_call_past_its_timeout_is_cancelled_and_exits_124() {
    each_style(|style| {
        let host = Host::start_styled(style);
        let out = host.shell(&["sh"], "hang", &[], None);
        assert_eq!(
            out.status.code(),
            Some(124),
            "{style:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(
            text(&out.stderr),
            "command `hang` timed out after 300ms\n",
            "{style:?}: as timeout(1) says it"
        );
        assert!(out.stdout.is_empty());
        assert_eq!(
            host.tally
                .hangs_timed_out
                .load(std::sync::atomic::Ordering::SeqCst),
            1,
            "{style:?}: the handler saw its timeout as a cancellation"
        );
        // A handler that ignores the cancellation is dropped after the
        // grace; the caller still gets its answer.
        let out = host.shell(&["sh"], "hang --stubborn", &[], None);
        assert_eq!(
            out.status.code(),
            Some(124),
            "{style:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(
            host.tally
                .hangs_started
                .load(std::sync::atomic::Ordering::SeqCst),
            2
        );
        assert_eq!(
            host.tally
                .hangs_abandoned
                .load(std::sync::atomic::Ordering::SeqCst),
            1,
            "{style:?}: the stubborn handler was dropped, the polite one finished"
        );
    });
}
