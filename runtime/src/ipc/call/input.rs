//! [`InputStream`]: a command's standard input as it arrives, for a stdin
//! argument that should not wait for the whole input (`tail -f log |
//! host-grep ERROR`), nor fit it in one frame.
//!
//! Declared as the command's stdin argument (`#[ipc(stdin)] input:
//! InputStream`), it receives the caller's piped input in chunks, as the
//! caller reads it, with no size ceiling: the host grants the caller credit
//! for a window of bytes ahead of the handler and more as the handler
//! consumes them, so memory stays bounded however much is piped. Given the
//! input whole (an explicit `--input text`, an in-process dispatch, an
//! agent's JSON call), it yields those bytes and ends.

use std::fmt;
use std::io;
#[cfg(feature = "ipc")]
use std::pin::Pin;
#[cfg(feature = "ipc")]
use std::sync::Arc;
use std::task::{Context, Poll, ready};

#[cfg(not(feature = "ipc"))]
use crate::ipc::call::detached_input::LiveInput;
#[cfg(feature = "ipc")]
use crate::ipc::call::line::{CallLine, InputChunks};
#[cfg(feature = "ipc")]
use crate::ipc::call::live_input::LiveInput;

/// A command's standard input, read as it arrives.
///
/// Declared as the command's stdin argument (`#[ipc(stdin)] input:
/// InputStream`), it receives the caller's piped input in chunks as the
/// caller reads it, with no size ceiling: the host grants the caller 1 MiB
/// of credit ahead of the handler and more as the handler consumes it, so
/// memory stays bounded however much is piped. Given the input whole (an
/// explicit `--input text`, an in-process dispatch, an agent's JSON call),
/// it yields those bytes and ends. Read it with
/// [`next_chunk`](InputStream::next_chunk), or as a `tokio::io::AsyncRead`
/// (with the `ipc` feature).
///
/// ```
/// use gangway::IpcCommand;
/// use gangway::ipc::{CommandResult, InputStream};
///
/// /// Count the bytes piped in.
/// #[derive(Clone, serde::Serialize, serde::Deserialize, IpcCommand)]
/// #[ipc(response = CommandResult<u64>)]
/// struct CountBytes {
///     /// The input.
///     #[ipc(stdin)]
///     input: InputStream,
/// }
///
/// impl CountBytes {
///     async fn handle(&mut self) -> CommandResult<u64> {
///         let mut total = 0;
///         while let Some(chunk) = self.input.next_chunk().await? {
///             total += chunk.len() as u64;
///         }
///         Ok(total)
///     }
/// }
/// ```
///
/// It is `Clone` only so that commands holding it can be (the router
/// clones its prototype for each call): a clone of a stream is empty.
#[derive(Default)]
pub struct InputStream {
    source: Source,
    /// The unread rest of the current chunk (for `AsyncRead`).
    pending: Vec<u8>,
    offset: usize,
}

#[derive(Default)]
enum Source {
    /// Input given whole, not yet read.
    Whole(Vec<u8>),
    /// Read to its end.
    #[default]
    Ended,
    /// The caller's input, chunk by chunk (never, without `ipc`).
    #[cfg_attr(not(feature = "ipc"), allow(dead_code))]
    Live(Box<LiveInput>),
}

impl InputStream {
    /// An empty stream.
    pub fn new() -> Self {
        InputStream::default()
    }

    /// A stream of the caller's live input.
    #[cfg(feature = "ipc")]
    pub(crate) fn live(
        chunks: InputChunks,
        line: Arc<dyn CallLine>,
        token: tokio_util::sync::CancellationToken,
    ) -> Self {
        InputStream {
            source: Source::Live(Box::new(LiveInput::new(chunks, line, token))),
            pending: Vec::new(),
            offset: 0,
        }
    }

    /// Whether the input streams from a caller (rather than being given
    /// whole).
    pub fn is_live(&self) -> bool {
        matches!(self.source, Source::Live(_))
    }

    /// The next chunk of input, as the caller sent it; `None` at the end.
    ///
    /// # Errors
    ///
    /// `UnexpectedEof` when the caller went away before its input ended,
    /// `Interrupted` once the call is cancelled, `InvalidData` for a caller
    /// that broke the protocol.
    pub async fn next_chunk(&mut self) -> io::Result<Option<Vec<u8>>> {
        if self.offset < self.pending.len() {
            let rest = self.pending.split_off(self.offset);
            self.pending.clear();
            self.offset = 0;
            return Ok(Some(rest));
        }
        std::future::poll_fn(|cx| self.poll_chunk(cx)).await
    }

    /// Polls for the next chunk (what both `next_chunk` and `AsyncRead`
    /// use).
    fn poll_chunk(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<Vec<u8>>>> {
        match &mut self.source {
            Source::Whole(_) | Source::Ended => Poll::Ready(Ok(self.take_whole())),
            Source::Live(live) => {
                let (polled, ended) = ready!(live.poll_chunk(cx));
                if ended {
                    self.source = Source::Ended;
                }
                Poll::Ready(polled)
            }
        }
    }

    /// The whole input given at once, the first time; then the end.
    fn take_whole(&mut self) -> Option<Vec<u8>> {
        match std::mem::take(&mut self.source) {
            Source::Whole(bytes) if !bytes.is_empty() => Some(bytes),
            _ => None,
        }
    }
}

#[cfg(feature = "ipc")]
impl tokio::io::AsyncRead for InputStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        while this.offset >= this.pending.len() {
            match ready!(this.poll_chunk(cx))? {
                Some(chunk) => {
                    this.pending = chunk;
                    this.offset = 0;
                }
                None => return Poll::Ready(Ok(())),
            }
        }
        let n = buf.remaining().min(this.pending.len() - this.offset);
        buf.put_slice(&this.pending[this.offset..this.offset + n]);
        this.offset += n;
        Poll::Ready(Ok(()))
    }
}

impl From<Vec<u8>> for InputStream {
    fn from(bytes: Vec<u8>) -> Self {
        InputStream {
            source: Source::Whole(bytes),
            pending: Vec::new(),
            offset: 0,
        }
    }
}

impl From<String> for InputStream {
    fn from(text: String) -> Self {
        InputStream::from(text.into_bytes())
    }
}

impl From<&str> for InputStream {
    fn from(text: &str) -> Self {
        InputStream::from(text.as_bytes().to_vec())
    }
}

impl Clone for InputStream {
    fn clone(&self) -> Self {
        InputStream::default()
    }
}

impl fmt::Debug for InputStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = match &self.source {
            Source::Whole(bytes) => format!("{} bytes given whole", bytes.len()),
            Source::Ended => "ended".to_owned(),
            Source::Live(_) => "live".to_owned(),
        };
        f.debug_struct("InputStream")
            .field("source", &source)
            .finish_non_exhaustive()
    }
}

/// Travels as nothing: the input is not an argument to send back.
impl serde::Serialize for InputStream {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_unit()
    }
}

/// Taken from bytes or text given whole (nothing, or `nil`, is empty).
impl<'de> serde::Deserialize<'de> for InputStream {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Whole;
        impl<'de> serde::de::Visitor<'de> for Whole {
            type Value = InputStream;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("input as bytes or text")
            }
            fn visit_bytes<E>(self, bytes: &[u8]) -> Result<InputStream, E> {
                Ok(InputStream::from(bytes.to_vec()))
            }
            fn visit_byte_buf<E>(self, bytes: Vec<u8>) -> Result<InputStream, E> {
                Ok(InputStream::from(bytes))
            }
            fn visit_str<E>(self, text: &str) -> Result<InputStream, E> {
                Ok(InputStream::from(text))
            }
            fn visit_string<E>(self, text: String) -> Result<InputStream, E> {
                Ok(InputStream::from(text))
            }
            fn visit_unit<E>(self) -> Result<InputStream, E> {
                Ok(InputStream::default())
            }
            fn visit_none<E>(self) -> Result<InputStream, E> {
                Ok(InputStream::default())
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<InputStream, A::Error> {
                let mut bytes = Vec::new();
                while let Some(byte) = seq.next_element::<u8>()? {
                    bytes.push(byte);
                }
                Ok(InputStream::from(bytes))
            }
        }
        deserializer.deserialize_any(Whole)
    }
}

#[cfg(all(test, feature = "ipc"))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn input_given_whole_reads_once_then_ends() {
        let mut input = InputStream::from("abc");
        assert_eq!(input.next_chunk().await.unwrap().unwrap(), b"abc");
        assert_eq!(input.next_chunk().await.unwrap(), None);
        let mut empty = InputStream::from(Vec::new());
        assert_eq!(empty.next_chunk().await.unwrap(), None);

        let mut read = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut InputStream::from("xyz"), &mut read)
            .await
            .unwrap();
        assert_eq!(read, b"xyz");

        let bytes = rmp_serde::to_vec(&serde_bytes::ByteBuf::from(b"hi".to_vec())).unwrap();
        let mut decoded: InputStream = rmp_serde::from_slice(&bytes).unwrap();
        assert_eq!(decoded.next_chunk().await.unwrap().unwrap(), b"hi");
        assert!(!decoded.is_live());
    }
}
