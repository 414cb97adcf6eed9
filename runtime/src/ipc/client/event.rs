//! [`CallEvent`]: what a streaming call reports before its result: output
//! as the handler writes it, and progress.

use std::borrow::Cow;

use crate::ipc::protocol::{HostFrame, OutputStream};

/// Something a call reported before its result. The blocking client lends
/// output straight from its read buffer (`Cow::Borrowed`, no copy); the
/// async client's events own theirs (`CallEvent<'static>`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallEvent<'a> {
    /// Output the handler wrote, in order.
    Output {
        /// Standard output or standard error.
        stream: OutputStream,
        /// The bytes.
        data: Cow<'a, [u8]>,
    },
    /// How far the call has come (only the latest matters).
    Progress {
        /// Units done.
        done: u64,
        /// Units in all, when known.
        total: Option<u64>,
        /// What is going on.
        message: Option<String>,
    },
}

impl CallEvent<'_> {
    /// The event a frame for call `id` carries, if it is one.
    pub(super) fn from_frame(frame: HostFrame, id: u64) -> Option<CallEvent<'static>> {
        match frame {
            HostFrame::Output(chunk) if chunk.id == id => Some(CallEvent::Output {
                stream: chunk.stream,
                data: Cow::Owned(chunk.data.into_vec()),
            }),
            HostFrame::Progress(progress) if progress.id == id => Some(CallEvent::Progress {
                done: progress.done,
                total: progress.total,
                message: progress.message,
            }),
            _ => None,
        }
    }

    /// The event with its data owned, to keep past the next frame.
    pub fn into_owned(self) -> CallEvent<'static> {
        match self {
            CallEvent::Output { stream, data } => CallEvent::Output {
                stream,
                data: Cow::Owned(data.into_owned()),
            },
            CallEvent::Progress {
                done,
                total,
                message,
            } => CallEvent::Progress {
                done,
                total,
                message,
            },
        }
    }
}
