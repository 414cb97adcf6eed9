//! The peer process: signalling its process group, and how it ended.

use std::process::ExitStatus;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::{Pid, getpgid, getpgrp};

/// How a peer process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExitOutcome {
    /// It exited by itself with this code.
    Exited(i32),
    /// A signal ended it (not the transport's kill at the deadline).
    Signaled(i32),
    /// The transport killed it (at the shutdown deadline, or on drop).
    Killed,
    /// There is no process (a transport made by
    /// [`new_for_testing`](super::StdioTransport::new_for_testing)).
    NoProcess,
}

impl ExitOutcome {
    pub(crate) fn from_status(status: ExitStatus, killed_by_us: bool) -> Self {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => ExitOutcome::Exited(code),
            (None, Some(_)) if killed_by_us => ExitOutcome::Killed,
            (None, Some(signal)) => ExitOutcome::Signaled(signal),
            (None, None) => ExitOutcome::Killed,
        }
    }
}

impl std::fmt::Display for ExitOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExitOutcome::Exited(code) => write!(f, "exited with code {code}"),
            ExitOutcome::Signaled(signal) => {
                let name = Signal::try_from(*signal).map_or("an unknown signal", |s| s.as_str());
                write!(f, "was ended by {name}")
            }
            ExitOutcome::Killed => f.write_str("was killed"),
            ExitOutcome::NoProcess => f.write_str("had no process"),
        }
    }
}

/// Sends `signal` to everything the peer started when it leads a session
/// of its own (as a spawned peer does), else to its process group when it
/// leads one, else to the peer alone; never to this process's own group.
pub(crate) fn signal_peer(pid: u32, signal: Signal) {
    let Ok(raw) = i32::try_from(pid) else { return };
    if crate::process_tree::leads_session(pid) {
        crate::process_tree::signal_session(pid, signal);
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
        // Already reaped: its session, or its group, may live on in its
        // children.
        Err(_) => {
            crate::process_tree::signal_session(raw.unsigned_abs(), signal);
            if pid != getpgrp() {
                let _ = killpg(pid, signal);
            }
        }
    }
}
