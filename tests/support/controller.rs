//! What the controller tests share: launching commands and jobs, reading a
//! controller's output until some text or its exit, typing into a shell
//! (and interrupting a program there), and waiting until processes and
//! tasks are gone.

// Each test file uses a part.
#![allow(dead_code)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use gangway::controller::{
    Controller, ControllerInput, ExitInfo, LaunchSpec, OutputEvent, OutputSource, ShellController,
    SubprocessController,
};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::support::processes::Session;

pub fn no_meta() -> HashMap<String, Value> {
    HashMap::new()
}

pub fn sh(script: &str) -> LaunchSpec {
    LaunchSpec::new("sh").args(["-c", script])
}

/// Collects events until the exit event (or fails after 60 s: a failure
/// bound only, generous for a loaded machine).
pub async fn until_exit(
    events: &mut mpsc::Receiver<OutputEvent>,
) -> (Vec<(OutputSource, Vec<u8>)>, ExitInfo) {
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
pub fn text_of(output: &[(OutputSource, Vec<u8>)], stream: OutputSource) -> String {
    output
        .iter()
        .filter(|(s, _)| *s == stream)
        .map(|(_, d)| String::from_utf8_lossy(d).into_owned())
        .collect()
}

/// Reads output into `seen` until `needle` is in it (or fails after 60 s).
pub async fn until_text(events: &mut mpsc::Receiver<OutputEvent>, needle: &str, seen: &mut String) {
    until(events, seen, |seen| seen.contains(needle), needle).await;
}

/// Reads output into `seen` until `done(seen)` (or fails after 60 s).
pub async fn until(
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
pub fn exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Waits (up to 20 s) until `check` holds for none of `pids`.
pub fn wait_gone(pids: &[u32], what: &str, check: fn(u32) -> bool) {
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
pub fn pids_in(text: &str, prefix: &str) -> Vec<u32> {
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
pub async fn until_tasks_at_most(tasks: usize, what: &str) {
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

/// Starts `spec`, which prints `job=<pid>` for each of its `jobs` jobs;
/// returns the controller, the jobs' pids and the session its process
/// leads (the jobs in it).
pub async fn start_with_jobs(
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

/// Types `command` (which runs `cat`) with sequence number `seq`, then a
/// line for it; returns once `cat` has echoed the line, so it surely is the
/// foreground job.
pub async fn run_cat(
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

/// Runs `cat` in `shell` (inputs 1 and 2), interrupts it as Ctrl-C would
/// (SIGINT to the foreground job, input 3), and checks that it ended by
/// that signal: `$?` is 130 (input 4).
pub async fn interrupt_cat(
    shell: &ShellController,
    events: &mut mpsc::Receiver<OutputEvent>,
    seen: &mut String,
) {
    run_cat(shell, events, seen, "cat", 1).await;
    shell
        .send_input(ControllerInput::signal("SIGINT"), Some(3))
        .unwrap();
    // The shell drops what is typed while it recovers: wait for its
    // prompt, as a person would.
    let before = seen.len();
    until(
        events,
        seen,
        |s| s[before..].contains("$ "),
        "a prompt after Ctrl-C",
    )
    .await;
    shell
        .send_input(ControllerInput::data("echo cat-ended-$?\n"), Some(4))
        .unwrap();
    until_text(events, "cat-ended-130", seen).await;
}
