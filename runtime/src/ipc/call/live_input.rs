//! [`LiveInput`]: the live half of an [`InputStream`](crate::ipc::InputStream),
//! the caller's input arriving chunk by chunk within the credit the host
//! grants ([`INPUT_WINDOW`] ahead of the handler, given again as the
//! handler reads half of it). Without the `ipc` feature, `detached.rs`
//! stands in.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::ipc::call::line::{CallLine, InputChunks};

/// How many bytes of input the host takes ahead of the handler: the credit
/// a caller starts with, given again as the handler reads half of it.
pub(crate) const INPUT_WINDOW: u64 = 1024 * 1024;

/// The caller's input, chunk by chunk.
pub(crate) struct LiveInput {
    chunks: InputChunks,
    line: Arc<dyn CallLine>,
    cancelled: Pin<Box<WaitForCancellationFutureOwned>>,
    token: CancellationToken,
    /// Bytes handed to the handler since credit was last granted.
    consumed: u64,
}

impl LiveInput {
    pub(crate) fn new(
        chunks: InputChunks,
        line: Arc<dyn CallLine>,
        token: CancellationToken,
    ) -> Self {
        LiveInput {
            chunks,
            line,
            cancelled: Box::pin(token.clone().cancelled_owned()),
            token,
            consumed: 0,
        }
    }

    /// The next chunk, the end (`None`), or why there is none; and whether
    /// the input is over (a cancel is not: it is reported again).
    pub(crate) fn poll_chunk(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<(io::Result<Option<Vec<u8>>>, bool)> {
        if self.token.is_cancelled() {
            return Poll::Ready((Err(cancelled()), false));
        }
        match self.chunks.poll_recv(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                self.consumed += chunk.len() as u64;
                if self.consumed >= INPUT_WINDOW / 2 {
                    self.line.grant(self.consumed);
                    self.consumed = 0;
                }
                Poll::Ready((Ok(Some(chunk)), false))
            }
            Poll::Ready(Some(Err(error))) => Poll::Ready((Err(error), true)),
            Poll::Ready(None) => Poll::Ready((Ok(None), true)),
            Poll::Pending => {
                ready!(self.cancelled.as_mut().poll(cx));
                Poll::Ready((Err(cancelled()), false))
            }
        }
    }
}

fn cancelled() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "the call was cancelled")
}
