//! The exit watcher task: waits for the peer process to exit (or kills it
//! when told to), records how it ended, kills what it left in its session,
//! and closes the connection when something it left holds its stdout open.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::process::Child;
use tokio_util::sync::CancellationToken;

use super::process::ExitOutcome;
use super::state::TransportState;

/// Waits for the child to exit (or kills it when told to), records how it
/// ended, clears out what is left of its process group, and closes the
/// connection if its stdout does not end by itself soon after.
pub(super) async fn watch_child(
    mut child: Child,
    shared: Arc<TransportState>,
    stdout_done: CancellationToken,
) {
    let pid = child.id();
    let (status, killed) = tokio::select! {
        status = child.wait() => (status, false),
        () = shared.kill.cancelled() => {
            if let Some(pid) = pid {
                crate::process_tree::signal_tree(pid, Signal::SIGKILL);
            }
            let _ = child.start_kill();
            (child.wait().await, true)
        }
    };
    // Helpers the peer left in its group go with it.
    if let Some(pid) = pid {
        crate::process_tree::signal_tree(pid, Signal::SIGKILL);
    }
    let outcome = match status {
        Ok(status) => ExitOutcome::from_status(status, killed),
        Err(_) => ExitOutcome::Killed,
    };
    shared.exit.send_replace(Some(outcome));
    // Its stdout usually ends with it, and the reader closes the connection
    // once it has read what is left. Close here only when the reader has
    // drained the pipe and still waits on it: a process the peer left
    // behind holds it open.
    let mut seen = shared.lines_read.load(Ordering::Acquire);
    loop {
        tokio::select! {
            () = stdout_done.cancelled() => return,
            () = shared.closed.cancelled() => return,
            () = tokio::time::sleep(Duration::from_millis(50)) => {}
        }
        let now = shared.lines_read.load(Ordering::Acquire);
        if now == seen && shared.reader_waiting.load(Ordering::Acquire) {
            shared.close(format!(
                "the peer {outcome}, though something it left behind still holds its standard \
                 output open"
            ));
            return;
        }
        seen = now;
    }
}
