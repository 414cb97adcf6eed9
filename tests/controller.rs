//! Controllers running real processes: commands, a shell on a terminal, an
//! ACP agent; their output, input, signals, exits and stops, and that
//! nothing they start is left behind.

mod support;

use support::processes::{Process, Session, alive, shut_down_leaving_nothing, wait_for_process};
use support::runtime;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gangway::controller::{
    AgentController, Controller, ControllerError, ControllerInput, ControllerRegistry, ExitInfo,
    LaunchSpec, OutputEvent, OutputStream, ShellController, Status, StopOutcome,
    SubprocessController, TurnProvenance,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

fn no_meta() -> HashMap<String, Value> {
    HashMap::new()
}

fn sh(script: &str) -> LaunchSpec {
    LaunchSpec::new("sh").args(["-c", script])
}

/// Collects events until the exit event (or fails after 60 s: a failure
/// bound only, generous for a loaded machine).
async fn until_exit(
    events: &mut mpsc::Receiver<OutputEvent>,
) -> (Vec<(OutputStream, Vec<u8>)>, ExitInfo) {
    let mut output = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("the process ends")
            .expect("the hub is open");
        match event {
            OutputEvent::Output { stream, data } => output.push((stream, data)),
            OutputEvent::Exit(exit) => return (output, exit),
        }
    }
}

/// Everything received on `stream`, as text.
fn text_of(output: &[(OutputStream, Vec<u8>)], stream: OutputStream) -> String {
    output
        .iter()
        .filter(|(s, _)| *s == stream)
        .map(|(_, d)| String::from_utf8_lossy(d).into_owned())
        .collect()
}

/// Reads output into `seen` until `needle` is in it (or fails after 60 s).
async fn until_text(events: &mut mpsc::Receiver<OutputEvent>, needle: &str, seen: &mut String) {
    until(events, seen, |seen| seen.contains(needle), needle).await;
}

/// Reads output into `seen` until `done(seen)` (or fails after 60 s).
async fn until(
    events: &mut mpsc::Receiver<OutputEvent>,
    seen: &mut String,
    done: impl Fn(&str) -> bool,
    needle: &str,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !done(seen) {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Some(OutputEvent::Output { data, .. })) => {
                seen.push_str(&String::from_utf8_lossy(&data))
            }
            Ok(Some(OutputEvent::Exit(exit))) => {
                panic!("exited ({exit:?}) before {needle:?}: {seen}")
            }
            Ok(None) => panic!("the hub closed before {needle:?}"),
            Err(_) => panic!("no {needle:?} after 60 s: {seen}"),
        }
    }
}

/// Whether the pid exists at all, zombie or not.
fn exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Waits (up to 20 s) until `check` holds for none of `pids`.
fn wait_gone(pids: &[u32], what: &str, check: fn(u32) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left: Vec<_> = pids.iter().copied().filter(|p| check(*p)).collect();
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "{what} left behind: {left:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The numbers after `prefix` in complete lines of `text` (a terminal
/// echoes the command too, where `$!` is not a number).
fn pids_in(text: &str, prefix: &str) -> Vec<u32> {
    let complete = &text[..text.rfind('\n').map_or(0, |at| at + 1)];
    complete
        .lines()
        .filter_map(|line| {
            let rest = &line[line.find(prefix)? + prefix.len()..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect()
}

/// Waits (up to 30 s) until this runtime runs at most `tasks` tasks. A
/// controller's run keeps a few going (its exit watcher, output readers,
/// input writer); the watcher, which records the exit, reports it and ends
/// what is left of the session, is the last of them to end: once they
/// have, whatever an earlier run would do is done.
async fn until_tasks_at_most(tasks: usize, what: &str) {
    let metrics = tokio::runtime::Handle::current().metrics();
    let deadline = Instant::now() + Duration::from_secs(30);
    while metrics.num_alive_tasks() > tasks {
        assert!(
            Instant::now() < deadline,
            "{what}: {} tasks still running after 30 s, not {tasks}",
            metrics.num_alive_tasks()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[test]
fn a_command_streams_tagged_output_and_its_real_exit_code() {
    runtime().block_on(async {
        let command = SubprocessController::new("c1", sh("echo out; echo err >&2; exit 7"));
        assert_eq!(command.get_runtime_status().status, Status::Init);
        let mut events = command.subscribe();
        command
            .start(
                HashMap::from([("title".into(), json!("demo"))]),
                None,
                false,
            )
            .unwrap();
        let (output, exit) = until_exit(&mut events).await;
        assert_eq!(text_of(&output, OutputStream::Stdout), "out\n");
        assert_eq!(text_of(&output, OutputStream::Stderr), "err\n");
        assert_eq!(
            exit,
            ExitInfo {
                code: Some(7),
                signal: None
            }
        );
        let status = command.get_runtime_status();
        assert_eq!(
            (status.status, status.exit_code, status.pid),
            (Status::Done, Some(7), None)
        );
        assert_eq!(status.block_meta["title"], "demo");
        assert_eq!(status.controller_type, "cmd");
        let tail = String::from_utf8(command.output_tail()).unwrap();
        assert!(tail.contains("out\n") && tail.contains("err\n"), "{tail}");
    });
}

#[test]
fn a_prefixed_process_gets_none_of_the_hosts_environment() {
    // The prefix runs the program as `env env`: the second prints what it
    // was given.
    let spec = LaunchSpec::new("env")
        .prefix(["env"])
        .env("ASKED_FOR", "yes");
    runtime().block_on(async {
        let command = SubprocessController::new("env", spec);
        let mut events = command.subscribe();
        command.start(HashMap::new(), None, false).unwrap();
        let (output, exit) = until_exit(&mut events).await;
        assert_eq!(exit.code, Some(0));
        let printed = text_of(&output, OutputStream::Stdout);
        let names: Vec<&str> = printed
            .lines()
            .filter_map(|line| line.split_once('=').map(|(name, _)| name))
            .collect();
        let kept = ["TERM", "LANG", "LC_ALL", "TZ", "HOME", "PATH", "ASKED_FOR"];
        for name in &names {
            assert!(
                kept.contains(name),
                "the host's {name} reached it:\n{printed}"
            );
        }
        // HOME stays the host's (the host's /tmp is anyone's to write).
        let home = format!("HOME={}", std::env::var("HOME").unwrap_or_default());
        for wanted in ["ASKED_FOR=yes", &home] {
            assert!(
                printed.lines().any(|line| line == wanted),
                "{wanted}:\n{printed}"
            );
        }
        // This test's own environment has plenty it must not pass on.
        assert!(std::env::vars().any(|(name, _)| !kept.contains(&name.as_str())));
    });
}

#[test]
fn input_reaches_stdin_and_signals_reach_the_group_by_name() {
    runtime().block_on(async {
        let cat = SubprocessController::new("cat", LaunchSpec::new("cat"));
        let mut events = cat.subscribe();
        cat.start(no_meta(), None, false).unwrap();
        cat.send_input(ControllerInput::data("hello\n"), None)
            .unwrap();
        let mut seen = String::new();
        until_text(&mut events, "hello\n", &mut seen).await;
        let err = cat
            .send_input(ControllerInput::signal("SIGNOPE"), None)
            .unwrap_err();
        assert!(
            matches!(err, ControllerError::UnknownSignal { .. }),
            "{err}"
        );
        cat.send_input(ControllerInput::resize(10, 10), None)
            .unwrap();
        cat.send_input(ControllerInput::signal("int"), None)
            .unwrap();
        let (_, exit) = until_exit(&mut events).await;
        assert_eq!(
            exit,
            ExitInfo {
                code: None,
                signal: Some(2)
            },
            "killed by SIGINT"
        );
        assert_eq!(cat.get_runtime_status().exit_signal, Some(2));
        let err = cat
            .send_input(ControllerInput::data("late"), None)
            .unwrap_err();
        assert!(matches!(err, ControllerError::NotRunning { .. }), "{err}");
    });
}

/// While alive, this process ignores SIGINT, SIGQUIT and SIGHUP, as a host
/// started in the background of a script (or under `nohup`) does; the old
/// actions come back on drop.
struct IgnoringSignals(Vec<(nix::sys::signal::Signal, nix::sys::signal::SigHandler)>);

impl IgnoringSignals {
    fn start() -> Self {
        use nix::sys::signal::{SigHandler, Signal, signal};
        let ignored = [Signal::SIGINT, Signal::SIGQUIT, Signal::SIGHUP];
        // SAFETY: ignoring installs no handler.
        IgnoringSignals(
            ignored
                .into_iter()
                .map(|sig| (sig, unsafe { signal(sig, SigHandler::SigIgn) }.unwrap()))
                .collect(),
        )
    }
}

impl Drop for IgnoringSignals {
    fn drop(&mut self) {
        for (sig, old) in self.0.drain(..) {
            // SAFETY: puts back what was there.
            unsafe { nix::sys::signal::signal(sig, old) }.unwrap();
        }
    }
}

#[test]
fn signals_end_processes_of_a_host_that_ignores_them() {
    // Ignored signals stay ignored across exec: children must be started
    // with the default actions, or `signal int` and Ctrl-C do nothing.
    let _ignoring = IgnoringSignals::start();
    runtime().block_on(async {
        // (Not SIGQUIT: its default action may leave a core file behind.)
        for (name, number) in [("int", 2), ("SIGHUP", 1)] {
            let cat = SubprocessController::new("cat", LaunchSpec::new("cat"));
            let mut events = cat.subscribe();
            cat.start(no_meta(), None, false).unwrap();
            cat.send_input(ControllerInput::data("ready\n"), None)
                .unwrap();
            until_text(&mut events, "ready\n", &mut String::new()).await;
            cat.send_input(ControllerInput::signal(name), None).unwrap();
            let (_, exit) = until_exit(&mut events).await;
            assert_eq!(exit.signal, Some(number), "{name}: {exit:?}");
        }
        let shell = ShellController::new("term", LaunchSpec::new("sh").env("PS1", "$ "));
        let mut events = shell.subscribe();
        shell.start(no_meta(), None, false).unwrap();
        let mut seen = String::new();
        run_cat(&shell, &mut events, &mut seen, "cat", 1).await;
        shell
            .send_input(ControllerInput::signal("SIGINT"), Some(3))
            .unwrap();
        let before = seen.len();
        until(
            &mut events,
            &mut seen,
            |s| s[before..].contains("$ "),
            "a prompt after Ctrl-C",
        )
        .await;
        shell
            .send_input(ControllerInput::data("echo cat-ended-$?\n"), Some(4))
            .unwrap();
        until_text(&mut events, "cat-ended-130", &mut seen).await;
        shell
            .send_input(ControllerInput::data("exit\n"), None)
            .unwrap();
        until_exit(&mut events).await;
    });
}

#[test]
fn inputs_sent_with_shuffled_seq_arrive_in_order() {
    runtime().block_on(async {
        let cat = SubprocessController::new("cat", LaunchSpec::new("cat"));
        let mut events = cat.subscribe();
        cat.start(no_meta(), None, false).unwrap();
        // A fixed shuffle of 1..=200.
        let mut order: Vec<u64> = (1..=200).collect();
        let mut rng = support::Rng(0x9e37_79b9_7f4a_7c15);
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for seq in order {
            cat.send_input(ControllerInput::data(format!("{seq},")), Some(seq))
                .unwrap();
        }
        let expected: String = (1..=200).map(|n| format!("{n},")).collect();
        let mut seen = String::new();
        until_text(&mut events, "200,", &mut seen).await;
        assert_eq!(seen, expected);
        let err = cat
            .send_input(ControllerInput::data("x"), Some(5))
            .unwrap_err();
        assert!(
            matches!(
                err,
                ControllerError::StaleInput {
                    seq: 5,
                    expected: 201
                }
            ),
            "{err}"
        );
    });
}

#[test]
fn graceful_stops_end_early_and_stubborn_processes_are_killed_at_the_deadline() {
    runtime().block_on(async {
        let polite = SubprocessController::new(
            "polite",
            sh("trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done"),
        );
        let mut events = polite.subscribe();
        polite.start(no_meta(), None, false).unwrap();
        until_text(&mut events, "ready", &mut String::new()).await;
        let outcome = polite
            .shutdown(Instant::now() + Duration::from_secs(30))
            .await;
        assert_eq!(
            outcome,
            StopOutcome::Exited(0),
            "ended on SIGTERM, long before the deadline"
        );

        let plain = SubprocessController::new("plain", LaunchSpec::new("sleep").arg("600"));
        plain.start(no_meta(), None, false).unwrap();
        let outcome = plain
            .shutdown(Instant::now() + Duration::from_secs(30))
            .await;
        assert_eq!(outcome, StopOutcome::Stopped, "died of the SIGTERM itself");

        let stubborn = SubprocessController::new(
            "stubborn",
            sh("trap '' TERM; echo ready; while :; do sleep 0.05; done"),
        );
        let mut events = stubborn.subscribe();
        stubborn.start(no_meta(), None, false).unwrap();
        until_text(&mut events, "ready", &mut String::new()).await;
        let started = Instant::now();
        let outcome = stubborn
            .shutdown(Instant::now() + Duration::from_millis(500))
            .await;
        assert_eq!(outcome, StopOutcome::Killed);
        assert!(
            started.elapsed() >= Duration::from_millis(500),
            "not before the deadline"
        );
        assert_eq!(stubborn.get_runtime_status().status, Status::Done);

        let idle = SubprocessController::new("idle", LaunchSpec::new("true"));
        assert_eq!(idle.shutdown(Instant::now()).await, StopOutcome::NotRunning);
    });
}

#[test]
fn stop_leads_to_the_status_asked_for_and_a_graceful_stop_kills_after_the_grace() {
    runtime().block_on(async {
        let stubborn = SubprocessController::new(
            "s",
            sh("trap '' TERM; echo ready; while :; do sleep 0.05; done")
                .stop_grace(Duration::from_millis(200)),
        );
        let mut events = stubborn.subscribe();
        stubborn.start(no_meta(), None, false).unwrap();
        until_text(&mut events, "ready", &mut String::new()).await;
        stubborn.stop(true, "init").unwrap();
        let (_, exit) = until_exit(&mut events).await;
        assert_eq!(exit.signal, Some(9), "killed after the grace period");
        assert_eq!(stubborn.get_runtime_status().status, Status::Init);
        let err = stubborn.stop(true, "paused").unwrap_err();
        assert!(
            matches!(err, ControllerError::UnknownStatus { .. }),
            "{err}"
        );
        // Started again from its spec.
        stubborn.start(no_meta(), None, false).unwrap();
        until_text(&mut events, "ready", &mut String::new()).await;
        assert_eq!(stubborn.get_runtime_status().status, Status::Running);
        stubborn.stop(false, "done").unwrap();
        until_exit(&mut events).await;
    });
}

/// Starts `spec`, which prints `job=<pid>` for each of its `jobs` jobs;
/// returns the controller, the jobs' pids and the session its process
/// leads (the jobs in it).
async fn start_with_jobs(
    spec: LaunchSpec,
    jobs: usize,
) -> (SubprocessController, Vec<u32>, Session) {
    let command = SubprocessController::new("tree", spec);
    let mut events = command.subscribe();
    command.start(no_meta(), None, false).unwrap();
    let mut seen = String::new();
    until(
        &mut events,
        &mut seen,
        |s| pids_in(s, "job=").len() == jobs,
        "the jobs",
    )
    .await;
    let pids = pids_in(&seen, "job=");
    let session = Session::led_by(command.get_runtime_status().pid.unwrap());
    let live: Vec<u32> = session.live().iter().map(|p| p.pid).collect();
    assert!(
        pids.iter().all(|p| live.contains(p)),
        "the jobs {pids:?} run in the session: {live:?}"
    );
    (command, pids, session)
}

#[test]
fn a_command_and_its_background_jobs_leave_nothing_behind() {
    runtime().block_on(async {
        for (how, graceful) in [("stop", false), ("graceful stop", true), ("shutdown", true)] {
            let (command, jobs, session) = start_with_jobs(
                sh("sleep 600 & echo job=$!; (sleep 600 & echo job=$!; wait) & wait"),
                2,
            )
            .await;
            // The `( ... ) &` subshell, which no `$!` names: the second
            // job's parent, a child of the leader.
            let subshell = Process::read(jobs[1]).expect("the job runs").parent;
            assert!(
                session
                    .live()
                    .iter()
                    .any(|p| p.pid == subshell && p.parent == session.id),
                "the subshell {subshell} runs in the session: {:#?}",
                session.live()
            );
            if how == "shutdown" {
                shut_down_leaving_nothing(&command).await;
            } else {
                command.stop(graceful, "done").unwrap();
                session.wait_empty(how);
            }
        }
    });
}

#[test]
fn jobs_that_leave_the_process_group_are_still_ended() {
    runtime().block_on(async {
        // `timeout` puts itself (and the child it starts) in a process
        // group of its own; so does a shell with job control for each job
        // (bash: dash turns job control off without a terminal).
        let (command, jobs, session) = start_with_jobs(
            LaunchSpec::new("bash").args([
                "-c",
                "timeout 1000 sleep 600 & echo job=$!; set -m; sleep 600 & echo job=$!; wait",
            ]),
            2,
        )
        .await;
        // `timeout`'s child, which no `$!` names, once it is there (`timeout`
        // has made its group by then).
        let live = session.wait_for("child of `timeout`", |live| {
            live.iter().any(|p| p.parent == jobs[0])
        });
        let child = live.iter().find(|p| p.parent == jobs[0]).unwrap();
        let group_of = |pid: u32| live.iter().find(|p| p.pid == pid).map(|p| p.group);
        assert_eq!(
            (group_of(jobs[0]), child.group, group_of(jobs[1])),
            (Some(jobs[0]), jobs[0], Some(jobs[1])),
            "groups of their own, out of the leader's: {live:#?}"
        );
        shut_down_leaving_nothing(&command).await;
    });
}

#[test]
fn eof_closes_a_commands_stdin() {
    runtime().block_on(async {
        let wc = SubprocessController::new("wc", LaunchSpec::new("wc").arg("-c"));
        let mut events = wc.subscribe();
        wc.start(no_meta(), None, false).unwrap();
        wc.send_input(ControllerInput::data("12345"), Some(1))
            .unwrap();
        wc.send_input(ControllerInput::eof(), Some(2)).unwrap();
        let (output, exit) = until_exit(&mut events).await;
        assert_eq!(text_of(&output, OutputStream::Stdout).trim(), "5");
        assert_eq!(exit.code, Some(0));
    });
}

#[test]
fn a_stopped_controller_starts_again_without_force() {
    runtime().block_on(async {
        let command = SubprocessController::new("again", LaunchSpec::new("sleep").arg("600"));
        command.start(no_meta(), None, false).unwrap();
        let first = command.get_runtime_status().pid.unwrap();
        // What one run keeps going on this (otherwise idle) runtime.
        let per_run = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks();
        command.stop(false, "init").unwrap();
        // At once, before the old process is reaped: a new one starts.
        command.start(no_meta(), None, false).unwrap();
        let second = command.get_runtime_status().pid.unwrap();
        let mut events = command.subscribe();
        assert_ne!(first, second);
        assert_eq!(command.get_runtime_status().status, Status::Running);
        // The old process's end is not reported to this run's subscribers:
        // once the old run's tasks have ended, its watcher has had its say.
        until_tasks_at_most(per_run, "the first run's tasks").await;
        assert!(events.try_recv().is_err(), "no stale exit event");
        assert_eq!(command.get_runtime_status().status, Status::Running);
        command.stop(false, "done").unwrap();
        let (_, exit) = until_exit(&mut events).await;
        assert_eq!(exit.signal, Some(9));
        wait_gone(&[first, second], "processes", exists);
    });
}

#[test]
fn a_subscriber_that_never_reads_does_not_stop_a_shutdown() {
    runtime().block_on(async {
        let chatty = SubprocessController::new("yes", LaunchSpec::new("yes"));
        let never_read = chatty.subscribe();
        chatty.start(no_meta(), None, false).unwrap();
        // Its queue full: the output readers now wait for room in it.
        let deadline = Instant::now() + Duration::from_secs(30);
        while never_read.capacity() > 0 {
            assert!(
                Instant::now() < deadline,
                "the subscriber's queue never filled"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let outcome = tokio::time::timeout(
            Duration::from_secs(20),
            chatty.shutdown(Instant::now() + Duration::from_secs(2)),
        )
        .await
        .expect("shutdown resolves");
        assert!(
            matches!(outcome, StopOutcome::Stopped | StopOutcome::Killed),
            "{outcome:?}"
        );
        assert_eq!(chatty.get_runtime_status().status, Status::Done);
    });
}

#[test]
fn shutting_everything_down_runs_in_parallel() {
    runtime().block_on(async {
        let marks = tempfile::tempdir().unwrap();
        let registry = ControllerRegistry::new();
        let mut events = Vec::new();
        for id in ["a", "b", "c"] {
            // Asked to stop, each says so (a file named after it), then
            // exits only once all three have been asked: stopped one after
            // another, the first would wait for the others until killed at
            // the deadline.
            let spec = sh(r#"trap 'touch "$MARKS/$ID"
                    until [ -e "$MARKS/a" ] && [ -e "$MARKS/b" ] && [ -e "$MARKS/c" ]; do
                        sleep 0.01
                    done
                    exit 0' TERM
                echo ready; while :; do sleep 0.05; done"#)
            .env("MARKS", marks.path())
            .env("ID", id);
            let slow = Arc::new(SubprocessController::new(id, spec));
            let mut subscriber = slow.subscribe();
            slow.start(no_meta(), None, false).unwrap();
            until_text(&mut subscriber, "ready", &mut String::new()).await;
            events.push(subscriber);
            registry.register(slow);
        }
        let outcomes = registry
            .shutdown_all(Instant::now() + Duration::from_secs(30))
            .await;
        assert_eq!(
            outcomes,
            [
                ("a".to_owned(), StopOutcome::Exited(0)),
                ("b".to_owned(), StopOutcome::Exited(0)),
                ("c".to_owned(), StopOutcome::Exited(0)),
            ],
            "each was asked to stop before any had ended"
        );
        assert!(registry.ids().is_empty());
    });
}

#[test]
fn five_hundred_start_stop_cycles_leave_no_zombie() {
    let runtime = runtime();
    let mut pids = Vec::new();
    runtime.block_on(async {
        let command = SubprocessController::new("cycle", LaunchSpec::new("sleep").arg("600"));
        for _ in 0..500 {
            command.start(no_meta(), None, true).unwrap();
            pids.push(command.get_runtime_status().pid.unwrap());
            command.stop(false, "init").unwrap();
        }
        let outcome = command
            .shutdown(Instant::now() + Duration::from_secs(5))
            .await;
        assert!(
            matches!(
                outcome,
                StopOutcome::NotRunning | StopOutcome::Killed | StopOutcome::Stopped
            ),
            "{outcome:?}"
        );
        wait_gone(&pids, "processes (zombie or not)", exists);
    });
}

#[test]
fn a_program_that_cannot_start_is_named_and_no_runtime_is_an_error() {
    runtime().block_on(async {
        let missing = SubprocessController::new("m", LaunchSpec::new("/no/such/program"));
        let err = missing.start(no_meta(), None, false).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot start `/no/such/program`: "),
            "{err}"
        );
        assert_eq!(missing.get_runtime_status().status, Status::Init);
    });
    let outside = SubprocessController::new("o", LaunchSpec::new("true"));
    let err = outside.start(no_meta(), None, false).unwrap_err();
    assert!(matches!(err, ControllerError::NoRuntime), "{err}");
}

/// Types `command` (which runs `cat`) with sequence number `seq`, then a
/// line for it; returns once `cat` has echoed the line, so it surely is the
/// foreground job.
async fn run_cat(
    shell: &ShellController,
    events: &mut mpsc::Receiver<OutputEvent>,
    seen: &mut String,
    command: &str,
    seq: u64,
) {
    let word = format!("line-{seq}");
    shell
        .send_input(ControllerInput::data(format!("{command}\n")), Some(seq))
        .unwrap();
    shell
        .send_input(ControllerInput::data(format!("{word}\n")), Some(seq + 1))
        .unwrap();
    // Once from the terminal's echo, once from `cat`.
    until(
        events,
        seen,
        |s| s.matches(&word).count() >= 2,
        "cat's echo",
    )
    .await;
}

#[test]
fn a_shell_on_a_terminal_echoes_resizes_and_exits_with_its_code() {
    runtime().block_on(async {
        let shell = ShellController::new("term", LaunchSpec::new("sh").env("PS1", "$ "));
        let mut events = shell.subscribe();
        shell
            .start(
                no_meta(),
                Some(json!({"termsize": {"rows": 50, "cols": 132}})),
                false,
            )
            .unwrap();
        let mut seen = String::new();
        shell
            .send_input(ControllerInput::data("echo typed-$((40+2))\n"), None)
            .unwrap();
        until_text(&mut events, "typed-42", &mut seen).await;
        shell
            .send_input(ControllerInput::data("stty size\n"), None)
            .unwrap();
        until_text(&mut events, "50 132", &mut seen).await;
        shell
            .send_input(ControllerInput::resize(30, 100), None)
            .unwrap();
        shell
            .send_input(ControllerInput::data("stty size\n"), None)
            .unwrap();
        until_text(&mut events, "30 100", &mut seen).await;
        // SIGINT goes to the foreground job, as Ctrl-C would.
        run_cat(&shell, &mut events, &mut seen, "cat", 1).await;
        shell
            .send_input(ControllerInput::signal("SIGINT"), Some(3))
            .unwrap();
        // The shell drops what is typed while it recovers: wait for its
        // prompt, as a person would.
        let before = seen.len();
        until(
            &mut events,
            &mut seen,
            |s| s[before..].contains("$ "),
            "a prompt",
        )
        .await;
        shell
            .send_input(ControllerInput::data("echo cat-ended-$?\n"), Some(4))
            .unwrap();
        until_text(&mut events, "cat-ended-130", &mut seen).await;
        // Ctrl-D ends a program reading the terminal.
        run_cat(&shell, &mut events, &mut seen, "cat; echo cat-done-$?", 5).await;
        shell.send_input(ControllerInput::eof(), Some(7)).unwrap();
        until_text(&mut events, "cat-done-0", &mut seen).await;
        shell
            .send_input(ControllerInput::data("exit 3\n"), None)
            .unwrap();
        let (_, exit) = until_exit(&mut events).await;
        assert_eq!(
            exit,
            ExitInfo {
                code: Some(3),
                signal: None
            }
        );
        let status = shell.get_runtime_status();
        assert_eq!((status.status, status.exit_code), (Status::Done, Some(3)));
        assert_eq!(status.controller_type, "shell");
    });
}

#[test]
fn a_shell_and_its_jobs_leave_nothing_behind_but_a_replace_spares_the_jobs() {
    runtime().block_on(async {
        // Shutdown: the shell and its jobs (each in its own group) go.
        let shell = ShellController::new("t", LaunchSpec::new("sh"));
        let mut events = shell.subscribe();
        shell.start(no_meta(), None, false).unwrap();
        let mut seen = String::new();
        shell
            .send_input(
                ControllerInput::data(
                    "sleep 600 & echo job=$!; (sleep 600 & echo job=$!); echo mark-$((2*3))\n",
                ),
                None,
            )
            .unwrap();
        until_text(&mut events, "mark-6", &mut seen).await;
        let jobs = pids_in(&seen, "job=");
        assert_eq!(jobs.len(), 2, "a job, and an orphaned grandchild: {seen}");
        let session = Session::led_by(shell.get_runtime_status().pid.unwrap());
        let live: Vec<u32> = session.live().iter().map(|p| p.pid).collect();
        assert!(
            jobs.iter().all(|p| live.contains(p)),
            "the jobs {jobs:?} run in the session: {live:?}"
        );
        shut_down_leaving_nothing(&shell).await;

        // Replace: the old shell goes, its job stays.
        let registry = ControllerRegistry::new();
        let old = Arc::new(ShellController::new("t", LaunchSpec::new("sh")));
        let mut events = old.subscribe();
        old.start(no_meta(), None, false).unwrap();
        registry.register(old.clone());
        let mut seen = String::new();
        old.send_input(ControllerInput::data("sleep 600 & echo job=$!\n"), None)
            .unwrap();
        until(
            &mut events,
            &mut seen,
            |s| pids_in(s, "job=").len() == 1,
            "the job",
        )
        .await;
        let job = pids_in(&seen, "job=")[0];
        let old_pid = old.get_runtime_status().pid.unwrap();
        let new = Arc::new(ShellController::new("t", LaunchSpec::new("sh")));
        let replaced = registry
            .register(new.clone())
            .expect("the old one is handed back");
        drop(replaced);
        drop(old);
        until_exit(&mut events).await;
        wait_gone(&[old_pid], "the replaced shell", alive);
        // Everything the old shell's run had going is over (its watcher,
        // which would end what is left of the session, last): the job is
        // spared for good, not for now.
        until_tasks_at_most(0, "the replaced shell's tasks").await;
        assert!(alive(job), "the job outlives a replace");
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(job as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        assert_eq!(registry.ids(), ["t"]);
        assert!(Arc::ptr_eq(
            &registry.get("t").unwrap(),
            &(new as Arc<dyn Controller>)
        ));
    });
}

#[test]
fn the_registry_lists_routes_input_and_removes_with_a_shutdown() {
    runtime().block_on(async {
        let registry = ControllerRegistry::new();
        let cat = Arc::new(SubprocessController::new("b-cat", LaunchSpec::new("cat")));
        let mut events = cat.subscribe();
        cat.start(no_meta(), None, false).unwrap();
        registry.register(cat.clone());
        registry.register(Arc::new(SubprocessController::new(
            "a-idle",
            LaunchSpec::new("true"),
        )));
        let listed: Vec<_> = registry
            .list()
            .into_iter()
            .map(|s| (s.id, s.status))
            .collect();
        assert_eq!(
            listed,
            [
                ("a-idle".to_owned(), Status::Init),
                ("b-cat".to_owned(), Status::Running)
            ]
        );
        registry
            .send_input("b-cat", ControllerInput::data("via registry\n"), None)
            .unwrap();
        until_text(&mut events, "via registry", &mut String::new()).await;
        let err = registry
            .send_input("nope", ControllerInput::data("x"), None)
            .unwrap_err();
        assert_eq!(err.to_string(), "no controller `nope`");
        let outcome = registry
            .remove("b-cat", Instant::now() + Duration::from_secs(10))
            .await;
        assert_eq!(outcome, Some(StopOutcome::Stopped));
        assert_eq!(registry.ids(), ["a-idle"]);
        assert_eq!(
            registry.remove("b-cat", Instant::now()).await,
            None,
            "already gone"
        );
        let all = registry
            .shutdown_all(Instant::now() + Duration::from_secs(5))
            .await;
        assert_eq!(all, [("a-idle".to_owned(), StopOutcome::NotRunning)]);
    });
}

#[test]
#[ignore = "needs python peers"]
fn an_acp_agent_takes_prompts_as_turns_and_asks_the_handler() {
    runtime().block_on(async {
        let script = format!("{}/tests/peers/acp_agent.py", env!("CARGO_MANIFEST_DIR"));
        let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = asked.clone();
        let agent = AgentController::new(
            "agent",
            LaunchSpec::new("python3").arg(script).cwd("/tmp"),
            move |request: gangway::stdio::IncomingRequest| {
                let log = log.clone();
                async move {
                    log.lock().unwrap().push(request.method.clone());
                    let option = request.params["options"][0]["optionId"].clone();
                    Ok(json!({"outcome": {"outcome": "selected", "optionId": option}}))
                }
            },
        );
        let mut events = agent.subscribe();
        agent.start(no_meta(), None, false).unwrap();
        let tracker = agent.turn_tracker().unwrap();
        agent
            .send_input(ControllerInput::data("hello"), Some(1))
            .unwrap();
        agent.prompt("second").unwrap();
        tokio::time::timeout(Duration::from_secs(60), tracker.wait_completed(2))
            .await
            .expect("both turns end");
        assert_eq!(tracker.turns_started(), 2);
        assert_eq!(tracker.last_stop_reason().as_deref(), Some("end_turn"));
        assert_eq!(tracker.provenance(), Some(TurnProvenance::Host));
        assert!(agent.session_id().unwrap().starts_with("sess-"));
        let mut seen = String::new();
        until_text(&mut events, "permission: allow", &mut seen).await;
        until_text(&mut events, "echo: second", &mut seen).await;
        until_text(&mut events, "end_turn", &mut seen).await;
        assert!(seen.contains("echo: hello"), "{seen}");
        // Every line is one JSON message.
        for line in seen.lines() {
            serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        }
        assert_eq!(
            *asked.lock().unwrap(),
            ["session/request_permission", "session/request_permission"]
        );
        let outcome = agent
            .shutdown(Instant::now() + Duration::from_secs(10))
            .await;
        assert_eq!(outcome, StopOutcome::Exited(0));
        let status = agent.get_runtime_status();
        assert_eq!(
            (status.status, status.exit_code),
            (Status::Done, Some(0)),
            "{status:?}"
        );
    });
}

#[test]
#[ignore = "needs python peers"]
fn an_agent_shut_down_with_prompts_queued_starts_none_of_them() {
    runtime().block_on(async {
        let script = format!("{}/tests/peers/acp_agent.py", env!("CARGO_MANIFEST_DIR"));
        // A handler that never answers: the first turn waits on it.
        let agent = AgentController::new(
            "agent",
            LaunchSpec::new("python3").arg(script),
            |_request: gangway::stdio::IncomingRequest| std::future::pending(),
        );
        let mut events = agent.subscribe();
        agent.start(no_meta(), None, false).unwrap();
        for text in ["first", "second", "third"] {
            agent.send_input(ControllerInput::data(text), None).unwrap();
        }
        until_text(&mut events, "asking permission", &mut String::new()).await;
        let tracker = agent.turn_tracker().unwrap();
        assert!(tracker.is_active());
        assert_eq!(agent.turn_provenance(), Some(TurnProvenance::User));
        let outcome = agent
            .shutdown(Instant::now() + Duration::from_secs(20))
            .await;
        let tail = String::from_utf8(agent.output_tail()).unwrap();
        assert_eq!(
            outcome,
            StopOutcome::Exited(0),
            "ended well before the deadline: {tail}"
        );
        assert_eq!(tracker.turns_started(), 1, "the queued prompts never began");
        assert!(
            tail.contains("permission: cancelled"),
            "the waiting permission request was answered cancelled: {tail}"
        );
    });
}

/// Whether this process has received SIGUSR1 (the handler below sets it).
static GOT_USR1: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn note_usr1(_: nix::libc::c_int) {
    GOT_USR1.store(true, std::sync::atomic::Ordering::SeqCst);
}

#[test]
fn signals_for_a_shell_whose_leader_is_gone_never_reach_the_host() {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        sigaction(
            Signal::SIGUSR1,
            &SigAction::new(
                SigHandler::Handler(note_usr1),
                SaFlags::empty(),
                SigSet::empty(),
            ),
        )
        .unwrap();
    }
    runtime().block_on(async {
        // The leader exits (once it reads a line) while a process in a
        // session of its own keeps the terminal open: the terminal then has
        // no foreground group.
        let shell = ShellController::new(
            "gone",
            sh("trap '' USR1; setsid sleep 60 & echo keeper=$!; echo ignoring; read line; exit 0"),
        );
        let mut events = shell.subscribe();
        shell.start(no_meta(), None, false).unwrap();
        let mut seen = String::new();
        until_text(&mut events, "ignoring", &mut seen).await;
        let keeper = pids_in(&seen, "keeper=")[0];
        // Until it has a session of its own, the keeper would go with the
        // leader's (hung up, or ended with what the leader left).
        wait_for_process(keeper, "keeper in a session of its own", |p| {
            p.session == keeper && p.name == "sleep"
        });
        let usr1 = || ControllerInput::signal("USR1");
        // While the leader lives, every signal is taken (and ignored).
        let mut seq = 1;
        for _ in 0..20 {
            shell.send_input(usr1(), Some(seq)).unwrap();
            shell.send_input(usr1(), None).unwrap();
            seq += 1;
        }
        shell
            .send_input(ControllerInput::data("go\n"), Some(seq))
            .unwrap();
        seq += 1;
        // Then through its exit and past it: each signal is taken (queued
        // behind the line, so it meets the leaderless terminal, or the end
        // of the run) or, once the controller has recorded the exit,
        // refused as not running, and never taken again after that. At
        // most 100 rounds, 240 inputs in all, well within the writer's
        // queue however far it falls behind.
        let mut refused = false;
        for _ in 0..100 {
            for seq in [Some(seq), None] {
                match shell.send_input(usr1(), seq) {
                    Ok(()) => assert!(!refused, "taken after a refusal"),
                    Err(ControllerError::NotRunning { .. }) => refused = true,
                    Err(other) => panic!("{other}"),
                }
            }
            if refused {
                break;
            }
            seq += 1;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let (_, exit) = until_exit(&mut events).await;
        assert_eq!(exit.code, Some(0), "{exit:?}");
        let err = shell.send_input(usr1(), None).unwrap_err();
        assert!(matches!(err, ControllerError::NotRunning { .. }), "{err}");
        let status = shell.get_runtime_status();
        assert_eq!(
            (status.status, status.exit_code),
            (Status::Done, Some(0)),
            "{status:?}"
        );
        assert!(alive(keeper), "the keeper held the terminal throughout");
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(keeper as i32),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
    });
    assert!(
        !GOT_USR1.load(std::sync::atomic::Ordering::SeqCst),
        "a signal meant for the shell reached the host"
    );
}

/// A process's standard input when it is a pipe, opened for looking (never
/// reading): how full the pipe is.
struct PipeGauge(std::fs::File);

impl PipeGauge {
    fn of(pid: u32) -> PipeGauge {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening the link opens the pipe itself, as another reader.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(format!("/proc/{pid}/fd/0"))
            .unwrap();
        PipeGauge(file)
    }

    /// Whether the pipe has no room for `bytes` more (not more than
    /// `PIPE_BUF`, so written whole or not at all).
    fn has_no_room_for(&self, bytes: usize) -> bool {
        use std::os::fd::AsRawFd;
        let fd = self.0.as_raw_fd();
        let mut queued: nix::libc::c_int = 0;
        // SAFETY: `fd` is open for the call, and FIONREAD writes one int
        // to the pointer given.
        let read = unsafe { nix::libc::ioctl(fd, nix::libc::FIONREAD, &mut queued) };
        // SAFETY: as above; F_GETPIPE_SZ takes no argument.
        let size = unsafe { nix::libc::fcntl(fd, nix::libc::F_GETPIPE_SZ) };
        assert!(read == 0 && size > 0, "{}", std::io::Error::last_os_error());
        queued as usize + bytes > size as usize
    }
}

#[test]
fn sequenced_input_refused_for_lack_of_room_is_kept_for_the_retry() {
    runtime().block_on(async {
        let gate = tempfile::tempdir().unwrap();
        // Reads nothing until the file `go` appears, then echoes everything.
        let slow = SubprocessController::new(
            "slow",
            sh(r#"until [ -e "$GATE/go" ]; do sleep 0.01; done; exec cat"#)
                .env("GATE", gate.path()),
        );
        let mut events = slow.subscribe();
        slow.start(no_meta(), None, false).unwrap();
        let chunk = "f".repeat(1024);
        let mut queued = 0usize;
        // Queues chunks until the input queue has no room.
        let fill = |queued: &mut usize| loop {
            match slow.send_input(ControllerInput::data(chunk.clone()), None) {
                Ok(()) => *queued += 1,
                Err(ControllerError::InputBacklogFull { .. }) => break,
                Err(other) => panic!("{other}"),
            }
        };
        // Fill the queue until the pipe behind it is full too: the writer
        // is then stuck on the pipe, and no room comes while nothing reads.
        let gauge = PipeGauge::of(slow.get_runtime_status().pid.unwrap());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            fill(&mut queued);
            if gauge.has_no_room_for(chunk.len()) {
                break;
            }
            assert!(Instant::now() < deadline, "the pipe never filled");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // What the writer took from the queue meanwhile.
        fill(&mut queued);
        drop(gauge);
        // 2 to 5 wait for 1, which finds no room.
        for seq in 2..=5u64 {
            slow.send_input(ControllerInput::data(format!("<{seq}>")), Some(seq))
                .unwrap();
        }
        let err = slow
            .send_input(ControllerInput::data("<1>"), Some(1))
            .unwrap_err();
        assert!(
            matches!(err, ControllerError::InputBacklogFull { .. }),
            "{err}"
        );
        // Once `cat` reads, the same number goes through, and 2 to 5 follow.
        std::fs::write(gate.path().join("go"), b"").unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while let Err(err) = slow.send_input(ControllerInput::data("<1>"), Some(1)) {
            assert!(
                matches!(err, ControllerError::InputBacklogFull { .. }),
                "{err}"
            );
            assert!(Instant::now() < deadline, "no room came");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut seen = String::new();
        until_text(&mut events, "<5>", &mut seen).await;
        assert_eq!(seen.matches(&chunk).count(), queued, "every chunk arrived");
        assert!(
            seen.ends_with("<1><2><3><4><5>"),
            "{}",
            &seen[seen.len() - 40..]
        );
        slow.stop(false, "done").unwrap();
    });
}
