//! [`CallLine`]: how a call's context reaches whoever serves the call (a
//! socket connection, an MCP request), so that the handler's side never
//! depends on either. The server's per-call I/O and the MCP sink implement
//! it.

use std::future::Future;
use std::io;
use std::pin::Pin;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::ipc::call::output_stream::OutputStream;

/// The future [`CallLine::write`] returns.
pub(crate) type Written<'a> = Pin<Box<dyn Future<Output = bool> + Send + 'a>>;

/// The receiving end of a call's live input.
pub(crate) type InputChunks = mpsc::UnboundedReceiver<io::Result<Vec<u8>>>;

/// Where one call's output, progress and input credit go.
pub(crate) trait CallLine: Send + Sync {
    /// Sends `bytes` to the caller's `stream`, waiting for room; `false`
    /// once no more is taken (the call is over, the caller gone, or the
    /// output over its limit).
    fn write<'a>(
        &'a self,
        stream: OutputStream,
        bytes: &'a [u8],
        cancelled: &'a CancellationToken,
    ) -> Written<'a>;

    /// Sends `bytes` as [`write`](Self::write) does when that needs no
    /// waiting: `Some(sent)`, or `None` when it would wait (then `write`
    /// does). Lets the common write go without a boxed future.
    fn try_write(
        &self,
        stream: OutputStream,
        bytes: &[u8],
        cancelled: &CancellationToken,
    ) -> Option<bool> {
        let _ = (stream, bytes, cancelled);
        None
    }

    /// How far the call has come; never waits.
    fn progress(&self, done: u64, total: Option<u64>, message: Option<String>);

    /// Opens the caller's live input, with its first credit sent; `None`
    /// when this line carries no input.
    fn open_input(&self) -> Option<InputChunks> {
        None
    }

    /// Gives the caller credit for `bytes` more of input.
    fn grant(&self, bytes: u64) {
        let _ = bytes;
    }
}
