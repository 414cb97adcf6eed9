//! A command with piped stdio, leading its own session.

use std::sync::Arc;

use super::LaunchSpec;
use super::process::{Kind, ProcessCore, process_controller};

/// Runs a command with piped stdio as the leader of its own session (and
/// process group): stdout and stderr (tagged) go to subscribers and a
/// capped tail; input data goes to its stdin, and
/// [`eof`](super::ControllerInput::eof) closes it; signals go to every
/// process group of its session; a terminal size is ignored. Stopping sends
/// SIGTERM to the session, then SIGKILL after the grace period.
///
/// ```no_run
/// use gangway::controller::{Controller, LaunchSpec, OutputEvent, SubprocessController};
///
/// # async fn run() -> Result<(), gangway::controller::ControllerError> {
/// let build = SubprocessController::new("build", LaunchSpec::new("cargo").arg("build"));
/// let mut output = build.subscribe();
/// build.start(Default::default(), None, false)?;
/// while let Some(event) = output.recv().await {
///     if let OutputEvent::Exit(exit) = event {
///         println!("exited: {exit:?}");
///         break;
///     }
/// }
/// # Ok(()) }
/// ```
pub struct SubprocessController {
    core: Arc<ProcessCore>,
}

impl SubprocessController {
    /// A controller for `spec`, not started.
    pub fn new(id: impl Into<String>, spec: LaunchSpec) -> Self {
        SubprocessController {
            core: ProcessCore::new(id.into(), Kind::Command, spec),
        }
    }
}

process_controller!(SubprocessController {});
