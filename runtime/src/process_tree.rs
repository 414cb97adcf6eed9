//! Finding and signalling everything a supervised process started: its
//! session, every process group in it, read from `/proc`.
//!
//! A peer is started as the leader of a new session, so jobs that move to
//! process groups of their own (`timeout`, shells with job control) are
//! still found; only a process that starts a session of its own leaves.

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::{Pid, getpgid, getpgrp, getsid};

/// Makes the child the leader of a new session (and process group) with
/// every signal at its default action before it runs. When it cannot lead
/// one (a command already set to lead a process group), it runs as it is;
/// signalling then falls back to its group.
pub(crate) fn start_own_session(command: &mut tokio::process::Command) {
    // SAFETY: `setsid` and `sigaction` are async-signal-safe and touch no
    // memory of the parent: they may run between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let _ = nix::unistd::setsid();
            reset_signal_actions();
            Ok(())
        });
    }
}

/// Puts every signal back to its default action, for a child between fork
/// and exec. A signal this process ignores stays ignored across `exec`: a
/// host started in the background of a script (SIGINT and SIGQUIT ignored)
/// or under `nohup` (SIGHUP) would otherwise start children that the
/// signals a controller sends cannot end. Handlers need no reset (`exec`
/// resets them); the signal mask is reset by the standard library.
///
/// Async-signal-safe: only `sigaction`.
pub(crate) fn reset_signal_actions() {
    use nix::sys::signal::{SigHandler, signal};
    for sig in Signal::iterator() {
        if !matches!(sig, Signal::SIGKILL | Signal::SIGSTOP) {
            // SAFETY: the default action installs no handler.
            let _ = unsafe { signal(sig, SigHandler::SigDfl) };
        }
    }
}

/// The process groups of the live processes in session `sid`.
pub(crate) fn session_groups(sid: i32) -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut groups: Vec<Pid> = entries
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // After the command name (which may hold anything): state,
            // parent, group, session.
            let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split_whitespace().collect();
            let (state, group, session) = (fields.first()?, fields.get(2)?, fields.get(3)?);
            (*state != "Z" && session.parse::<i32>().ok()? == sid)
                .then(|| group.parse().ok().map(Pid::from_raw))
                .flatten()
        })
        .collect();
    groups.sort();
    groups.dedup();
    groups
}

/// Sends `signal` to every process group of session `sid` (for SIGKILL,
/// again until none is left, as a job may be forking while we look).
/// Never to this process's own group or session.
pub(crate) fn signal_session(sid: u32, signal: Signal) {
    let Ok(sid) = i32::try_from(sid) else { return };
    if sid <= 1 || getsid(None).ok() == Some(Pid::from_raw(sid)) {
        return;
    }
    let own_group = getpgrp();
    for _ in 0..8 {
        let groups = session_groups(sid);
        if groups.is_empty() {
            break;
        }
        for group in groups.into_iter().filter(|g| *g != own_group) {
            let _ = killpg(group, signal);
        }
        if signal != Signal::SIGKILL {
            break;
        }
    }
}

/// Sends `signal` to everything `pid` started when it leads a session of
/// its own (as a spawned peer does), else to its process group when it
/// leads one, else to it alone; never to this process's own group. Once
/// `pid` is reaped, to what is left of its session and group.
pub(crate) fn signal_tree(pid: u32, signal: Signal) {
    let Ok(raw) = i32::try_from(pid) else { return };
    if leads_session(pid) {
        signal_session(pid, signal);
        return;
    }
    let pid = Pid::from_raw(raw);
    match getpgid(Some(pid)) {
        Ok(group) if group == pid && group != getpgrp() => {
            let _ = killpg(group, signal);
        }
        Ok(_) => {
            let _ = kill(pid, signal);
        }
        Err(_) => {
            signal_session(raw.unsigned_abs(), signal);
            if pid != getpgrp() {
                let _ = killpg(pid, signal);
            }
        }
    }
}

/// Whether `pid` leads its own session.
pub(crate) fn leads_session(pid: u32) -> bool {
    i32::try_from(pid)
        .ok()
        .map(Pid::from_raw)
        .is_some_and(|pid| getsid(Some(pid)).ok() == Some(pid))
}
