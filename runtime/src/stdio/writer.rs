//! The writer task: writes queued lines to the peer's stdin, the lane that
//! never waits first, batching what is ready before each flush; closes
//! stdin once the queue is closed and drained.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::mpsc;

use super::outbox::Queued;
use super::state::TransportState;

/// Writes queued lines to the peer's stdin, batching what is ready before
/// each flush. Ends (closing stdin) when the queue is closed and drained,
/// or when the peer stops reading.
pub(super) async fn write_lines<W>(
    stdin: W,
    mut queue: mpsc::Receiver<Queued>,
    mut urgent: mpsc::UnboundedReceiver<Vec<u8>>,
    shared: Arc<TransportState>,
) where
    W: AsyncWrite + Unpin,
{
    let mut out = BufWriter::with_capacity(64 * 1024, stdin);
    // The next line to write, if any: urgent first. `None` once the queue
    // is closed (by `shutdown`) and drained.
    let next = |urgent: &mut mpsc::UnboundedReceiver<Vec<u8>>,
                queue: &mut mpsc::Receiver<Queued>|
     -> Option<Vec<u8>> {
        if let Ok(line) = urgent.try_recv() {
            shared.urgent_bytes.fetch_sub(line.len(), Ordering::AcqRel);
            return Some(line);
        }
        while let Ok(queued) = queue.try_recv() {
            if queued.call.as_ref().is_none_or(|call| call.mark_written()) {
                return Some(queued.line);
            }
        }
        None
    };
    let failed = 'write: loop {
        let first = tokio::select! {
            biased;
            () = shared.closed.cancelled() => break None,
            Some(line) = urgent.recv() => {
                shared.urgent_bytes.fetch_sub(line.len(), Ordering::AcqRel);
                line
            }
            queued = queue.recv() => match queued {
                Some(queued) if queued.call.as_ref().is_none_or(|call| call.mark_written()) => queued.line,
                // Given up on before it was written: never written.
                Some(_) => continue,
                // Closed by `shutdown`: what was queued is written.
                None => break None,
            },
        };
        let mut line = Some(first);
        // Whatever else is ready goes out in the same flush.
        while let Some(current) = line.take() {
            let written = tokio::select! {
                biased;
                () = shared.closed.cancelled() => break 'write None,
                written = out.write_all(&current) => written,
            };
            if let Err(error) = written {
                break 'write Some(error);
            }
            line = next(&mut urgent, &mut queue);
        }
        let flushed = tokio::select! {
            biased;
            () = shared.closed.cancelled() => break None,
            flushed = out.flush() => flushed,
        };
        if let Err(error) = flushed {
            break Some(error);
        }
    };
    if !shared.closed.is_cancelled() {
        // Answers owed to the peer still go out before stdin closes.
        while let Ok(line) = urgent.try_recv() {
            if out.write_all(&line).await.is_err() {
                break;
            }
        }
        let _ = out.flush().await;
        let _ = out.shutdown().await;
    }
    if let Some(error) = failed {
        tracing::debug!(target: "gangway::stdio", pid = shared.pid, "writing to the peer failed: {error}");
        shared.close(format!(
            "the peer stopped reading its standard input ({error})"
        ));
    }
}
