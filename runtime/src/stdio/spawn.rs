//! Starting a transport: spawning the peer (in a session of its own) or
//! taking streams already open, and starting the tasks that serve them
//! (writer, reader, stderr keeper, exit watcher).

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::StdioTransport;
use super::builder::StdioBuilder;
use super::error::RpcError;
use super::outbox::{Outbox, Queued};
use super::reader::read_lines;
use super::state::TransportState;
use super::stderr::keep_stderr;
use super::watcher::watch_child;
use super::writer::write_lines;

impl StdioBuilder {
    /// Starts `command` as the leader of its own session (so its own
    /// process group too) with piped standard streams, and talks to it. (A
    /// command already set to lead a process group keeps that, and is
    /// signalled as a group.) Call it within a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`RpcError::Io`] naming the program when it cannot be started;
    /// [`RpcError::Internal`] outside a tokio runtime.
    pub fn spawn(self, mut command: tokio::process::Command) -> Result<StdioTransport, RpcError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(RpcError::Internal(
                "StdioTransport runs its reader and writer on tokio: spawn it from within a tokio runtime"
                    .to_owned(),
            ));
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        crate::process_tree::start_own_session(&mut command);
        let program = command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned();
        let mut child = command.spawn().map_err(|error| {
            RpcError::Io(std::io::Error::new(
                error.kind(),
                format!("cannot start `{program}`: {error}"),
            ))
        })?;
        let missing = || RpcError::Internal("a piped standard stream is missing".to_owned());
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stderr = child.stderr.take().ok_or_else(missing)?;
        Ok(self.from_child(child, stdin, stdout, stderr))
    }

    /// Talks to an already spawned child over its piped streams. Must be
    /// called within a tokio runtime (it starts the reading, writing and
    /// watching tasks).
    pub fn from_child(
        self,
        child: Child,
        stdin: ChildStdin,
        stdout: ChildStdout,
        stderr: ChildStderr,
    ) -> StdioTransport {
        self.from_streams(Some(child), stdin, stdout, Some(stderr))
    }

    /// Talks over any pair of streams (a socket, a pipe pair), with the
    /// process behind them if there is one (watched, killed on drop) and
    /// its stderr if there is one. Must be called within a tokio runtime.
    pub fn from_streams<W, R, E>(
        self,
        child: Option<Child>,
        stdin: W,
        stdout: R,
        stderr: Option<E>,
    ) -> StdioTransport
    where
        W: AsyncWrite + Unpin + Send + 'static,
        R: AsyncRead + Unpin + Send + 'static,
        E: AsyncRead + Unpin + Send + 'static,
    {
        let (queue_tx, queue_rx) = mpsc::channel::<Queued>(self.write_queue);
        let (urgent_tx, urgent_rx) = mpsc::unbounded_channel();
        let pid = child.as_ref().and_then(Child::id);
        let shared = Arc::new(TransportState::new(
            self,
            Outbox::Pipe {
                queue: Mutex::new(Some(queue_tx)),
                urgent: urgent_tx,
            },
            pid,
        ));
        let stderr_done = CancellationToken::new();
        match stderr {
            Some(stderr) => {
                tokio::spawn(keep_stderr(stderr, shared.clone(), stderr_done.clone()));
            }
            None => stderr_done.cancel(),
        }
        let stdout_done = CancellationToken::new();
        tokio::spawn(write_lines(stdin, queue_rx, urgent_rx, shared.clone()));
        tokio::spawn(read_lines(
            stdout,
            shared.clone(),
            stdout_done.clone(),
            stderr_done,
        ));
        if let Some(child) = child {
            tokio::spawn(watch_child(child, shared.clone(), stdout_done));
        }
        StdioTransport { shared }
    }
}
