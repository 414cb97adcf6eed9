//! What a connection's one writer sends, and the writer itself: answers
//! and output chunks in the order their calls queue them (back-pressured),
//! and small control frames (progress, input credit) ahead of them, never
//! waiting for room.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::AsyncWrite;
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;

use super::call_io::ProgressSlot;
use crate::ipc::protocol::{self, HostFrame};

/// A frame on its way out, with what it holds until written.
pub(crate) struct Outgoing {
    pub(crate) body: Vec<u8>,
    pub(crate) hold: Hold,
}

/// What a queued frame holds until it is written, released when it is
/// (held, never read: dropping it is the release).
#[expect(dead_code, reason = "held until the frame is written")]
pub(crate) enum Hold {
    /// Nothing: an error about the connection as a whole.
    Nothing,
    /// A call's answer: see [`Held`].
    Answer(Held),
    /// An output chunk: its bytes of the call's output window.
    Output(OwnedSemaphorePermit),
}

/// What a call's answer holds until it is written.
pub(crate) struct Held {
    /// Its bytes of the connection's queue budget (`max_queued_bytes`).
    pub(crate) _queued: OwnedSemaphorePermit,
    /// Its slot among the connection's calls in flight (`max_in_flight`).
    pub(crate) _slot: OwnedSemaphorePermit,
    /// Its place in the server's count of running calls.
    pub(crate) _running: RunningCall,
}

/// A small frame that never waits for room: at most one progress frame
/// per call is queued at a time (it is encoded from the latest value when
/// written), and input credit is granted only as input is consumed.
pub(crate) enum Control {
    /// The latest progress of a call.
    Progress(Arc<ProgressSlot>),
    /// An encoded frame (input credit).
    Frame(Vec<u8>),
}

/// Counts a call as running until its response is written (or dropped).
pub(crate) struct RunningCall(Arc<AtomicUsize>);

impl RunningCall {
    pub(crate) fn start(counter: &Arc<AtomicUsize>) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        RunningCall(counter.clone())
    }
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Writes a connection's frames in turn, control frames first. An answer
/// that the peer does not take within the I/O timeout loses the connection,
/// which cancels its calls; an output chunk waits as long as the reader
/// does, as a pipe's writer waits for `less` (the call's own timeout still
/// bounds the call).
pub(crate) async fn write_frames<W>(
    mut writer: W,
    mut outgoing: mpsc::Receiver<Outgoing>,
    mut control: mpsc::UnboundedReceiver<Control>,
    stop: CancellationToken,
    io: Duration,
) where
    W: AsyncWrite + Unpin,
{
    let mut control_open = true;
    loop {
        let (body, timed, hold) = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            next = control.recv(), if control_open => match next {
                Some(Control::Frame(body)) => (body, true, Hold::Nothing),
                Some(Control::Progress(slot)) => match slot.take_encoded() {
                    Some(body) => (body, true, Hold::Nothing),
                    None => continue,
                },
                None => {
                    control_open = false;
                    continue;
                }
            },
            frame = outgoing.recv() => match frame {
                // Every call is done: all answers are out.
                None => return,
                Some(frame) => {
                    let timed = !matches!(frame.hold, Hold::Output(_));
                    (frame.body, timed, frame.hold)
                }
            },
        };
        let write = protocol::write_frame_async(&mut writer, &body);
        let written = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            written = async {
                if timed {
                    tokio::time::timeout(io, write).await.ok()
                } else {
                    Some(write.await)
                }
            } => written,
        };
        drop(hold);
        if !matches!(written, Some(Ok(()))) {
            stop.cancel();
            return;
        }
    }
}

/// An answer (or an error about the connection, id 0) as a frame body.
pub(crate) fn answer_body(response: crate::ipc::protocol::Response) -> Vec<u8> {
    protocol::encode(&HostFrame::Answer(response))
}
