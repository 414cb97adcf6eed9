//! The bookkeeping every controller shares: its status, the current run
//! and which generation it is, how that run is to end (a stop asked for,
//! the status to take after it), and how the last one ended.

use std::collections::HashMap;
use std::time::SystemTime;

use serde_json::Value;

use super::output::ExitInfo;
use super::{ControllerError, RuntimeStatus, Status};

/// What a controller's run must tell the bookkeeping.
pub(crate) trait RunInfo {
    /// The process id, while it runs.
    fn pid(&self) -> Option<u32>;
}

/// A controller's state, around its current run `R`.
pub(crate) struct Lifecycle<R> {
    pub(crate) status: Status,
    /// Counts runs; a watcher of an older run leaves the state alone.
    pub(crate) generation: u64,
    pub(crate) run: Option<R>,
    /// The status to take once the current run has ended.
    after_exit: Status,
    /// A stop of the current run was asked for: a plain `start` replaces
    /// it rather than finding it running.
    stopping: bool,
    last_exit: Option<ExitInfo>,
    started_at: Option<SystemTime>,
    block_meta: HashMap<String, Value>,
}

impl<R: RunInfo> Lifecycle<R> {
    pub(crate) fn new() -> Self {
        Lifecycle {
            status: Status::Init,
            generation: 0,
            run: None,
            after_exit: Status::Done,
            stopping: false,
            last_exit: None,
            started_at: None,
            block_meta: HashMap::new(),
        }
    }

    /// Records a run begun (of generation `generation`, already counted).
    pub(crate) fn begin(&mut self, generation: u64, run: R, block_meta: HashMap<String, Value>) {
        self.generation = generation;
        self.run = Some(run);
        self.after_exit = Status::Done;
        self.stopping = false;
        self.status = Status::Running;
        self.started_at = Some(SystemTime::now());
        self.last_exit = None;
        self.block_meta = block_meta;
    }

    /// Records the end of run `generation`; false (and nothing recorded)
    /// when a newer run has taken over.
    pub(crate) fn end(&mut self, generation: u64, exit: ExitInfo) -> bool {
        if self.generation != generation {
            return false;
        }
        self.status = if self.run.is_some() {
            self.after_exit
        } else {
            Status::Done
        };
        self.run = None;
        self.last_exit = Some(exit);
        true
    }

    /// Begins a stop that leads to `new_status`: with no run the status
    /// is that at once (and there is nothing more to do); with one, the run
    /// is marked stopping and returned, to be ended.
    ///
    /// # Errors
    ///
    /// [`ControllerError::InvalidOptions`] for `running`.
    pub(crate) fn begin_stop(
        &mut self,
        new_status: Status,
    ) -> Result<Option<&mut R>, ControllerError> {
        let target = stop_target(new_status)?;
        if self.run.is_none() {
            self.status = target;
            return Ok(None);
        }
        Ok(self.mark_stopping(target))
    }

    /// Marks the current run, if there is one, stopping: it leads to
    /// `after_exit` once it has ended, and a plain `start` replaces it
    /// meanwhile. Returns it, to be ended.
    pub(crate) fn mark_stopping(&mut self, after_exit: Status) -> Option<&mut R> {
        let run = self.run.as_mut()?;
        self.after_exit = after_exit;
        self.stopping = true;
        Some(run)
    }

    /// Whether a stop of the current run was asked for.
    pub(crate) fn stopping(&self) -> bool {
        self.stopping
    }

    pub(crate) fn runtime_status(&self, id: &str, controller_type: &str) -> RuntimeStatus {
        RuntimeStatus {
            id: id.to_owned(),
            status: self.status,
            pid: self.run.as_ref().and_then(R::pid),
            exit_code: self.last_exit.and_then(|e| e.code),
            exit_signal: self.last_exit.and_then(|e| e.signal),
            started_at: self.started_at,
            controller_type: controller_type.to_owned(),
            block_meta: self.block_meta.clone(),
        }
    }
}

/// The status a stop leads to: `init` or `done`.
fn stop_target(new_status: Status) -> Result<Status, ControllerError> {
    match new_status {
        Status::Running => Err(ControllerError::InvalidOptions(
            "a stop cannot lead to `running`; use `init` or `done`".to_owned(),
        )),
        status => Ok(status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Run;

    impl RunInfo for Run {
        fn pid(&self) -> Option<u32> {
            Some(7)
        }
    }

    #[test]
    fn an_old_runs_end_leaves_the_new_run_alone() {
        let mut state = Lifecycle::new();
        state.begin(1, Run, HashMap::new());
        state.mark_stopping(Status::Done);
        state.begin(2, Run, HashMap::new());
        assert!(!state.stopping(), "a new run is not stopping");
        state.mark_stopping(Status::Init);
        let exit = ExitInfo {
            code: Some(0),
            signal: None,
        };
        assert!(!state.end(1, exit));
        assert_eq!(state.runtime_status("x", "cmd").pid, Some(7));
        assert!(state.end(2, exit));
        let status = state.runtime_status("x", "cmd");
        assert_eq!(
            (status.status, status.pid, status.exit_code),
            (Status::Init, None, Some(0))
        );
    }

    /// `stop`'s string, parsed, then checked as `stop_to` checks it.
    fn stop_target_named(new_status: &str) -> Result<Status, ControllerError> {
        stop_target(new_status.parse()?)
    }

    #[test]
    fn a_stop_cannot_lead_to_running() {
        assert_eq!(stop_target_named("init").unwrap(), Status::Init);
        assert!(matches!(
            stop_target_named("running"),
            Err(ControllerError::InvalidOptions(_))
        ));
        assert!(matches!(
            stop_target_named("paused"),
            Err(ControllerError::UnknownStatus { .. })
        ));
        assert_eq!(stop_target(Status::Done).unwrap(), Status::Done);
        assert!(matches!(
            stop_target(Status::Running),
            Err(ControllerError::InvalidOptions(_))
        ));
    }

    #[test]
    fn a_stop_sets_the_status_at_once_or_marks_the_run() {
        let mut state = Lifecycle::<Run>::new();
        assert!(state.begin_stop(Status::Done).unwrap().is_none());
        assert_eq!(state.status, Status::Done);
        state.begin(1, Run, HashMap::new());
        assert!(state.mark_stopping(Status::Init).is_some());
        assert!(state.begin_stop(Status::Init).unwrap().is_some());
        assert!(state.stopping());
        assert_eq!(state.status, Status::Running, "until the run ends");
        assert!(matches!(
            state.begin_stop(Status::Running),
            Err(ControllerError::InvalidOptions(_))
        ));
        let exit = ExitInfo {
            code: None,
            signal: Some(9),
        };
        assert!(state.end(1, exit));
        assert_eq!(state.status, Status::Init, "the status the stop asked for");
        // With no run, marking it stopping changes nothing.
        assert!(state.mark_stopping(Status::Done).is_none());
        assert_eq!(state.status, Status::Init);
    }
}
