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
/// serializer in between. (The server writes output as
/// [`encode_output_header`] and the data; this is their reference.)
#[cfg(test)]
pub(crate) fn encode_output(id: u64, stream: OutputStream, data: &[u8]) -> Vec<u8> {
    encode_chunk("output", id, Some(stream_name(stream)), data)
}

/// A stream's name on the wire.
#[cfg(any(feature = "ipc", test))]
fn stream_name(stream: OutputStream) -> &'static str {
    match stream {
        OutputStream::Stdout => "stdout",
        OutputStream::Stderr => "stderr",
    }
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
    write_envelope(&mut body, kind, id, stream, data.len());
    body.extend_from_slice(data);
    body
}

/// A data frame's envelope, up to and including its data's length: what
/// precedes the data in the frame's body.
fn write_envelope(body: &mut Vec<u8>, kind: &str, id: u64, stream: Option<&str>, len: usize) {
    // Writing into a `Vec` cannot fail; a chunk's length is under the
    // frame limit, far under 4 GiB.
    let _ = rmp::encode::write_map_len(body, 1);
    let _ = rmp::encode::write_str(body, kind);
    let _ = rmp::encode::write_map_len(body, if stream.is_some() { 3 } else { 2 });
    let _ = rmp::encode::write_str(body, "id");
    let _ = rmp::encode::write_uint(body, id);
    if let Some(stream) = stream {
        let _ = rmp::encode::write_str(body, "stream");
        let _ = rmp::encode::write_str(body, stream);
    }
    let _ = rmp::encode::write_str(body, "data");
    let _ = rmp::encode::write_bin_len(body, u32::try_from(len).unwrap_or(u32::MAX));
}

/// Appends to `out` what precedes `len` bytes of output data on the wire:
/// the frame's length prefix and the envelope of an output frame, so a
/// frame goes out as this and the data, the data never copied into it.
#[cfg(feature = "ipc")]
pub(crate) fn encode_output_header(out: &mut Vec<u8>, id: u64, stream: OutputStream, len: usize) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    write_envelope(out, "output", id, Some(stream_name(stream)), len);
    let body_len = out.len() - at - 4 + len;
    let prefix = u32::try_from(body_len).unwrap_or(u32::MAX).to_be_bytes();
    out[at..at + 4].copy_from_slice(&prefix);
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

#[cfg(all(test, feature = "ipc"))]
mod tests {
    use super::*;

    #[test]
    fn an_output_header_and_its_data_are_the_frame_encode_output_makes() {
        for len in [0, 1, 31, 32, 255, 256, 65_535, 65_536, 300_000] {
            let data = vec![7u8; len];
            for stream in [OutputStream::Stdout, OutputStream::Stderr] {
                let mut wire = b"before".to_vec();
                encode_output_header(&mut wire, 1 << 40, stream, len);
                wire.extend_from_slice(&data);
                let mut expected = b"before".to_vec();
                super::super::framing::append_frame(
                    &mut expected,
                    &encode_output(1 << 40, stream, &data),
                )
                .unwrap();
                assert_eq!(wire, expected, "{len} bytes of {stream:?}");
            }
        }
    }
}
