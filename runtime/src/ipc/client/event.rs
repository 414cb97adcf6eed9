//! [`CallEvent`]: what a streaming call reports before its result: output
//! as the handler writes it, and progress.

use crate::ipc::protocol::{HostFrame, OutputStream};

/// Something a call reported before its result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallEvent {
    /// Output the handler wrote, in order.
    Output {
        /// Standard output or standard error.
        stream: OutputStream,
        /// The bytes.
        data: Vec<u8>,
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

impl CallEvent {
    /// The event a frame for call `id` carries, if it is one.
    pub(super) fn from_frame(frame: HostFrame, id: u64) -> Option<CallEvent> {
        match frame {
            HostFrame::Output(chunk) if chunk.id == id => Some(CallEvent::Output {
                stream: chunk.stream,
                data: chunk.data.into_vec(),
            }),
            HostFrame::Progress(progress) if progress.id == id => Some(CallEvent::Progress {
                done: progress.done,
                total: progress.total,
                message: progress.message,
            }),
            _ => None,
        }
    }
}
