//! How a peer process ended.

use std::process::ExitStatus;

use nix::sys::signal::Signal;

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
    /// [`from_streams`](super::StdioBuilder::from_streams) without a child,
    /// or a test one).
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
