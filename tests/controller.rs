//! Controllers running real processes: commands, a shell on a terminal, an
//! ACP agent; their output, input, signals, exits and stops, and that
//! nothing they start is left behind.

mod support;

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

/// Collects events until the exit event (or fails after 20 s).
async fn until_exit(
    events: &mut mpsc::Receiver<OutputEvent>,
) -> (Vec<(OutputStream, Vec<u8>)>, ExitInfo) {
    let mut output = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), events.recv())
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

/// Reads output into `seen` until `needle` is in it (or fails after 20 s).
async fn until_text(events: &mut mpsc::Receiver<OutputEvent>, needle: &str, seen: &mut String) {
    until(events, seen, |seen| seen.contains(needle), needle).await;
}

/// Reads output into `seen` until `done(seen)` (or fails after 20 s).
async fn until(
    events: &mut mpsc::Receiver<OutputEvent>,
    seen: &mut String,
    done: impl Fn(&str) -> bool,
    needle: &str,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !done(seen) {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Some(OutputEvent::Output { data, .. })) => {
                seen.push_str(&String::from_utf8_lossy(&data))
            }
            Ok(Some(OutputEvent::Exit(exit))) => {
                panic!("exited ({exit:?}) before {needle:?}: {seen}")
            }
            Ok(None) => panic!("the hub closed before {needle:?}"),
            Err(_) => panic!("no {needle:?} after 20 s: {seen}"),
        }
    }
}

/// Whether a process with this pid is alive (a zombie is not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat[stat.rfind(')')? + 2..]
                .split_whitespace()
                .next()?
                .to_owned();
            Some(state != "Z")
        })
        .unwrap_or(false)
}

/// Whether the pid exists at all, zombie or not.
fn exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Waits (up to 20 s) until none of `pids` is alive.
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

/// Starts `script`, which prints `job=<pid>` for each of its `jobs` jobs;
/// returns the controller and the pids (the jobs', then its own).
async fn start_with_jobs(script: &str, jobs: usize) -> (SubprocessController, Vec<u32>) {
    let command = SubprocessController::new("tree", sh(script));
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
    let mut pids = pids_in(&seen, "job=");
    pids.push(command.get_runtime_status().pid.unwrap());
    assert!(pids.iter().all(|p| alive(*p)), "all running first");
    (command, pids)
}

#[test]
fn a_command_and_its_background_jobs_leave_nothing_behind() {
    runtime().block_on(async {
        for (how, graceful) in [("stop", false), ("graceful stop", true), ("shutdown", true)] {
            let (command, pids) = start_with_jobs(
                "sleep 600 & echo job=$!; (sleep 600 & echo job=$!; wait) & wait",
                2,
            )
            .await;
            if how == "shutdown" {
                command
                    .shutdown(Instant::now() + Duration::from_secs(10))
                    .await;
            } else {
                command.stop(graceful, "done").unwrap();
            }
            wait_gone(&pids, how, alive);
        }
    });
}

#[test]
fn jobs_that_leave_the_process_group_are_still_ended() {
    runtime().block_on(async {
        // `timeout` puts itself in a process group of its own; so does a
        // shell with job control for each job.
        let (command, pids) = start_with_jobs(
            "timeout 1000 sleep 600 & echo job=$!; set -m; sleep 600 & echo job=$!; wait",
            2,
        )
        .await;
        let outcome = command
            .shutdown(Instant::now() + Duration::from_secs(10))
            .await;
        assert!(
            matches!(outcome, StopOutcome::Stopped | StopOutcome::Exited(_)),
            "{outcome:?}"
        );
        wait_gone(&pids, "jobs in groups of their own", alive);
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
        command.stop(false, "init").unwrap();
        // At once, before the old process is reaped: a new one starts.
        command.start(no_meta(), None, false).unwrap();
        let second = command.get_runtime_status().pid.unwrap();
        let mut events = command.subscribe();
        assert_ne!(first, second);
        assert_eq!(command.get_runtime_status().status, Status::Running);
        // The old process's end is not reported to this run's subscribers.
        tokio::time::sleep(Duration::from_millis(300)).await;
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
        let _never_read = chatty.subscribe();
        chatty.start(no_meta(), None, false).unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
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
        let registry = ControllerRegistry::new();
        let mut events = Vec::new();
        for id in ["a", "b", "c"] {
            // Each takes a second to finish once asked.
            let slow = Arc::new(SubprocessController::new(
                id,
                sh("trap 'sleep 1; exit 0' TERM; echo ready; while :; do sleep 0.05; done"),
            ));
            let mut subscriber = slow.subscribe();
            slow.start(no_meta(), None, false).unwrap();
            until_text(&mut subscriber, "ready", &mut String::new()).await;
            events.push(subscriber);
            registry.register(slow);
        }
        let outcomes = registry
            .shutdown_all(Instant::now() + Duration::from_millis(2500))
            .await;
        assert_eq!(
            outcomes,
            [
                ("a".to_owned(), StopOutcome::Exited(0)),
                ("b".to_owned(), StopOutcome::Exited(0)),
                ("c".to_owned(), StopOutcome::Exited(0)),
            ],
            "all three had their second at once"
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
        let mut pids = pids_in(&seen, "job=");
        assert_eq!(pids.len(), 2, "a job, and an orphaned grandchild: {seen}");
        pids.push(shell.get_runtime_status().pid.unwrap());
        let outcome = shell
            .shutdown(Instant::now() + Duration::from_secs(10))
            .await;
        assert!(
            matches!(outcome, StopOutcome::Stopped | StopOutcome::Exited(_)),
            "{outcome:?}"
        );
        wait_gone(&pids, "shell processes", alive);

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
        std::thread::sleep(Duration::from_millis(200));
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
        // The leader exits while a process in a session of its own keeps the
        // terminal open: the terminal then has no foreground group.
        let shell = ShellController::new(
            "gone",
            sh("trap '' USR1; echo ignoring; setsid sleep 2 & sleep 0.3; exit 0"),
        );
        let mut events = shell.subscribe();
        shell.start(no_meta(), None, false).unwrap();
        until_text(&mut events, "ignoring", &mut String::new()).await;
        drop(events);
        let until = Instant::now() + Duration::from_millis(1500);
        let mut seq = 1;
        while Instant::now() < until {
            let _ = shell.send_input(ControllerInput::signal("USR1"), Some(seq));
            let _ = shell.send_input(ControllerInput::signal("USR1"), None);
            seq += 1;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let status = shell.get_runtime_status();
        assert_eq!(
            (status.status, status.exit_code),
            (Status::Done, Some(0)),
            "{status:?}"
        );
    });
    assert!(
        !GOT_USR1.load(std::sync::atomic::Ordering::SeqCst),
        "a signal meant for the shell reached the host"
    );
}

#[test]
fn sequenced_input_refused_for_lack_of_room_is_kept_for_the_retry() {
    runtime().block_on(async {
        // Reads nothing for a second, then echoes everything.
        let slow = SubprocessController::new("slow", sh("sleep 1; cat"));
        let mut events = slow.subscribe();
        slow.start(no_meta(), None, false).unwrap();
        // Fill the pipe and the input queue.
        let chunk = "f".repeat(1024);
        let mut queued = 0usize;
        while slow
            .send_input(ControllerInput::data(chunk.clone()), None)
            .is_ok()
        {
            queued += 1;
        }
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
        let deadline = Instant::now() + Duration::from_secs(20);
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
