//! The life of a supervised process, shared by the command and the shell
//! controllers: starting it (through `spawn.rs`), feeding it, stopping it,
//! watching it end, and making sure nothing it started is left behind.
//!
//! Both kinds start their process as the leader of a new session, so
//! everything it starts (jobs in process groups of their own included) can
//! be found and ended together.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;
use tokio::runtime::Handle;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::input::{ControllerInput, InputSequencer, TermSize, no_room};
use super::lifecycle::{Lifecycle, RunInfo};
use super::output::{ExitInfo, OutputEvent, OutputHub};
use super::spawn::{RunOutput, WriterOp, spawn_command, spawn_shell};
use super::{ControllerError, LaunchSpec, RuntimeStatus, ShutdownFuture, Status, StopOutcome};
use crate::process_tree::signal_session;
use crate::sync::LockUnpoisoned;

/// What kind of process, which decides how it is started and asked to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Piped stdio.
    Command,
    /// A terminal.
    Shell,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Command => "cmd",
            Kind::Shell => "shell",
        }
    }

    /// The signal that asks politely: a command is terminated, a shell is
    /// hung up on (an interactive shell ignores SIGTERM).
    fn polite(self) -> Signal {
        match self {
            Kind::Command => Signal::SIGTERM,
            Kind::Shell => Signal::SIGHUP,
        }
    }
}

/// The running process.
struct Run {
    generation: u64,
    pid: u32,
    writer: mpsc::Sender<WriterOp>,
    sequencer: InputSequencer,
    exited: watch::Receiver<Option<ExitInfo>>,
    /// Leave what it started alone when it ends (a replace).
    spare_leftovers: bool,
    /// Set once the process is reaped; the writer then sends no signals.
    ended: Arc<AtomicBool>,
    /// The runtime it was started on, for its timers.
    handle: Handle,
}

impl Run {
    /// Signals everything the process started, unless it is already reaped.
    fn signal(&self, signal: Signal) {
        if !self.ended.load(Ordering::Acquire) {
            signal_session(self.pid, signal);
        }
    }
}

impl RunInfo for Run {
    fn pid(&self) -> Option<u32> {
        Some(self.pid)
    }
}

/// One supervised process slot: the controllers wrap it.
pub(crate) struct ProcessCore {
    id: String,
    kind: Kind,
    spec: LaunchSpec,
    runtime: Option<Handle>,
    state: Mutex<Lifecycle<Run>>,
    pub(crate) hub: OutputHub,
}

impl ProcessCore {
    pub(crate) fn new(id: String, kind: Kind, spec: LaunchSpec) -> Arc<Self> {
        let tail = spec.tail_bytes();
        Arc::new(ProcessCore {
            id,
            kind,
            spec,
            runtime: Handle::try_current().ok(),
            state: Mutex::new(Lifecycle::new()),
            hub: OutputHub::new(tail),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Lifecycle<Run>> {
        self.state.lock_unpoisoned()
    }

    fn handle(&self) -> Option<Handle> {
        self.runtime.clone().or_else(|| Handle::try_current().ok())
    }

    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn kind_name(&self) -> &'static str {
        self.kind.name()
    }

    pub(crate) fn start(
        self: &Arc<Self>,
        block_meta: HashMap<String, Value>,
        rt_opts: Option<Value>,
        force: bool,
    ) -> Result<(), ControllerError> {
        let handle = self.handle().ok_or(ControllerError::NoRuntime)?;
        let _entered = handle.enter();
        let size = term_size(rt_opts.as_ref())?;
        let mut state = self.lock();
        let stopping = state.stopping();
        if let Some(run) = &state.run {
            if !force && !stopping {
                return Ok(());
            }
            // The old process goes; its watcher no longer owns the state,
            // and its last output and exit are not this run's.
            run.signal(Signal::SIGKILL);
            state.run = None;
        }
        let generation = state.generation + 1;
        let spawned = match self.kind {
            Kind::Command => spawn_command(&self.spec, self, generation)?,
            Kind::Shell => spawn_shell(&self.spec, size, self, generation)?,
        };
        let (exit_tx, exit_rx) = watch::channel(None);
        let run = Run {
            generation,
            pid: spawned.pid,
            writer: spawned.writer,
            sequencer: InputSequencer::new(),
            exited: exit_rx,
            spare_leftovers: false,
            ended: spawned.ended,
            handle: handle.clone(),
        };
        state.begin(generation, run, block_meta);
        tokio::spawn(watch_exit(
            self.clone(),
            generation,
            spawned.child,
            spawned.readers,
            exit_tx,
        ));
        Ok(())
    }

    pub(crate) fn stop(
        self: &Arc<Self>,
        graceful: bool,
        new_status: Status,
    ) -> Result<(), ControllerError> {
        let mut state = self.lock();
        let Some(run) = state.begin_stop(new_status)? else {
            return Ok(());
        };
        if !graceful {
            run.signal(Signal::SIGKILL);
            return Ok(());
        }
        run.signal(self.kind.polite());
        let generation = run.generation;
        let grace = self.spec.grace();
        let core = self.clone();
        {
            run.handle.spawn(async move {
                tokio::time::sleep(grace).await;
                let state = core.lock();
                if let Some(run) = state.run.as_ref().filter(|r| r.generation == generation) {
                    run.signal(Signal::SIGKILL);
                }
            });
        }
        Ok(())
    }

    /// Ends only the process itself, sparing what it started.
    pub(crate) fn stop_process_only(&self, new_status: Status) -> Result<(), ControllerError> {
        let mut state = self.lock();
        let Some(run) = state.begin_stop(new_status)? else {
            return Ok(());
        };
        run.spare_leftovers = true;
        if !run.ended.load(Ordering::Acquire)
            && let Ok(pid) = i32::try_from(run.pid)
        {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        Ok(())
    }

    /// The controller is going away: so does its process (unless a replace
    /// spared what it started).
    pub(crate) fn abandon(&self) {
        let state = self.lock();
        if let Some(run) = state.run.as_ref().filter(|run| !run.spare_leftovers) {
            run.signal(Signal::SIGKILL);
        }
    }

    pub(crate) fn status(&self) -> RuntimeStatus {
        self.lock().runtime_status(&self.id, self.kind.name())
    }

    pub(crate) fn send_input(
        &self,
        input: ControllerInput,
        seq: Option<u64>,
    ) -> Result<(), ControllerError> {
        // Checked before sequencing, so a bad signal never takes a number.
        input.parsed_signal()?;
        let mut state = self.lock();
        let Some(run) = state.run.as_mut() else {
            return Err(ControllerError::NotRunning {
                id: self.id.clone(),
            });
        };
        let first = run.sequencer.next();
        let ready = match seq {
            Some(seq) => run.sequencer.accept(input, Some(seq), &self.id)?,
            // A terminal takes everything in order (its signals are keys);
            // a command's unsequenced signal acts at once, even while it is
            // not reading its input, once the rest has found room.
            None if self.kind == Kind::Shell => return self.queue(run, self.ops(input)?),
            None => {
                let signal = input.parsed_signal()?;
                let ops = self.ops(ControllerInput {
                    signal: None,
                    ..input
                })?;
                self.queue(run, ops)?;
                if let Some(signal) = signal {
                    run.signal(signal);
                }
                return Ok(());
            }
        };
        let mut ops = Vec::new();
        for input in &ready {
            ops.extend(self.ops(input.clone())?);
        }
        if let Err(error) = self.queue(run, ops) {
            // No room: what was held waits again, and the caller may send
            // this number again.
            run.sequencer.rewind(first, ready);
            return Err(error);
        }
        Ok(())
    }

    /// What the writer does for one input: size, signal, data, end.
    fn ops(&self, input: ControllerInput) -> Result<Vec<WriterOp>, ControllerError> {
        let mut ops = Vec::new();
        if let Some(size) = input.term_size
            && self.kind == Kind::Shell
        {
            ops.push(WriterOp::Resize(size));
        }
        if let Some(signal) = input.parsed_signal()? {
            ops.push(WriterOp::Signal(signal));
        }
        if let Some(data) = input.data {
            ops.push(WriterOp::Data(data));
        }
        if input.eof {
            ops.push(WriterOp::Close);
        }
        Ok(ops)
    }

    /// Queues every op, or none when there is no room for all.
    fn queue(&self, run: &Run, ops: Vec<WriterOp>) -> Result<(), ControllerError> {
        if ops.is_empty() {
            return Ok(());
        }
        let permits = run
            .writer
            .try_reserve_many(ops.len())
            .map_err(|error| no_room(&self.id, error))?;
        for (permit, op) in permits.zip(ops) {
            permit.send(op);
        }
        Ok(())
    }

    pub(crate) fn shutdown(self: &Arc<Self>, deadline: Instant) -> ShutdownFuture {
        // Asked politely now, so shutting several down goes in parallel
        // even before the futures are polled.
        let started = {
            let mut state = self.lock();
            state.mark_stopping(Status::Done).map(|run| {
                run.signal(self.kind.polite());
                (run.generation, run.exited.clone())
            })
        };
        let core = self.clone();
        Box::pin(async move {
            let Some((generation, mut exited)) = started else {
                return StopOutcome::NotRunning;
            };
            let deadline = tokio::time::Instant::from_std(deadline);
            let ended = tokio::time::timeout_at(deadline, exited.wait_for(Option::is_some))
                .await
                .ok()
                .and_then(|ended| ended.ok().and_then(|info| *info));
            match ended {
                Some(ExitInfo {
                    code: Some(code), ..
                }) => StopOutcome::Exited(code),
                Some(_) => StopOutcome::Stopped,
                None => {
                    {
                        let state = core.lock();
                        if let Some(run) = state.run.as_ref().filter(|r| r.generation == generation)
                        {
                            run.signal(Signal::SIGKILL);
                        }
                    }
                    let _ = tokio::time::timeout(
                        Duration::from_secs(5),
                        exited.wait_for(Option::is_some),
                    )
                    .await;
                    StopOutcome::Killed
                }
            }
        })
    }
}

impl RunOutput for ProcessCore {
    fn is_current(&self, generation: u64) -> bool {
        self.lock()
            .run
            .as_ref()
            .is_some_and(|run| run.generation == generation)
    }

    fn hub(&self) -> &OutputHub {
        &self.hub
    }
}

/// Gives a controller type wrapping a [`ProcessCore`] (a field `core`) its
/// `subscribe` and `output_tail`, its `Debug` and `Drop`, and its
/// [`Controller`](super::Controller) impl; trait items given in braces
/// are added to the impl (an override of a provided method).
macro_rules! process_controller {
    ($name:ident { $($extra:item)* }) => {
        impl $name {
            /// Every output event from now on. A subscriber that stops
            /// reading holds the process up once its channel is full: drop
            /// the receiver instead.
            pub fn subscribe(&self) -> tokio::sync::mpsc::Receiver<super::OutputEvent> {
                self.core.hub.subscribe()
            }

            /// The most recent output, all streams together.
            pub fn output_tail(&self) -> Vec<u8> {
                self.core.hub.tail()
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("id", &self.core.id())
                    .finish_non_exhaustive()
            }
        }

        impl super::Controller for $name {
            fn start(
                &self,
                block_meta: std::collections::HashMap<String, serde_json::Value>,
                rt_opts: Option<serde_json::Value>,
                force: bool,
            ) -> Result<(), super::ControllerError> {
                self.core.start(block_meta, rt_opts, force)
            }

            fn stop(&self, graceful: bool, new_status: &str) -> Result<(), super::ControllerError> {
                super::Controller::stop_to(self, graceful, new_status.parse()?)
            }

            fn stop_to(
                &self,
                graceful: bool,
                new_status: super::Status,
            ) -> Result<(), super::ControllerError> {
                self.core.stop(graceful, new_status)
            }

            fn get_runtime_status(&self) -> super::RuntimeStatus {
                self.core.status()
            }

            fn send_input(
                &self,
                input: super::ControllerInput,
                seq: Option<u64>,
            ) -> Result<(), super::ControllerError> {
                self.core.send_input(input, seq)
            }

            fn controller_type(&self) -> &str {
                self.core.kind_name()
            }

            fn block_id(&self) -> &str {
                self.core.id()
            }

            fn as_any(&self) -> &dyn std::any::Any {
                self
            }

            fn shutdown(&self, deadline: std::time::Instant) -> super::ShutdownFuture {
                self.core.shutdown(deadline)
            }

            $($extra)*
        }

        impl Drop for $name {
            fn drop(&mut self) {
                self.core.abandon();
            }
        }
    };
}

pub(crate) use process_controller;

/// `{"termsize": {"rows": r, "cols": c}}`, if given.
fn term_size(rt_opts: Option<&Value>) -> Result<Option<TermSize>, ControllerError> {
    let Some(size) = rt_opts.and_then(|o| o.get("termsize")) else {
        return Ok(None);
    };
    let field = |name: &str| {
        size.get(name)
            .and_then(Value::as_u64)
            .and_then(|n| u16::try_from(n).ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| {
                ControllerError::InvalidOptions(format!(
                    "termsize.{name} must be a whole number from 1 to 65535, not {}",
                    size.get(name)
                        .map_or_else(|| "nothing".to_owned(), Value::to_string)
                ))
            })
    };
    Ok(Some(TermSize {
        rows: field("rows")?,
        cols: field("cols")?,
    }))
}

/// Waits for the process to end, clears out what it left, records the
/// exit, then tells subscribers (after the last of its output).
async fn watch_exit(
    core: Arc<ProcessCore>,
    generation: u64,
    mut child: tokio::process::Child,
    readers: Vec<JoinHandle<()>>,
    exit_tx: watch::Sender<Option<ExitInfo>>,
) {
    let pid = child.id().unwrap_or_default();
    let info = match child.wait().await {
        Ok(status) => ExitInfo::from_status(status),
        Err(_) => ExitInfo::default(),
    };
    let spare = {
        let state = core.lock();
        match state
            .run
            .as_ref()
            .filter(|run| run.generation == generation)
        {
            Some(run) => {
                run.ended.store(true, Ordering::Release);
                run.spare_leftovers
            }
            None => false,
        }
    };
    // The leader is gone; its session lives on in what it left, if anything.
    if !spare && pid > 1 {
        signal_session(pid, Signal::SIGKILL);
    }
    // Output still in the pipes comes before the exit event; a process
    // left holding a pipe open (a spared one) must not hold it up.
    for mut reader in readers {
        if tokio::time::timeout(Duration::from_millis(500), &mut reader)
            .await
            .is_err()
        {
            // What comes later is not this run's output.
            reader.abort();
        }
    }
    let current = core.lock().end(generation, info);
    exit_tx.send_replace(Some(info));
    // A replaced process's end is not news to the new one's subscribers.
    if current {
        core.hub.publish(OutputEvent::Exit(info)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn termsize_options_are_checked() {
        assert_eq!(term_size(None).unwrap(), None);
        let size = term_size(Some(
            &serde_json::json!({"termsize": {"rows": 30, "cols": 100}}),
        ))
        .unwrap();
        assert_eq!(
            size,
            Some(TermSize {
                rows: 30,
                cols: 100
            })
        );
        let err = term_size(Some(
            &serde_json::json!({"termsize": {"rows": 0, "cols": 80}}),
        ))
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "rt_opts: termsize.rows must be a whole number from 1 to 65535, not 0"
        );
    }
}
