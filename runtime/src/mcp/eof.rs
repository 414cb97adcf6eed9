//! Noticing that an MCP client has gone: the end of what it sends (or a
//! failed read) cancels a token, so running calls are cancelled with
//! `CancelReason::CallerGone` at once rather than when the SDK gives up
//! waiting for them.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

/// A reader that cancels `gone` when it reaches its end or fails.
pub(super) struct SignalEof<R> {
    reader: R,
    gone: CancellationToken,
}

impl<R> SignalEof<R> {
    /// Wraps `reader`.
    pub(super) fn new(reader: R, gone: CancellationToken) -> Self {
        SignalEof { reader, gone }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for SignalEof<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let asked = buf.remaining() > 0;
        let polled = Pin::new(&mut self.reader).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) if asked && buf.filled().len() == before => self.gone.cancel(),
            Poll::Ready(Err(_)) => self.gone.cancel(),
            _ => {}
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn the_end_of_the_stream_cancels_and_data_does_not() {
        let gone = CancellationToken::new();
        let mut reader = SignalEof::new(&b"hi"[..], gone.clone());
        let mut two = [0; 2];
        reader.read_exact(&mut two).await.unwrap();
        assert!(!gone.is_cancelled(), "data is not the end");
        assert_eq!(reader.read(&mut two).await.unwrap(), 0);
        assert!(gone.is_cancelled(), "the end is");
    }
}
