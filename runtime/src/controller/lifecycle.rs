//! The bookkeeping every controller shares: its status, the current run
//! and which generation it is, and how the last one ended.

use std::collections::HashMap;
use std::time::SystemTime;

use serde_json::Value;

use super::output::ExitInfo;
use super::{ControllerError, RuntimeStatus, Status};

/// What a controller's run must tell the bookkeeping.
pub(crate) trait RunInfo {
    /// The status to take once the run has ended.
    fn after_exit(&self) -> Status;
    /// The process id, while it runs.
    fn pid(&self) -> Option<u32>;
}

/// A controller's state, around its current run `R`.
pub(crate) struct Lifecycle<R> {
    pub(crate) status: Status,
    /// Counts runs; a watcher of an older run leaves the state alone.
    pub(crate) generation: u64,
    pub(crate) run: Option<R>,
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
            last_exit: None,
            started_at: None,
            block_meta: HashMap::new(),
        }
    }

    /// Records a run begun (of generation `generation`, already counted).
    pub(crate) fn begin(&mut self, generation: u64, run: R, block_meta: HashMap<String, Value>) {
        self.generation = generation;
        self.run = Some(run);
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
        self.status = self.run.as_ref().map_or(Status::Done, R::after_exit);
        self.run = None;
        self.last_exit = Some(exit);
        true
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
pub(crate) fn stop_target(new_status: &str) -> Result<Status, ControllerError> {
    match new_status.parse()? {
        Status::Running => Err(ControllerError::InvalidOptions(
            "a stop cannot lead to `running`; use `init` or `done`".to_owned(),
        )),
        status => Ok(status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Run(Status);

    impl RunInfo for Run {
        fn after_exit(&self) -> Status {
            self.0
        }

        fn pid(&self) -> Option<u32> {
            Some(7)
        }
    }

    #[test]
    fn an_old_runs_end_leaves_the_new_run_alone() {
        let mut state = Lifecycle::new();
        state.begin(1, Run(Status::Done), HashMap::new());
        state.begin(2, Run(Status::Init), HashMap::new());
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

    #[test]
    fn a_stop_cannot_lead_to_running() {
        assert_eq!(stop_target("init").unwrap(), Status::Init);
        assert!(matches!(
            stop_target("running"),
            Err(ControllerError::InvalidOptions(_))
        ));
        assert!(matches!(
            stop_target("paused"),
            Err(ControllerError::UnknownStatus { .. })
        ));
    }
}
