//! Starting a command (piped stdio) or a shell (a terminal) as the leader
//! of a new session, with its plumbing: the writer task that applies input
//! in order (data, sizes, signals, the end of input) and the tasks that
//! read its output.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::input::TermSize;
use super::output::{OutputEvent, OutputHub, OutputSource};
use super::{ControllerError, LaunchSpec};
use crate::process_tree::{reset_signal_actions, signal_session, start_own_session};

/// How many inputs may wait for the process to read them.
const WRITE_BACKLOG: usize = 1024;

/// Something for the writer task, in the order it was sent.
pub(super) enum WriterOp {
    Data(Vec<u8>),
    Resize(TermSize),
    /// A sequenced signal: delivered in order with the data around it.
    Signal(Signal),
    /// The end of input: stdin closed, or end-of-file typed on a terminal.
    Close,
}

/// The run a reader publishes for: where its output goes, and whether it
/// is still the controller's current run.
pub(super) trait RunOutput: Send + Sync + 'static {
    /// Whether run `generation` is still the running one.
    fn is_current(&self, generation: u64) -> bool;

    /// Where output goes.
    fn hub(&self) -> &OutputHub;
}

/// A started process and its plumbing.
pub(super) struct Spawned {
    pub(super) pid: u32,
    pub(super) child: tokio::process::Child,
    pub(super) writer: mpsc::Sender<WriterOp>,
    pub(super) readers: Vec<JoinHandle<()>>,
    pub(super) ended: Arc<AtomicBool>,
}

impl Spawned {
    /// Starts the writer task on `input` (signalling through `terminal`
    /// when there is one) and gathers the plumbing of process `pid`.
    fn new<W: Input + 'static>(
        child: tokio::process::Child,
        pid: u32,
        input: W,
        terminal: Option<OwnedFd>,
        readers: Vec<JoinHandle<()>>,
    ) -> Self {
        let (writer, ops) = mpsc::channel(WRITE_BACKLOG);
        let ended = Arc::new(AtomicBool::new(false));
        tokio::spawn(write_input(Some(input), ops, pid, terminal, ended.clone()));
        Spawned {
            pid,
            child,
            writer,
            readers,
            ended,
        }
    }
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

/// Starts `spec` with piped stdio; its stdout and stderr are published for
/// run `generation` of `core`.
pub(super) fn spawn_command<C: RunOutput>(
    spec: &LaunchSpec,
    core: &Arc<C>,
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
    let readers = vec![
        tokio::spawn(read_output(
            stdout,
            OutputSource::Stdout,
            core.clone(),
            generation,
        )),
        tokio::spawn(read_output(
            stderr,
            OutputSource::Stderr,
            core.clone(),
            generation,
        )),
    ];
    Ok(Spawned::new(child, pid, stdin, None, readers))
}

/// Starts `spec` on a new terminal of `size` (24 by 80 when not given);
/// the terminal's output is published for run `generation` of `core`.
pub(super) fn spawn_shell<C: RunOutput>(
    spec: &LaunchSpec,
    size: Option<TermSize>,
    core: &Arc<C>,
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
    // SAFETY: only `sigaction`, and for a sandboxed process `fcntl` or
    // `close_range`, between fork and exec (async-signal-safe); pty-process
    // still makes the child a session leader on the terminal.
    let seal = spec.clears_env();
    command = unsafe {
        command.pre_exec(move || {
            reset_signal_actions();
            if seal {
                crate::clean_env::seal_inherited_fds()?;
            }
            Ok(())
        })
    };
    if spec.clears_env() {
        command = command.env_clear();
    }
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
    let readers = vec![tokio::spawn(read_output(
        read,
        OutputSource::Pty,
        core.clone(),
        generation,
    ))];
    Ok(Spawned::new(
        child,
        pid,
        Terminal(write),
        Some(terminal),
        readers,
    ))
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
async fn read_output<R: AsyncRead + Unpin, C: RunOutput>(
    mut reader: R,
    stream: OutputSource,
    core: Arc<C>,
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
                core.hub()
                    .publish(OutputEvent::Output {
                        stream,
                        data: buffer[..n].to_vec(),
                    })
                    .await;
            }
        }
    }
}
