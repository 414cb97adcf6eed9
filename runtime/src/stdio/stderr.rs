//! The stderr task: logs each line of the peer's stderr and keeps its tail
//! for [`RpcError::Closed`](super::RpcError::Closed).

use std::sync::Arc;

use tokio::io::{AsyncRead, BufReader};
use tokio_util::sync::CancellationToken;

use super::lines::{Line, LineReader};
use super::state::TransportState;
use crate::sync::LockUnpoisoned;

/// Keeps the tail of the peer's stderr and logs each line.
pub(super) async fn keep_stderr<E>(stderr: E, shared: Arc<TransportState>, done: CancellationToken)
where
    E: AsyncRead + Unpin,
{
    let mut reader = LineReader::new(BufReader::new(stderr), 64 * 1024);
    let mut line = Vec::new();
    loop {
        let next = tokio::select! {
            biased;
            () = shared.closed.cancelled() => break,
            next = reader.next(&mut line) => next,
        };
        match next {
            Ok(Line::Complete) => {
                tracing::info!(target: "gangway::stdio::stderr", pid = shared.pid, "{}", String::from_utf8_lossy(&line));
                line.push(b'\n');
                shared.stderr.lock_unpoisoned().push(&line);
            }
            Ok(Line::TooLong(len)) => {
                let note = format!("[a stderr line of {len} bytes, not kept]\n");
                shared.stderr.lock_unpoisoned().push(note.as_bytes());
            }
            Ok(Line::End) | Err(_) => break,
        }
    }
    done.cancel();
}
