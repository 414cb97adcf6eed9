//! How a call learns it is cancelled, through the real wrappers: a signal
//! that comes before the client watches for it ends the client as it ends
//! any program (and the host sees its caller leave), and a hand-written
//! `IpcCommand` finds its call's cancel through `CallContext::current()`.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use common::process::{children, finish, signal_client, spawn, wait_catching_signals};
use common::streaming::{Probes, probed_host};
use common::{Host, PATIENCE, Style, each_style, wait_until};
use gangway::ipc::{CancelReason, IpcServer};

/// A host with the probe commands, wrappers of `style`, a short grace.
fn host(style: Style) -> (Host, Probes) {
    probed_host(IpcServer::builder(), style, Duration::from_millis(300))
}

/// Sends `signal` to process `pid` (a group, negative), if it is still
/// there.
fn kill(pid: i32, signal: i32) {
    // SAFETY: kill(2) on processes this test started.
    unsafe { libc::kill(pid, signal) };
}

/// Whether every thread of process `pid` is stopped (by SIGSTOP), or the
/// process is gone. Every thread: one still running could be the one
/// installing the signal watch, and `SigCgt` read before it stops would
/// be out of date by the time the signal lands.
fn stopped_or_gone(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return true;
    };
    tasks.flatten().all(|task| {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            return true;
        };
        let state = stat
            .rfind(')')
            .and_then(|end| stat[end + 1..].trim_start().chars().next());
        matches!(state, Some('T' | 'Z' | 'X'))
    })
}

/// Whether process `pid` catches SIGINT (its `SigCgt` mask).
fn catches_sigint(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (libc::SIGINT - 1)) != 0)
}

/// The newest process at the bottom of `pid`'s tree: the client a shell
/// runs, or `pid` itself.
fn leaf(mut pid: u32) -> u32 {
    while let Some(below) = children(pid).into_iter().max() {
        pid = below;
    }
    pid
}

/// How an attempt to signal the client before its watch went.
const PENDING: u8 = 0;
const EARLY: u8 = 1;
const LATE: u8 = 2;

/// Makes each `keep` handler, as it begins, stop its caller's process
/// group (which `target` names) and, if the client at its bottom does not
/// catch SIGINT yet, send the client one, then let the group go on: the
/// signal lands, deterministically, before the client's watch. The verdict
/// says whether it did.
fn signal_callers_as_calls_begin(probes: &Probes) -> (Arc<AtomicU32>, Arc<AtomicU8>) {
    let target = Arc::new(AtomicU32::new(0));
    let verdict = Arc::new(AtomicU8::new(PENDING));
    let (group, said) = (target.clone(), verdict.clone());
    probes.hook.set(move || {
        let deadline = Instant::now() + PATIENCE;
        let mut leader = group.load(Ordering::SeqCst);
        while leader == 0 {
            assert!(Instant::now() < deadline, "no caller named");
            std::thread::sleep(Duration::from_millis(1));
            leader = group.load(Ordering::SeqCst);
        }
        let group = -(leader as i32);
        kill(group, libc::SIGSTOP);
        let resume = common::process::ResumeOnDrop(group);
        let client = leaf(leader);
        while !stopped_or_gone(client) {
            assert!(Instant::now() < deadline, "the caller did not stop");
            std::thread::yield_now();
        }
        // Stopped, the client cannot start its watch meanwhile.
        if catches_sigint(client) {
            said.store(LATE, Ordering::SeqCst);
        } else {
            kill(client as i32, libc::SIGINT);
            said.store(EARLY, Ordering::SeqCst);
        }
        drop(resume);
    });
    (target, verdict)
}

/// Runs `command` (a `keep` call) until its handler signals the caller
/// before the client's watch starts; gives how it ended and the index of
/// the call among those kept. A late attempt (the client already
/// watching) is ended with Ctrl-C and tried again.
fn run_until_early(
    probes: &Probes,
    target: &AtomicU32,
    verdict: &AtomicU8,
    command: impl Fn() -> Command,
    how: &str,
) -> (std::process::Output, usize) {
    for attempt in 1..=100 {
        let index = probes.kept.count();
        verdict.store(PENDING, Ordering::SeqCst);
        target.store(0, Ordering::SeqCst);
        let child = spawn(command());
        target.store(child.id(), Ordering::SeqCst);
        wait_until("the handler signalled its caller", || {
            verdict.load(Ordering::SeqCst) != PENDING
        });
        if verdict.load(Ordering::SeqCst) == EARLY {
            eprintln!("{how}: signalled before the watch at attempt {attempt}");
            return (common::wait_output(child, PATIENCE), index);
        }
        // The client was watching already: end the call, try again.
        wait_catching_signals(&child);
        signal_client(&child, "INT");
        let _ = finish(child);
    }
    panic!("{how}: the client was always watching before its call began");
}

#[test]
fn a_signal_before_the_watch_ends_the_client_as_any_program_and_the_host_sees_it_leave() {
    each_style(|style| {
        let (host, probes) = host(style);
        let (target, verdict) = signal_callers_as_calls_begin(&probes);
        let direct = || {
            let [_, (_, command)] = host.both_ways(&["sh"], "keep", &[]);
            command
        };
        let (output, index) = run_until_early(&probes, &target, &verdict, direct, "by its path");
        // Ended by the signal itself, as any program without a handler.
        assert_eq!(output.status.signal(), Some(libc::SIGINT), "{output:?}");
        assert!(output.stdout.is_empty(), "{output:?}");
        wait_until("the host saw its caller leave", || {
            probes.kept.reason(index) == Some(CancelReason::CallerGone)
        });

        // A shell running it reports it as it does any program's death.
        let in_a_script = || host.shell_command(&["sh"], "keep; echo \"exit $?\"", &[]);
        let (output, index) = run_until_early(&probes, &target, &verdict, in_a_script, "sh -c");
        assert!(output.status.success(), "{output:?}");
        assert_eq!(common::text(&output.stdout), "exit 130\n");
        wait_until("the host saw its caller leave", || {
            probes.kept.reason(index) == Some(CancelReason::CallerGone)
        });
    });
}

#[test]
fn call_context_current_in_a_hand_written_command_sees_ctrl_c() {
    each_style(|style| {
        let (host, probes) = host(style);
        let [_, (how, command)] = host.both_ways(&["sh"], "by_hand", &[]);
        let child = spawn(command);
        wait_until("the handler started", || probes.by_hand.count() == 1);
        assert!(
            !probes.by_hand.get(0).is_detached(),
            "{how}: CallContext::current() is the call's own"
        );
        wait_catching_signals(&child);
        signal_client(&child, "INT");
        let (code, stdout, stderr) = finish(child);
        assert_eq!((code, stdout.as_str()), (Some(130), ""), "{how}: {stderr}");
        wait_until("the handler saw the Ctrl-C", || {
            probes.by_hand.reason(0) == Some(CancelReason::Interrupted)
        });
    });
}

/// A process's signal mask of `kind` (`SigCgt`, `SigIgn`) from `/proc`.
fn signal_mask(pid: u32, kind: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{kind}:")))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .unwrap_or(0)
}

#[test]
fn a_signal_the_client_was_started_ignoring_stays_ignored() {
    use std::os::unix::process::CommandExt;
    let host = Host::start_styled(Style::Links);
    let before = host.tally.waits_started.load(Ordering::SeqCst);
    let mut command = Command::new(host.wrapper("linger"));
    host.env().apply(&mut command);
    // As a shell starts a background job: SIGINT ignored. (After the
    // defaults `spawn` sets, so this one holds.)
    let mut child = {
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0);
        common::process::default_signals(&mut command);
        // SAFETY: signal(2) is async-signal-safe, as `pre_exec` requires.
        unsafe {
            command.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_IGN);
                Ok(())
            });
        }
        command.spawn().unwrap()
    };
    wait_until("the handler started", || {
        host.tally.waits_started.load(Ordering::SeqCst) > before
    });
    let pid = child.id();
    let bit = |signal: i32| 1u64 << (signal - 1);
    // The watch started (it catches SIGTERM) and left SIGINT ignored.
    wait_until("the client catches SIGTERM", || {
        signal_mask(pid, "SigCgt") & bit(libc::SIGTERM) != 0
    });
    assert_eq!(
        signal_mask(pid, "SigCgt") & bit(libc::SIGINT),
        0,
        "SIGINT caught"
    );
    assert_ne!(
        signal_mask(pid, "SigIgn") & bit(libc::SIGINT),
        0,
        "SIGINT ignored"
    );
    // SIGTERM still cancels the call as it would any program's.
    kill(pid as i32, libc::SIGTERM);
    let _ = child.stdin.take();
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, Some(143), "{stderr}");
    assert_eq!(stdout, "");
    wait_until("the handler saw the cancel", || {
        host.tally.waits_interrupted.load(Ordering::SeqCst) == 1
    });
}
