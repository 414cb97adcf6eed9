//! The reader task: reads the peer's stdout line by line (a line over the
//! frame limit is dropped), hands each to the incoming-message handling,
//! and when stdout ends closes the connection, saying how the peer ended.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::io::{AsyncRead, BufReader};
use tokio_util::sync::CancellationToken;

use super::lines::{Line, LineReader};
use super::state::TransportState;

/// Reads the peer's stdout line by line until it ends, then fails what
/// waits.
pub(super) async fn read_lines<R>(
    stdout: R,
    shared: Arc<TransportState>,
    done: CancellationToken,
    stderr_done: CancellationToken,
) where
    R: AsyncRead + Unpin,
{
    let mut reader = LineReader::new(
        BufReader::with_capacity(64 * 1024, stdout),
        shared.options.max_frame,
    );
    let mut line = Vec::new();
    let ended = loop {
        shared.reader_waiting.store(true, Ordering::Release);
        let next = tokio::select! {
            biased;
            // Dropped or shut down: nothing more to read for.
            () = shared.closed.cancelled() => return,
            next = reader.next(&mut line) => next,
        };
        shared.reader_waiting.store(false, Ordering::Release);
        shared.lines_read.fetch_add(1, Ordering::AcqRel);
        match next {
            Ok(Line::Complete) => shared.receive(&line).await,
            Ok(Line::TooLong(len)) => tracing::error!(
                target: "gangway::stdio",
                pid = shared.pid,
                "dropped a line of {len} bytes from the peer, over the {}-byte frame limit",
                shared.options.max_frame
            ),
            Ok(Line::End) => break "the peer closed its standard output".to_owned(),
            Err(error) => break format!("reading the peer's standard output failed: {error}"),
        }
    };
    done.cancel();
    // Let the exit status and the last of stderr arrive, briefly, so the
    // error says why.
    let mut exit = shared.exit.subscribe();
    let settle = async {
        if shared.pid.is_some() {
            let _ = exit.wait_for(Option::is_some).await;
        }
        stderr_done.cancelled().await;
    };
    let _ = tokio::time::timeout(Duration::from_millis(50), settle).await;
    let outcome = *shared.exit.borrow();
    let reason = match outcome {
        Some(outcome) => format!("{ended}; it {outcome}"),
        None => ended,
    };
    shared.close(reason);
}
