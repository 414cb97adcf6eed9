//! The bulk frames, encoded and decoded without the serializer: a call's
//! output and input chunks, written straight from (and read straight into)
//! the bytes, as the serializer would write them (the protocol's tests
//! check they decode alike).

use serde::Deserialize;

use super::OutputStream;
use super::framing::decode;

/// Encodes an output frame straight from the handler's bytes, as
/// [`HostFrame::Output`](super::HostFrame::Output) would be encoded (the
/// protocol test checks they decode alike), into a buffer of its exact
/// size: the bulk of a streaming call, so one copy of the data and no
/// serializer in between.
#[cfg(any(feature = "ipc", test))]
pub(crate) fn encode_output(id: u64, stream: OutputStream, data: &[u8]) -> Vec<u8> {
    let stream = match stream {
        OutputStream::Stdout => "stdout",
        OutputStream::Stderr => "stderr",
    };
    encode_chunk("output", id, Some(stream), data)
}

/// An output frame's call, stream and data, borrowed from the frame's
/// body (no copy); `None` for any other frame.
pub(crate) fn decode_output(body: &[u8]) -> Option<(u64, OutputStream, &[u8])> {
    #[derive(Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Borrowed<'a> {
        Output {
            id: u64,
            stream: OutputStream,
            #[serde(borrow)]
            data: &'a serde_bytes::Bytes,
        },
    }
    match decode::<Borrowed<'_>>(body).ok()? {
        Borrowed::Output { id, stream, data } => Some((id, stream, data)),
    }
}

/// An input frame's call and where its data lies in the frame's body
/// (so the body can become the chunk without a copy); `None` for any
/// other frame.
#[cfg(any(feature = "ipc", test))]
pub(crate) fn decode_input(body: &[u8]) -> Option<(u64, std::ops::Range<usize>)> {
    #[derive(Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Borrowed<'a> {
        Input {
            id: u64,
            #[serde(borrow)]
            data: &'a serde_bytes::Bytes,
        },
    }
    let Borrowed::Input { id, data } = decode::<Borrowed<'_>>(body).ok()?;
    // The data is borrowed from `body`: its offset in it.
    let start = (data.as_ptr() as usize).checked_sub(body.as_ptr() as usize)?;
    Some((id, start..start + data.len()))
}

/// Encodes an input frame straight from the bytes read, as
/// [`ClientFrame::Input`](super::ClientFrame::Input) would be encoded, into
/// a buffer of its exact size.
pub(crate) fn encode_input(id: u64, data: &[u8]) -> Vec<u8> {
    encode_chunk("input", id, None, data)
}

/// `{kind: {id, stream?, data}}`, the one shape of the frames that carry
/// data, written by hand.
fn encode_chunk(kind: &str, id: u64, stream: Option<&str>, data: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(data.len() + CHUNK_OVERHEAD);
    // Writing into a `Vec` cannot fail.
    let _ = rmp::encode::write_map_len(&mut body, 1);
    let _ = rmp::encode::write_str(&mut body, kind);
    let _ = rmp::encode::write_map_len(&mut body, if stream.is_some() { 3 } else { 2 });
    let _ = rmp::encode::write_str(&mut body, "id");
    let _ = rmp::encode::write_uint(&mut body, id);
    if let Some(stream) = stream {
        let _ = rmp::encode::write_str(&mut body, "stream");
        let _ = rmp::encode::write_str(&mut body, stream);
    }
    let _ = rmp::encode::write_str(&mut body, "data");
    let _ = rmp::encode::write_bin(&mut body, data);
    body
}

/// The bytes a frame's envelope adds around a chunk of data, at most: what
/// a chunk leaves room for under the frame limit.
pub(crate) const CHUNK_OVERHEAD: usize = 64;

/// Why a client and a host of different releases cannot talk: both
/// versions, and the fix.
pub(crate) fn version_mismatch(client: u32, host: u32) -> String {
    format!(
        "the client speaks gangway protocol version {client} and the host version {host}; \
         use the client of the host's gangway release (and regenerate the wrappers with it)"
    )
}
