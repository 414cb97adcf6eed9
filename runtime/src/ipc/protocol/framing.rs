//! Framing: a big-endian `u32` length and a MessagePack body, read and
//! written blocking and async, a frame over the limit refused before its
//! body is read, and the body decoded with a bound on its nesting.

use std::io::{self, Read, Write};

use serde::{Deserialize, Serialize};

/// Why a frame could not be read.
#[derive(Debug)]
pub enum FrameError {
    /// The peer announced a frame larger than the limit.
    TooLarge {
        /// The announced length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The connection ended inside a frame.
    Truncated,
    /// The connection failed.
    Io(io::Error),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::TooLarge { len, max } => {
                write!(f, "a frame of {len} bytes is over the {max}-byte limit")
            }
            FrameError::Truncated => f.write_str("the connection ended in the middle of a frame"),
            FrameError::Io(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for FrameError {}

/// Decodes a frame body, refusing nesting deeper than the protocol uses, so
/// a hostile frame cannot exhaust the stack.
///
/// # Errors
///
/// The decoder's error.
pub fn decode<'de, T: Deserialize<'de>>(body: &'de [u8]) -> Result<T, rmp_serde::decode::Error> {
    let mut deserializer = rmp_serde::Deserializer::from_read_ref(body);
    deserializer.set_max_depth(MAX_DEPTH);
    T::deserialize(&mut deserializer)
}

/// How deeply a frame may nest (the protocol itself needs three levels).
const MAX_DEPTH: usize = 16;

/// Encodes a message as a frame body.
pub fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    // Structs as maps, so fields can be added without breaking older peers.
    // Writing into a `Vec` cannot fail, and the protocol's types always
    // serialize.
    rmp_serde::to_vec_named(message).unwrap_or_default()
}

/// Writes one frame: the body's length, big-endian, then the body; a
/// small frame in one write.
///
/// # Errors
///
/// The writer's error, or `InvalidInput` for a body over 4 GiB.
pub fn write_frame<W: Write>(writer: &mut W, body: &[u8]) -> io::Result<()> {
    // The length and the body in one system call (over TCP, one packet),
    // without copying the body.
    let mut frame = FrameCursor::new(body)?;
    while !frame.is_done() {
        match writer.write_vectored(&frame.slices()) {
            Ok(n) => frame.advance(n)?,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    writer.flush()
}

/// What is left to write of a frame: its length prefix, then its body,
/// written together (vectored) by [`write_frame`] and its async twin.
struct FrameCursor<'a> {
    head: [u8; 4],
    body: &'a [u8],
    head_done: usize,
    body_done: usize,
}

impl<'a> FrameCursor<'a> {
    fn new(body: &'a [u8]) -> io::Result<Self> {
        Ok(FrameCursor {
            head: frame_head(body)?,
            body,
            head_done: 0,
            body_done: 0,
        })
    }

    fn is_done(&self) -> bool {
        self.head_done == self.head.len() && self.body_done == self.body.len()
    }

    fn slices(&self) -> [io::IoSlice<'_>; 2] {
        [
            io::IoSlice::new(&self.head[self.head_done..]),
            io::IoSlice::new(&self.body[self.body_done..]),
        ]
    }

    /// `n` more bytes went out; none, while some were left, is an error.
    fn advance(&mut self, n: usize) -> io::Result<()> {
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        let into_head = n.min(self.head.len() - self.head_done);
        self.head_done += into_head;
        self.body_done += n - into_head;
        Ok(())
    }
}

/// Appends one frame (length and body) to `out`, so that several frames
/// can leave in one write: a client's hello with its first request.
///
/// # Errors
///
/// `InvalidInput` for a body over 4 GiB.
pub(crate) fn append_frame(out: &mut Vec<u8>, body: &[u8]) -> io::Result<()> {
    out.extend_from_slice(&frame_head(body)?);
    out.extend_from_slice(body);
    Ok(())
}

/// A frame's length prefix.
fn frame_head(body: &[u8]) -> io::Result<[u8; 4]> {
    let len = u32::try_from(body.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame over 4 GiB"))?;
    Ok(len.to_be_bytes())
}

/// Reads one frame body, or `None` at a clean end of the stream.
///
/// The body's buffer grows as bytes arrive, so an announced length costs
/// nothing until the bytes are there.
///
/// # Errors
///
/// [`FrameError::TooLarge`] before reading a body over `max` (the body is
/// not read), [`FrameError::Truncated`] when the stream ends inside a frame.
pub fn read_frame<R: Read>(reader: &mut R, max: usize) -> Result<Option<Vec<u8>>, FrameError> {
    let Some(head) = read_head(reader, None)? else {
        return Ok(None);
    };
    let (len, mut body) = announced(head, max)?;
    reader
        .take(len as u64)
        .read_to_end(&mut body)
        .map_err(FrameError::Io)?;
    whole(body, len).map(Some)
}

/// Reads one frame body into `buffer`, reused from frame to frame (no
/// allocation once it has grown to the largest frame), the frame's first
/// byte being `first` when it was read already: the body's length, or
/// `None` at a clean end of the stream. The body is `&buffer[..len]`.
/// For a reader that trusts its peer's announced lengths up to `max` (a
/// client reading its host): the buffer grows to one before the bytes come.
///
/// # Errors
///
/// As [`read_frame`].
pub(crate) fn read_frame_after<R: Read>(
    reader: &mut R,
    first: Option<u8>,
    max: usize,
    buffer: &mut Vec<u8>,
) -> Result<Option<usize>, FrameError> {
    let Some(head) = read_head(reader, first)? else {
        return Ok(None);
    };
    let len = u32::from_be_bytes(head) as usize;
    if len > max {
        return Err(FrameError::TooLarge { len, max });
    }
    if buffer.len() < len {
        buffer.resize(len, 0);
    }
    match reader.read_exact(&mut buffer[..len]) {
        Ok(()) => Ok(Some(len)),
        Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => Err(FrameError::Truncated),
        Err(error) => Err(FrameError::Io(error)),
    }
}

/// A frame's length prefix, whose first byte may have been read already;
/// `None` at a clean end of the stream (before any byte of it).
fn read_head<R: Read>(reader: &mut R, first: Option<u8>) -> Result<Option<[u8; 4]>, FrameError> {
    let mut head = [0u8; 4];
    let mut filled = 0;
    if let Some(byte) = first {
        head[0] = byte;
        filled = 1;
    }
    while filled < head.len() {
        match reader.read(&mut head[filled..]) {
            Ok(0) if filled == 0 => return Ok(None),
            Ok(0) => return Err(FrameError::Truncated),
            Ok(n) => filled += n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(FrameError::Io(error)),
        }
    }
    Ok(Some(head))
}

/// The async twin of [`read_frame`].
///
/// # Errors
///
/// As [`read_frame`].
#[cfg(feature = "ipc")]
pub async fn read_frame_async<R>(reader: &mut R, max: usize) -> Result<Option<Vec<u8>>, FrameError>
where
    R: tokio::io::AsyncRead + Unpin,
{
    use tokio::io::AsyncReadExt;
    let mut head = [0u8; 4];
    let mut filled = 0;
    while filled < head.len() {
        match reader.read(&mut head[filled..]).await {
            Ok(0) if filled == 0 => return Ok(None),
            Ok(0) => return Err(FrameError::Truncated),
            Ok(n) => filled += n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(FrameError::Io(error)),
        }
    }
    read_body_async(reader, head, max).await.map(Some)
}

/// The body of a frame whose length prefix `head` has been read.
#[cfg(feature = "ipc")]
pub(crate) async fn read_body_async<R>(
    reader: &mut R,
    head: [u8; 4],
    max: usize,
) -> Result<Vec<u8>, FrameError>
where
    R: tokio::io::AsyncRead + Unpin,
{
    use tokio::io::AsyncReadExt;
    let (len, mut body) = announced(head, max)?;
    reader
        .take(len as u64)
        .read_to_end(&mut body)
        .await
        .map_err(FrameError::Io)?;
    whole(body, len)
}

/// The length a frame's head announces, refused over `max`, and a buffer
/// for its body. The buffer grows as the bytes arrive, so a large announced
/// length costs nothing until it is sent.
fn announced(head: [u8; 4], max: usize) -> Result<(usize, Vec<u8>), FrameError> {
    let len = u32::from_be_bytes(head) as usize;
    if len > max {
        return Err(FrameError::TooLarge { len, max });
    }
    Ok((len, Vec::with_capacity(len.min(256 * 1024))))
}

/// The body read for a frame of `len` bytes, if the stream did not end
/// first.
fn whole(body: Vec<u8>, len: usize) -> Result<Vec<u8>, FrameError> {
    if body.len() < len {
        return Err(FrameError::Truncated);
    }
    Ok(body)
}

/// The async twin of [`write_frame`].
///
/// # Errors
///
/// As [`write_frame`].
#[cfg(feature = "ipc")]
pub async fn write_frame_async<W>(writer: &mut W, body: &[u8]) -> io::Result<()>
where
    W: tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::AsyncWriteExt;
    // The length and the body in one system call where the writer takes
    // both (a streamed chunk is mostly this call).
    let mut frame = FrameCursor::new(body)?;
    while !frame.is_done() {
        let n = writer.write_vectored(&frame.slices()).await?;
        frame.advance(n)?;
    }
    writer.flush().await
}
