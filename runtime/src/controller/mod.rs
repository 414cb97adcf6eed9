//! Starting, supervising and stopping the processes a host runs for its
//! users and agents: a command ([`SubprocessController`]), an interactive
//! shell on a terminal ([`ShellController`]), and an agent that speaks ACP
//! over its stdio ([`AgentController`]), all behind one [`Controller`]
//! trait and kept in a [`ControllerRegistry`].
//!
//! ```no_run
//! use std::time::{Duration, Instant};
//! use gangway::controller::{Controller, ControllerInput, LaunchSpec, OutputEvent, ShellController};
//!
//! # async fn run(server: &gangway::ipc::IpcServer) -> Result<(), gangway::controller::ControllerError> {
//! // A shell in bubblewrap whose commands call back into the host's router.
//! let spec = LaunchSpec::new("sh")
//!     .prefix(["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "--"])
//!     .sandbox_env(&server.sandbox_env());
//! let shell = ShellController::new("term-1", spec);
//! let mut output = shell.subscribe();
//! shell.start(Default::default(), None, false)?;
//! shell.send_input(ControllerInput::data("web_search rust -n 3\n"), None)?;
//! while let Some(OutputEvent::Output { data, .. }) = output.recv().await {
//!     print!("{}", String::from_utf8_lossy(&data));
//! }
//! shell.shutdown(Instant::now() + Duration::from_secs(2)).await;
//! # Ok(()) }
//! ```
//!
//! Every controller starts its child with the [`LaunchSpec`]'s environment,
//! an optional [`SandboxEnv`](crate::ipc::SandboxEnv) (endpoint, token,
//! wrapper `PATH`) and an optional sandbox prefix (a `bwrap ...` argv), so a
//! sandboxed shell whose commands reach the host takes a few lines.
//!
//! Processes do not outlive their controller: every process leads a
//! session of its own, and stopping it (or its exit) ends every process
//! group left in that session, jobs that moved to groups of their own
//! included. Only a process that starts a new session of its own
//! (`setsid`) leaves it; containing those needs a cgroup or a PID
//! namespace (a `bwrap --unshare-pid` prefix does it).

mod agent;
mod input;
mod lifecycle;
mod output;
mod process;
mod registry;
mod shell;
mod spawn;
mod spec;
mod subprocess;
mod turn;

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::{Instant, SystemTime};

use serde_json::Value;

pub use agent::{AgentController, AgentRequestHandler};
pub use input::{ControllerInput, TermSize};
pub use output::{ExitInfo, OutputEvent, OutputSource};

/// The old name of [`OutputSource`], kept so code written against it still
/// builds.
#[deprecated(
    since = "0.1.0",
    note = "renamed `OutputSource` (`gangway::ipc::protocol::OutputStream` is the wire's type); as an alias it names the variants (`OutputStream::Stdout`) but cannot import them (`use ...::OutputStream::*`)"
)]
pub type OutputStream = OutputSource;
pub use registry::ControllerRegistry;
pub use shell::ShellController;
pub use spec::LaunchSpec;
pub use subprocess::SubprocessController;
pub use turn::{TurnActivityTracker, TurnProvenance};

use crate::stdio::RpcError;

/// Where a controller is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Not started (or stopped to be started again).
    Init,
    /// Its process runs.
    Running,
    /// Its process has ended.
    Done,
}

impl Status {
    /// The status's name: `init`, `running` or `done`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Init => "init",
            Status::Running => "running",
            Status::Done => "done",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Status {
    type Err = ControllerError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "init" => Ok(Status::Init),
            "running" => Ok(Status::Running),
            "done" => Ok(Status::Done),
            other => Err(ControllerError::UnknownStatus {
                status: other.to_owned(),
            }),
        }
    }
}

/// A controller's state, as [`Controller::get_runtime_status`] reports it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RuntimeStatus {
    /// The controller's id (its block id).
    pub id: String,
    /// Where it is in its life.
    pub status: Status,
    /// The running process's id.
    pub pid: Option<u32>,
    /// How the last process ended: its exit code...
    pub exit_code: Option<i32>,
    /// ...or the signal that ended it.
    pub exit_signal: Option<i32>,
    /// When the current (or last) process started.
    pub started_at: Option<SystemTime>,
    /// `cmd`, `shell` or `agent`.
    pub controller_type: String,
    /// The metadata the last `start` was given.
    pub block_meta: HashMap<String, Value>,
}

/// How a controller's process ended when it was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopOutcome {
    /// Nothing was running.
    NotRunning,
    /// It ended on the polite signal (or, for an agent, when asked to).
    Stopped,
    /// It exited by itself, with this code.
    Exited(i32),
    /// It was killed at the deadline.
    Killed,
}

/// What a controller could not do.
#[derive(Debug)]
#[non_exhaustive]
pub enum ControllerError {
    /// The controller runs its tasks on tokio; there is no runtime here.
    NoRuntime,
    /// The program could not be started.
    Spawn {
        /// The program (the prefix's first word when there is a prefix).
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// A terminal could not be set up or resized.
    Pty(String),
    /// A signal name that is not one.
    UnknownSignal {
        /// The name given.
        name: String,
    },
    /// A status name other than `init`, `running` or `done`.
    UnknownStatus {
        /// The name given.
        status: String,
    },
    /// Input for a controller whose process is not running.
    NotRunning {
        /// The controller.
        id: String,
    },
    /// Input whose sequence number was already used.
    StaleInput {
        /// The number given.
        seq: u64,
        /// The next number expected.
        expected: u64,
    },
    /// Too much input waiting: for the process to read it, or for an
    /// earlier sequence number.
    InputBacklogFull {
        /// The controller.
        id: String,
    },
    /// No controller with this id.
    UnknownController {
        /// The id.
        id: String,
    },
    /// `rt_opts` that do not fit.
    InvalidOptions(String),
    /// The agent's JSON-RPC connection failed.
    Agent(RpcError),
}

impl fmt::Display for ControllerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControllerError::NoRuntime => {
                f.write_str("controllers run on tokio: start them from within a tokio runtime")
            }
            ControllerError::Spawn { program, source } => {
                write!(f, "cannot start `{program}`: {source}")
            }
            ControllerError::Pty(message) => write!(f, "terminal: {message}"),
            ControllerError::UnknownSignal { name } => write!(
                f,
                "`{name}` is not a signal name; use one such as SIGINT, SIGTERM, SIGKILL or SIGHUP"
            ),
            ControllerError::UnknownStatus { status } => write!(
                f,
                "`{status}` is not a status; use `init`, `running` or `done`"
            ),
            ControllerError::NotRunning { id } => {
                write!(f, "`{id}` is not running; start it first")
            }
            ControllerError::StaleInput { seq, expected } => write!(
                f,
                "input number {seq} came after number {} was taken; the next expected is {expected}",
                expected - 1
            ),
            ControllerError::InputBacklogFull { id } => write!(
                f,
                "`{id}` has too much input waiting (the process is not reading, or an earlier \
                 sequence number never came)"
            ),
            ControllerError::UnknownController { id } => write!(f, "no controller `{id}`"),
            ControllerError::InvalidOptions(message) => write!(f, "rt_opts: {message}"),
            ControllerError::Agent(error) => write!(f, "agent: {error}"),
        }
    }
}

impl std::error::Error for ControllerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ControllerError::Spawn { source, .. } => Some(source),
            ControllerError::Agent(error) => Some(error),
            _ => None,
        }
    }
}

/// A future a controller's [`shutdown`](Controller::shutdown) returns.
pub type ShutdownFuture = Pin<Box<dyn Future<Output = StopOutcome> + Send>>;

/// A supervised process, whatever it is: start it, feed it input, watch
/// its status, stop it.
pub trait Controller: Send + Sync {
    /// Starts the process. `block_meta` is kept with the status; `rt_opts`
    /// carries run-time options (a shell reads `{"termsize": {"rows": r,
    /// "cols": c}}`). Already running, it does nothing unless `force`, which
    /// kills the running process and starts anew.
    ///
    /// # Errors
    ///
    /// [`ControllerError::Spawn`] when the program cannot start, and the
    /// like.
    fn start(
        &self,
        block_meta: HashMap<String, Value>,
        rt_opts: Option<Value>,
        force: bool,
    ) -> Result<(), ControllerError>;

    /// Stops the process: `graceful` asks it to end (SIGTERM to a command's
    /// session, SIGHUP to a shell's) and kills it if it has not after
    /// the spec's grace period; otherwise it is killed at once. Once it has
    /// ended the status becomes `new_status` (`init`, `running` is not
    /// accepted as a target, or `done`).
    ///
    /// The seed API's form, by name; [`stop_to`](Controller::stop_to) takes
    /// a [`Status`]. The built-in controllers parse the name and call
    /// `stop_to`.
    ///
    /// # Errors
    ///
    /// [`ControllerError::UnknownStatus`] for a name that is not a status;
    /// [`ControllerError::InvalidOptions`] for `running`.
    fn stop(&self, graceful: bool, new_status: &str) -> Result<(), ControllerError>;

    /// The current state.
    fn get_runtime_status(&self) -> RuntimeStatus;

    /// Sends input: data to the process's stdin (or terminal), a signal by
    /// name, a terminal size, or the end of input. With `seq`, inputs are
    /// applied in `seq` order (from 1 for each process started),
    /// out-of-order ones held back, and a signal in turn with the data
    /// around it; without, at once (a command's signal even while it is
    /// not reading its input; a shell's in order with its input, as keys).
    ///
    /// # Errors
    ///
    /// [`ControllerError::NotRunning`], [`ControllerError::UnknownSignal`],
    /// [`ControllerError::StaleInput`],
    /// [`ControllerError::InputBacklogFull`].
    fn send_input(&self, input: ControllerInput, seq: Option<u64>) -> Result<(), ControllerError>;

    /// `cmd`, `shell` or `agent`.
    fn controller_type(&self) -> &str;

    /// The controller's id.
    fn block_id(&self) -> &str;

    /// For downcasting to the concrete controller.
    fn as_any(&self) -> &dyn Any;

    /// [`stop`](Controller::stop) with the status to take as a [`Status`]
    /// rather than its name: `Status::Init` or `Status::Done`
    /// (`Status::Running` is not a stop's target).
    ///
    /// The default calls [`stop`](Controller::stop) with the status's
    /// name, so a controller written against the seed API (which has only
    /// `stop`) gets it; the built-in controllers override it, and their
    /// `stop` parses the name and calls it. A `stop` written to call
    /// `self.stop_to` must come with its own `stop_to`, or the two call
    /// each other.
    ///
    /// # Errors
    ///
    /// [`ControllerError::InvalidOptions`] for `Status::Running`.
    fn stop_to(&self, graceful: bool, new_status: Status) -> Result<(), ControllerError> {
        self.stop(graceful, new_status.as_str())
    }

    /// Stops this controller because another replaces it under the same
    /// id: its own process must go, but what it started to outlive it
    /// (background jobs) must not. The default is an immediate
    /// [`stop`](Controller::stop); a shell overrides it.
    ///
    /// # Errors
    ///
    /// As [`stop`](Controller::stop).
    fn stop_for_replace(&self, new_status: &str) -> Result<(), ControllerError> {
        self.stop(false, new_status)
    }

    /// Ends the process because its block is closing: gracefully, then by
    /// force at `deadline`. The future resolves once the process has
    /// exited. The default stops at once.
    fn shutdown(&self, _deadline: Instant) -> ShutdownFuture {
        let running = self.get_runtime_status().status == Status::Running;
        let outcome = match self.stop_to(false, Status::Done) {
            Ok(()) if running => StopOutcome::Killed,
            _ => StopOutcome::NotRunning,
        };
        Box::pin(std::future::ready(outcome))
    }

    /// The live identity of the agent in this block, if it has one.
    fn agent_id(&self) -> Option<String> {
        None
    }

    /// What started the agent's current turn, if the controller tracks it.
    fn turn_provenance(&self) -> Option<TurnProvenance> {
        None
    }

    /// The controller's turn tracker, if it tracks turns.
    fn turn_tracker(&self) -> Option<std::sync::Arc<TurnActivityTracker>> {
        None
    }

    /// Refreshes the live identity [`agent_id`](Controller::agent_id)
    /// reports. The default ignores it.
    fn set_agent_id(&self, _id: Option<String>) {}

    /// The agent's stable identity: the id it was started under (from its
    /// launch environment, say), captured once at spawn and never
    /// refreshed. Unlike [`agent_id`](Controller::agent_id), which follows
    /// renames, it stays what the agent was started as, so a message
    /// addressed to that id can still be checked against this block after a
    /// rename. `None` means unknown, never a mismatch.
    ///
    /// Part of the seed API, for a host whose own controllers capture such
    /// an id: the default, `None`, is what every built-in controller
    /// returns (none of them captures one).
    fn stable_agent_id(&self) -> Option<String> {
        None
    }

    /// The agent's UID (a database row id, say) as carried in its launch
    /// environment, captured once at spawn like
    /// [`stable_agent_id`](Controller::stable_agent_id): what a host checks
    /// a target it resolved by UID against. `None` (a controller not yet
    /// started, or an agent with no UID) means unverifiable, never a
    /// mismatch.
    ///
    /// Part of the seed API, for a host whose own controllers carry UIDs:
    /// the default, `None`, is what every built-in controller returns.
    fn stable_agent_uid(&self) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use super::*;

    /// A controller written against the seed API: only `stop`, by name.
    struct SeedController {
        stops: Mutex<Vec<(bool, String)>>,
    }

    impl Controller for SeedController {
        fn start(
            &self,
            _block_meta: HashMap<String, Value>,
            _rt_opts: Option<Value>,
            _force: bool,
        ) -> Result<(), ControllerError> {
            Ok(())
        }

        fn stop(&self, graceful: bool, new_status: &str) -> Result<(), ControllerError> {
            self.stops
                .lock()
                .unwrap()
                .push((graceful, new_status.to_owned()));
            Ok(())
        }

        fn get_runtime_status(&self) -> RuntimeStatus {
            RuntimeStatus {
                id: "seed".to_owned(),
                status: Status::Init,
                pid: None,
                exit_code: None,
                exit_signal: None,
                started_at: None,
                controller_type: "seed".to_owned(),
                block_meta: HashMap::new(),
            }
        }

        fn send_input(
            &self,
            _input: ControllerInput,
            _seq: Option<u64>,
        ) -> Result<(), ControllerError> {
            Ok(())
        }

        fn controller_type(&self) -> &str {
            "seed"
        }

        fn block_id(&self) -> &str {
            "seed"
        }

        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    #[test]
    fn the_typed_stop_reaches_a_controller_that_has_only_the_named_one() {
        let seed = SeedController {
            stops: Mutex::new(Vec::new()),
        };
        seed.stop_to(true, Status::Init).unwrap();
        seed.stop_to(false, Status::Done).unwrap();
        assert_eq!(
            *seed.stops.lock().unwrap(),
            [(true, "init".to_owned()), (false, "done".to_owned())]
        );
        assert_eq!(seed.stable_agent_id(), None);
        assert_eq!(seed.stable_agent_uid(), None);
    }

    #[tokio::test]
    async fn a_built_in_controller_stops_to_a_typed_status() {
        let sleeper = SubprocessController::new("sleeper", LaunchSpec::new("sleep").arg("30"));
        assert!(matches!(
            sleeper.stop_to(false, Status::Running),
            Err(ControllerError::InvalidOptions(_))
        ));
        sleeper.stop_to(false, Status::Done).unwrap();
        assert_eq!(
            sleeper.get_runtime_status().status,
            Status::Done,
            "not started"
        );
        sleeper.start(HashMap::new(), None, false).unwrap();
        sleeper.stop_to(false, Status::Init).unwrap();
        let ended = async {
            while sleeper.get_runtime_status().status != Status::Init {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), ended)
            .await
            .expect("killed, and the status taken");
        assert_eq!(sleeper.stable_agent_id(), None);
        assert_eq!(sleeper.stable_agent_uid(), None);
    }
}
