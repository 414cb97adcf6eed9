//! The life of a supervised process, shared by the command and the shell
//! controllers: spawning it, feeding it, watching it end, and making sure
//! nothing it started is left behind.
//!
//! Both kinds start their process as the leader of a new session, so
//! everything it starts (jobs in process groups of their own included) can
//! be found and ended together.

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::runtime::Handle;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::input::{ControllerInput, InputSequencer, TermSize, no_room};
use super::lifecycle::{Lifecycle, RunInfo, stop_target};
use super::output::{ExitInfo, OutputEvent, OutputHub, OutputStream};
use super::{ControllerError, LaunchSpec, RuntimeStatus, ShutdownFuture, Status, StopOutcome};
use crate::process_tree::{signal_session, start_own_session};

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

/// How many inputs may wait for the process to read them.
const WRITE_BACKLOG: usize = 1024;

/// Something for the writer task, in the order it was sent.
enum WriterOp {
    Data(Vec<u8>),
    Resize(TermSize),
    /// A sequenced signal: delivered in order with the data around it.
    Signal(Signal),
    /// The end of input: stdin closed, or end-of-file typed on a terminal.
    Close,
}

/// The running process.
struct Run {
    generation: u64,
    pid: u32,
    writer: mpsc::Sender<WriterOp>,
    sequencer: InputSequencer,
    exited: watch::Receiver<Option<ExitInfo>>,
    /// The status to take once it has ended.
    after_exit: Status,
    /// A stop was asked for: a plain `start` replaces it rather than
    /// finding it running.
    stopping: bool,
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
    fn after_exit(&self) -> Status {
        self.after_exit
    }

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

    fn lock(&self) -> std::sync::MutexGuard<'_, Lifecycle<Run>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
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

    /// Whether run `generation` is still the running one.
    fn is_current(&self, generation: u64) -> bool {
        self.lock()
            .run
            .as_ref()
            .is_some_and(|run| run.generation == generation)
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
        if let Some(run) = &state.run {
            if !force && !run.stopping {
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
            after_exit: Status::Done,
            stopping: false,
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
        new_status: &str,
    ) -> Result<(), ControllerError> {
        let target = stop_target(new_status)?;
        let mut state = self.lock();
        let Some(run) = state.run.as_mut() else {
            state.status = target;
            return Ok(());
        };
        run.after_exit = target;
        run.stopping = true;
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
    pub(crate) fn stop_process_only(&self, new_status: &str) -> Result<(), ControllerError> {
        let target = stop_target(new_status)?;
        let mut state = self.lock();
        let Some(run) = state.run.as_mut() else {
            state.status = target;
            return Ok(());
        };
        run.after_exit = target;
        run.stopping = true;
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
            state.run.as_mut().map(|run| {
                run.after_exit = Status::Done;
                run.stopping = true;
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

/// A started process and its plumbing.
struct Spawned {
    pid: u32,
    child: tokio::process::Child,
    writer: mpsc::Sender<WriterOp>,
    readers: Vec<JoinHandle<()>>,
    ended: Arc<AtomicBool>,
}

fn spawn_error(spec: &LaunchSpec, source: std::io::Error) -> ControllerError {
    ControllerError::Spawn {
        program: spec.shown_program(),
        source,
    }
}

/// The pid of a child just spawned (tokio gives none once it is reaped,
/// which cannot have happened yet).
fn pid_of(child: &tokio::process::Child, spec: &LaunchSpec) -> Result<u32, ControllerError> {
    child.id().filter(|pid| *pid > 1).ok_or_else(|| {
        spawn_error(
            spec,
            std::io::Error::other("the process ended before it could be watched"),
        )
    })
}

fn spawn_command(
    spec: &LaunchSpec,
    core: &Arc<ProcessCore>,
    generation: u64,
) -> Result<Spawned, ControllerError> {
    let mut command = spec.command();
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    start_own_session(&mut command);
    let mut child = command.spawn().map_err(|e| spawn_error(spec, e))?;
    let pid = pid_of(&child, spec)?;
    let missing = || {
        spawn_error(
            spec,
            std::io::Error::other("a piped standard stream is missing"),
        )
    };
    let stdin = child.stdin.take().ok_or_else(missing)?;
    let stdout = child.stdout.take().ok_or_else(missing)?;
    let stderr = child.stderr.take().ok_or_else(missing)?;
    let (writer, ops) = mpsc::channel(WRITE_BACKLOG);
    let ended = Arc::new(AtomicBool::new(false));
    tokio::spawn(write_input(Some(stdin), ops, pid, None, ended.clone()));
    let readers = vec![
        tokio::spawn(read_output(
            stdout,
            OutputStream::Stdout,
            core.clone(),
            generation,
        )),
        tokio::spawn(read_output(
            stderr,
            OutputStream::Stderr,
            core.clone(),
            generation,
        )),
    ];
    Ok(Spawned {
        pid,
        child,
        writer,
        readers,
        ended,
    })
}

fn spawn_shell(
    spec: &LaunchSpec,
    size: Option<TermSize>,
    core: &Arc<ProcessCore>,
    generation: u64,
) -> Result<Spawned, ControllerError> {
    let pty_error = |error: pty_process::Error| ControllerError::Pty(error.to_string());
    let (pty, pts) = pty_process::open().map_err(pty_error)?;
    let size = size.unwrap_or(TermSize { rows: 24, cols: 80 });
    pty.resize(pty_process::Size::new(size.rows, size.cols))
        .map_err(pty_error)?;
    // A handle of our own on the terminal, to find its foreground job.
    let terminal = pty
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| ControllerError::Pty(e.to_string()))?;
    let argv = spec.argv();
    let mut command = pty_process::Command::new(&argv[0])
        .args(&argv[1..])
        .kill_on_drop(true);
    for (key, value) in spec.env_vars() {
        command = command.env(key, value);
    }
    if let Some(dir) = spec.working_dir() {
        command = command.current_dir(dir);
    }
    // pty-process makes the child the leader of a new session.
    let child = command.spawn(pts).map_err(|error| match error {
        pty_process::Error::Io(source) => spawn_error(spec, source),
        other => ControllerError::Pty(other.to_string()),
    })?;
    let pid = pid_of(&child, spec)?;
    let (read, write) = pty.into_split();
    let (writer, ops) = mpsc::channel(WRITE_BACKLOG);
    let ended = Arc::new(AtomicBool::new(false));
    tokio::spawn(write_input(
        Some(Terminal(write)),
        ops,
        pid,
        Some(terminal),
        ended.clone(),
    ));
    let readers = vec![tokio::spawn(read_output(
        read,
        OutputStream::Pty,
        core.clone(),
        generation,
    ))];
    Ok(Spawned {
        pid,
        child,
        writer,
        readers,
        ended,
    })
}

/// The input side of a process.
trait Input: AsyncWrite + Unpin + Send {
    fn resize(&mut self, _size: TermSize) -> std::io::Result<()> {
        Ok(())
    }

    /// The end of input; `None` when it is dropping the writer.
    fn end_of_input(&self) -> Option<&'static [u8]> {
        None
    }
}

impl Input for tokio::process::ChildStdin {}

/// A terminal's input side.
struct Terminal(pty_process::OwnedWritePty);

impl AsyncWrite for Terminal {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl Input for Terminal {
    fn resize(&mut self, size: TermSize) -> std::io::Result<()> {
        self.0
            .resize(pty_process::Size::new(size.rows, size.cols))
            .map_err(|e| std::io::Error::other(e.to_string()))
    }

    /// End-of-file, as Ctrl-D types it.
    fn end_of_input(&self) -> Option<&'static [u8]> {
        Some(b"\x04")
    }
}

/// Applies input in order until the controller lets go of the sender (the
/// process ended or was replaced) or writing fails. Signals go to the
/// terminal's foreground job when there is a terminal, else to the whole
/// session.
async fn write_input<W: Input>(
    mut writer: Option<W>,
    mut ops: mpsc::Receiver<WriterOp>,
    pid: u32,
    terminal: Option<OwnedFd>,
    ended: Arc<AtomicBool>,
) {
    while let Some(op) = ops.recv().await {
        if matches!(op, WriterOp::Signal(_)) && ended.load(Ordering::Acquire) {
            // Reaped: its pid and groups may be someone else's now.
            continue;
        }
        let done = match (op, writer.as_mut()) {
            (WriterOp::Signal(signal), Some(input))
                if let Some(key) = terminal.as_ref().and_then(|t| signal_key(t, signal)) =>
            {
                // As the key: the terminal signals its foreground job and
                // drops the input typed ahead, in order with what follows.
                match input.write_all(&[key]).await {
                    Ok(()) => input.flush().await,
                    Err(error) => Err(error),
                }
            }
            (WriterOp::Signal(signal), _) => {
                match terminal.as_ref().and_then(foreground_group) {
                    Some(group) => {
                        let _ = killpg(group, signal);
                    }
                    None => signal_session(pid, signal),
                }
                Ok(())
            }
            (_, None) => Ok(()),
            (WriterOp::Data(data), Some(writer)) => match writer.write_all(&data).await {
                Ok(()) => writer.flush().await,
                Err(error) => Err(error),
            },
            (WriterOp::Resize(size), Some(writer)) => writer.resize(size),
            (WriterOp::Close, Some(input)) => match input.end_of_input() {
                Some(bytes) => match input.write_all(bytes).await {
                    Ok(()) => input.flush().await,
                    Err(error) => Err(error),
                },
                None => {
                    let _ = input.shutdown().await;
                    writer = None;
                    Ok(())
                }
            },
        };
        if done.is_err() {
            // Nothing more can be written; signals still can.
            writer = None;
        }
    }
}

/// The terminal's foreground process group, when it has one other than
/// this process's own. (With its session leader gone a terminal has none,
/// and reports 0, which `killpg` would take as this process's group.)
fn foreground_group(terminal: &OwnedFd) -> Option<Pid> {
    nix::unistd::tcgetpgrp(terminal.as_fd())
        .ok()
        .filter(|group| group.as_raw() > 1 && *group != nix::unistd::getpgrp())
}

/// The key that makes the terminal send `signal` (Ctrl-C for SIGINT,
/// Ctrl-\ for SIGQUIT, Ctrl-Z for SIGTSTP, as the terminal is set up), if
/// its keys send signals now.
fn signal_key(terminal: &OwnedFd, signal: Signal) -> Option<u8> {
    use nix::sys::termios::{_POSIX_VDISABLE, LocalFlags, SpecialCharacterIndices, tcgetattr};
    let index = match signal {
        Signal::SIGINT => SpecialCharacterIndices::VINTR,
        Signal::SIGQUIT => SpecialCharacterIndices::VQUIT,
        Signal::SIGTSTP => SpecialCharacterIndices::VSUSP,
        _ => return None,
    };
    let settings = tcgetattr(terminal.as_fd()).ok()?;
    let key = settings.control_chars[index as usize];
    (settings.local_flags.contains(LocalFlags::ISIG) && key != _POSIX_VDISABLE).then_some(key)
}

/// Publishes what the process writes until the stream ends (a terminal
/// reports its end as an I/O error once every process has let go of it),
/// or a newer process has taken the controller.
async fn read_output<R: AsyncRead + Unpin>(
    mut reader: R,
    stream: OutputStream,
    core: Arc<ProcessCore>,
    generation: u64,
) {
    let mut buffer = vec![0u8; 8192];
    loop {
        match reader.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if !core.is_current(generation) {
                    break;
                }
                core.hub
                    .publish(OutputEvent::Output {
                        stream,
                        data: buffer[..n].to_vec(),
                    })
                    .await;
            }
        }
    }
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
