//! An interactive shell on a terminal, leading its own session.

use std::sync::Arc;

use super::process::{Kind, ProcessCore, process_controller};
use super::{ControllerError, LaunchSpec};

/// Runs a shell (or any program) on a terminal, as the leader of its own
/// session: input data is typed into the terminal, a terminal size resizes
/// it (the foreground job sees `SIGWINCH`), SIGINT, SIGQUIT and SIGTSTP are
/// typed as their keys (Ctrl-C, Ctrl-\, Ctrl-Z: the terminal signals its
/// foreground job and drops what was typed ahead), other signals go to the
/// foreground job, and [`eof`](super::ControllerInput::eof) types Ctrl-D;
/// all of it in the order sent, sequenced or not.
/// Terminal output ([`OutputSource::Pty`](super::OutputSource::Pty)) goes
/// to subscribers and a capped tail. `rt_opts` may give the first size:
/// `{"termsize": {"rows": 24, "cols": 80}}` (the default).
///
/// Stopping hangs up on the whole session (SIGHUP, then SIGKILL after the
/// grace period); a replace ends only the shell itself, so background jobs
/// started to outlive it survive.
pub struct ShellController {
    core: Arc<ProcessCore>,
}

impl ShellController {
    /// A controller for `spec`, not started.
    pub fn new(id: impl Into<String>, spec: LaunchSpec) -> Self {
        ShellController {
            core: ProcessCore::new(id.into(), Kind::Shell, spec),
        }
    }
}

process_controller!(ShellController {
    fn stop_for_replace(&self, new_status: &str) -> Result<(), ControllerError> {
        self.core.stop_process_only(new_status.parse()?)
    }
});
