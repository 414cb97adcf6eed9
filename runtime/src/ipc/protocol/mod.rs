//! The wire protocol between a sandboxed client and the host: frames of a
//! big-endian `u32` length and a MessagePack body; a versioned request and
//! a response matched to it by id.
//!
//! ```text
//! hello    {v: 3, token}                       (first frame, at most 4 KiB)
//! welcome  {v: 3, max_frame, cancel_grace_ms?} (or a failed response, id 0)
//!
//! client → host, each a map with one key naming the frame:
//!   {call: {id, method, params? | argv? | json?, stdin?, stdin_ready?}}
//!   {list: {id}}                   the manifest of the commands this token may call
//!   {input: {id, data}}            a chunk of standard input, within the credit
//!   {input_end: {id}}              standard input ended
//!   {cancel: {id, signal?}}        stop the call (the caller got a signal)
//! host → client:
//!   {answer: {id, ok, result? | help? | needs_stdin? | error{kind, message, exit, ...}}}
//!   {output: {id, stream, data}}   output as the handler writes it ("stdout"/"stderr")
//!   {progress: {id, done, total?, message?}}
//!   {input_wanted: {id, bytes}}    credit: the host takes this many more bytes of input
//! ```
//!
//! A call's output frames come before its answer, in the order written;
//! the answer ends the call. Input flows only for a command whose stdin
//! argument is an [`InputStream`](crate::ipc::InputStream), and only as the
//! host grants credit (`input_wanted`), so the host's memory stays bounded
//! however much is piped.
//!
//! The hello's version changes when frames change meaning: a client and a
//! host of different versions refuse each other with a message naming both
//! versions (exit 69), never a garbled call.
//!
//! A connection starts with a small hello carrying the token, within a few
//! seconds; the server checks it before reading anything larger, answers
//! with a welcome that publishes its frame limit, and only then reads
//! requests. A wrong or missing token is answered with an `auth` error and
//! the connection closed.
//!
//! Requests on one connection run concurrently and are answered as they
//! finish, matched by id. Closing the connection (or only its sending half)
//! cancels the calls still running on it: nobody is left to read their
//! answers.
//!
//! A `result` is the command's response as `rmp_serde` writes it (structs
//! as maps, in field order). One exception, made by the derive: a response
//! written as `Vec<u8>` or `Box<[u8]>` (also as a `Result`'s success) is
//! MessagePack `bin`, not an array of integers, so clients print it byte
//! for byte; a typed client decodes either form. The derive sees the type
//! as written: behind an alias, or in a hand-written `IpcCommand`, use
//! `serde_bytes::ByteBuf` for the same effect.
//!
//! The files: the messages here; `framing`, a frame's length and body
//! (read and written, blocking and async); `chunks`, the encoders of the
//! bulk frames (output and input) that skip the serializer.

mod chunks;
mod framing;

pub use crate::ipc::call::output_stream::OutputStream;
#[cfg(any(feature = "ipc", test))]
pub(crate) use chunks::decode_input;
#[cfg(test)]
pub(crate) use chunks::encode_output;
#[cfg(feature = "ipc")]
pub(crate) use chunks::encode_output_header;
pub(crate) use chunks::{CHUNK_OVERHEAD, decode_output, encode_input, version_mismatch};
#[cfg(feature = "ipc")]
pub(crate) use framing::read_body_async;
pub use framing::{FrameError, decode, encode, read_frame, write_frame};
pub(crate) use framing::{append_frame, read_frame_after};
#[cfg(feature = "ipc")]
pub use framing::{read_frame_async, write_frame_async};

use serde::{Deserialize, Serialize};
use serde_bytes::ByteBuf;

use crate::ipc::error::kind::ErrorKind;

/// The protocol version this crate speaks: 3 since a call may carry JSON
/// arguments (`json`) and a client may ask for its commands (`list`); 2
/// added streaming (output, progress, input and cancel frames); 1 was one
/// request and one answer.
pub const VERSION: u32 = 3;

/// The default largest frame: 16 MiB.
pub const DEFAULT_MAX_FRAME: usize = 16 * 1024 * 1024;

/// The largest hello frame: the server reads no more than this from a
/// connection before it has checked the token.
pub const MAX_HELLO_FRAME: usize = 4 * 1024;

/// The first frame of a connection.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The protocol version, [`VERSION`].
    pub v: u32,
    /// The server's token.
    pub token: String,
}

impl std::fmt::Debug for Hello {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hello")
            .field("v", &self.v)
            .field("token", &"<redacted>")
            .finish()
    }
}

/// The server's answer to a good hello.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Welcome {
    /// The protocol version, [`VERSION`].
    pub v: u32,
    /// The largest frame the server reads and writes on this connection.
    pub max_frame: u64,
    /// How long the host gives a cancelled call to finish before it drops
    /// it, in milliseconds: how long a caller that sent `cancel` waits for
    /// the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_grace_ms: Option<u64>,
    /// How long the host lets the connection sit with no call running and
    /// nothing received before it closes it, in milliseconds: a client
    /// that keeps a connection across quiet spells sends something (a
    /// `list`) within it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_ms: Option<u64>,
}

/// What an optional field holds when it is left out of a frame.
trait Empty {
    fn is_empty(&self) -> bool;
}

impl<T> Empty for Option<T> {
    fn is_empty(&self) -> bool {
        self.is_none()
    }
}

impl Empty for bool {
    fn is_empty(&self) -> bool {
        !*self
    }
}

/// Declares a message: its fields, then in `optional { ... }` those a frame
/// may leave out. An optional field is left out when empty (`None`,
/// `false`) and empty when left out, so a field can be added without
/// breaking an older peer.
macro_rules! message {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($(#[$field_meta:meta])* pub $field:ident: $ty:ty,)*
        }
        optional {
            $($(#[$optional_meta:meta])* pub $optional:ident: $optional_ty:ty,)*
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $($(#[$field_meta])* pub $field: $ty,)*
            $(
                $(#[$optional_meta])*
                #[serde(default, skip_serializing_if = "Empty::is_empty")]
                pub $optional: $optional_ty,
            )*
        }
    };
}

message! {
    /// A call from a client. Its `Debug` output shows the words' count and
    /// the bytes' lengths, never their contents: an argument may be a
    /// secret (`#[ipc(secret)]`).
    #[derive(Clone, PartialEq, Serialize, Deserialize)]
    pub struct Request {
        /// Chosen by the client (never 0); the response carries it back.
        pub id: u64,
        /// The command to call.
        pub method: String,
    }
    optional {
        /// MessagePack-encoded arguments, for a typed call.
        pub params: Option<ByteBuf>,
        /// Shell words, for a call bound by the command's schema.
        pub argv: Option<Vec<String>>,
        /// A JSON object of arguments (as text), for a call bound by the
        /// command's schema as an agent's tool call is (what `gangway mcp`
        /// forwards).
        pub json: Option<String>,
        /// Piped standard input, with `argv`.
        pub stdin: Option<ByteBuf>,
        /// With `argv` and no `stdin`: the client has piped standard input it
        /// can send. The server answers `needs_stdin` when the command would
        /// take it, so the client reads stdin only when it is used.
        pub stdin_ready: bool,
    }
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("id", &self.id)
            .field("method", &self.method)
            .field(
                "params",
                &self.params.as_ref().map(|p| Shown::Bytes(p.len())),
            )
            .field("argv", &self.argv.as_ref().map(|w| Shown::Words(w.len())))
            .field("json", &self.json.as_ref().map(|j| Shown::Bytes(j.len())))
            .field("stdin", &self.stdin.as_ref().map(|s| Shown::Bytes(s.len())))
            .field("stdin_ready", &self.stdin_ready)
            .finish()
    }
}

/// A value `Debug` shows only the size of.
enum Shown {
    Bytes(usize),
    Words(usize),
}

impl std::fmt::Debug for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shown::Bytes(len) => write!(f, "<{len} bytes>"),
            Shown::Words(len) => write!(f, "<{len} words>"),
        }
    }
}

message! {
    /// The answer to one request.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Response {
        /// The request's id (0 when the request could not be read).
        pub id: u64,
        /// Whether the call succeeded.
        pub ok: bool,
    }
    optional {
        /// The MessagePack-encoded response, on success.
        pub result: Option<ByteBuf>,
        /// Help text, on success of an argv call that asked for it.
        pub help: Option<String>,
        /// The command takes piped standard input: send the request again with
        /// it. No call was made.
        pub needs_stdin: bool,
        /// What went wrong, on failure.
        pub error: Option<WireError>,
    }
}

message! {
    /// A failure as it travels.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct WireError {
        /// What kind of failure: a stable name, `unknown_method`, `usage`,
        /// `invalid_params`, `handler`, `panicked`, `encode`, or the server's
        /// own `auth`, `protocol`, `frame_too_large`, `response_too_large`,
        /// `busy`, `timeout` (see [`ErrorKind`]).
        pub kind: ErrorKind,
        /// For a person.
        pub message: String,
        /// The exit code a command-line client should end with (see
        /// [`exit`](super::exit)).
        pub exit: i32,
    }
    optional {
        /// The argument at fault, for a usage error.
        pub argument: Option<String>,
        /// The nearest valid spelling, for a usage error.
        pub suggestion: Option<String>,
        /// The handler's MessagePack-encoded error value, for a typed client.
        pub data: Option<ByteBuf>,
    }
}

impl WireError {
    /// An error the server itself raises (not a command's).
    pub fn server(kind: impl Into<ErrorKind>, message: impl Into<String>, exit: i32) -> Self {
        WireError {
            kind: kind.into(),
            message: message.into(),
            exit,
            argument: None,
            suggestion: None,
            data: None,
        }
    }
}

impl Response {
    /// A successful response carrying nothing yet (its result, help or
    /// request for standard input is set next).
    pub fn success(id: u64) -> Self {
        Response {
            id,
            ok: true,
            result: None,
            help: None,
            needs_stdin: false,
            error: None,
        }
    }

    /// A failed response.
    pub fn failure(id: u64, error: WireError) -> Self {
        Response {
            id,
            ok: false,
            result: None,
            help: None,
            needs_stdin: false,
            error: Some(error),
        }
    }
}

/// What a client sends once greeted: a map with one key naming the frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ClientFrame {
    /// A call.
    Call(Request),
    /// A chunk of a call's standard input, within the credit the host gave.
    Input(InputChunk),
    /// The call's standard input ended.
    InputEnd(CallRef),
    /// Stop the call: the caller got a signal (or gave up).
    Cancel(Cancel),
    /// Which commands may this connection call? Answered with the manifest
    /// of its scope's commands, as JSON, in the answer's `result`
    /// (`gangway list`).
    List(CallRef),
}

/// What a host sends once it greeted a client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HostFrame {
    /// A call's answer, which ends it.
    Answer(Response),
    /// Output the handler wrote, in order, before the answer.
    Output(OutputChunk),
    /// How far the call has come; only the latest matters.
    Progress(Progress),
    /// Credit: the host takes this many more bytes of the call's input.
    InputWanted(InputWanted),
}

/// Names a call, for a frame that carries nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRef {
    /// The call's id.
    pub id: u64,
}

/// A chunk of standard input. `Debug` shows its length, not its bytes (a
/// stdin argument may be a secret).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputChunk {
    /// The call's id.
    pub id: u64,
    /// The bytes.
    pub data: ByteBuf,
}

impl std::fmt::Debug for InputChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputChunk")
            .field("id", &self.id)
            .field("data", &Shown::Bytes(self.data.len()))
            .finish()
    }
}

message! {
    /// Stop a call.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Cancel {
        /// The call's id.
        pub id: u64,
    }
    optional {
        /// The signal the caller got (`SIGINT` is 2), when one was the cause.
        pub signal: Option<i32>,
    }
}

/// A chunk of a call's output. `Debug` shows its length, not its bytes.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputChunk {
    /// The call's id.
    pub id: u64,
    /// Where it goes.
    pub stream: OutputStream,
    /// The bytes.
    pub data: ByteBuf,
}

impl std::fmt::Debug for OutputChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputChunk")
            .field("id", &self.id)
            .field("stream", &self.stream)
            .field("data", &Shown::Bytes(self.data.len()))
            .finish()
    }
}

message! {
    /// How far a call has come.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Progress {
        /// The call's id.
        pub id: u64,
        /// Units done.
        pub done: u64,
    }
    optional {
        /// Units in all, when known.
        pub total: Option<u64>,
        /// What is going on, for a person.
        pub message: Option<String>,
    }
}

/// Credit for a call's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputWanted {
    /// The call's id.
    pub id: u64,
    /// How many more bytes the host takes.
    pub bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_refuse_oversize_before_reading() {
        let mut wire = Vec::new();
        write_frame(&mut wire, b"hello").unwrap();
        write_frame(&mut wire, b"").unwrap();
        let mut reader = &wire[..];
        assert_eq!(read_frame(&mut reader, 16).unwrap().unwrap(), b"hello");
        assert_eq!(read_frame(&mut reader, 16).unwrap().unwrap(), b"");
        assert!(read_frame(&mut reader, 16).unwrap().is_none());

        let mut reader = &[0u8, 0, 1, 0][..];
        assert!(matches!(
            read_frame(&mut reader, 255),
            Err(FrameError::TooLarge { len: 256, max: 255 })
        ));
        let mut reader = &[0u8, 0, 0, 9, 1, 2][..];
        assert!(matches!(
            read_frame(&mut reader, 64),
            Err(FrameError::Truncated)
        ));
        let mut reader = &[0u8, 0][..];
        assert!(matches!(
            read_frame(&mut reader, 64),
            Err(FrameError::Truncated)
        ));
    }

    #[test]
    fn a_reused_buffer_reads_frames_of_any_size_in_turn() {
        let mut wire = Vec::new();
        for body in [&b"long body"[..], b"", b"ab"] {
            write_frame(&mut wire, body).unwrap();
        }
        let mut reader = &wire[..];
        let mut buffer = Vec::new();
        for body in [&b"long body"[..], b"", b"ab"] {
            let len = read_frame_after(&mut reader, None, 64, &mut buffer)
                .unwrap()
                .unwrap();
            assert_eq!(&buffer[..len], body);
        }
        assert_eq!(
            read_frame_after(&mut reader, None, 64, &mut buffer).unwrap(),
            None
        );
        let mut reader = &[0u8, 0, 0, 9, 1][..];
        assert!(matches!(
            read_frame_after(&mut reader, None, 64, &mut buffer),
            Err(FrameError::Truncated)
        ));
    }

    #[test]
    fn messages_are_maps_with_binary_payloads() {
        let request = Request {
            id: 7,
            method: "m".into(),
            params: None,
            argv: Some(vec!["a".into()]),
            json: None,
            stdin: Some(ByteBuf::from(vec![0, 1])),
            stdin_ready: false,
        };
        let body = encode(&request);
        assert_eq!(rmp_serde::from_slice::<Request>(&body).unwrap(), request);
        // The stdin bytes travel as MessagePack `bin`, not an integer array.
        assert!(body.windows(4).any(|w| w == [0xc4, 2, 0, 1]), "{body:?}");
        assert_eq!(decode::<Request>(&body).unwrap(), request);
    }

    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let mut body = vec![0x91u8; 100_000];
        body.push(0xc0);
        assert!(decode::<Request>(&body).is_err());
        assert!(decode::<serde_json::Value>(&body).is_err());
    }

    #[test]
    fn frames_are_maps_with_one_key_and_chunks_encode_without_a_copy() {
        let body = encode_output(9, OutputStream::Stderr, b"line\n");
        assert_eq!(
            decode_output(&body),
            Some((9, OutputStream::Stderr, &b"line\n"[..]))
        );
        assert_eq!(decode_output(&encode_input(9, b"x")), None);
        assert_eq!(
            decode::<HostFrame>(&body).unwrap(),
            HostFrame::Output(OutputChunk {
                id: 9,
                stream: OutputStream::Stderr,
                data: ByteBuf::from(b"line\n".to_vec()),
            })
        );
        assert!(body.len() <= 5 + CHUNK_OVERHEAD, "{}", body.len());
        assert_eq!(body[0], 0x81, "a map of one entry");
        let body = encode_input(3, &[0xff; 1000]);
        let ClientFrame::Input(chunk) = decode::<ClientFrame>(&body).unwrap() else {
            panic!("not an input frame");
        };
        let (id, range) = decode_input(&body).unwrap();
        assert_eq!((id, &body[range]), (3, &[0xff; 1000][..]));
        assert_eq!((chunk.id, chunk.data.len()), (3, 1000));
        assert!(body.len() <= 1000 + CHUNK_OVERHEAD);
        let cancel = ClientFrame::Cancel(Cancel {
            id: 4,
            signal: Some(2),
        });
        assert_eq!(decode::<ClientFrame>(&encode(&cancel)).unwrap(), cancel);
        let progress = HostFrame::Progress(Progress {
            id: 4,
            done: 40,
            total: Some(100),
            message: None,
        });
        assert_eq!(decode::<HostFrame>(&encode(&progress)).unwrap(), progress);
    }

    #[test]
    fn the_token_never_prints() {
        let hello = Hello {
            v: VERSION,
            token: "s3cret".into(),
        };
        assert!(!format!("{hello:?}").contains("s3cret"));
    }
}
