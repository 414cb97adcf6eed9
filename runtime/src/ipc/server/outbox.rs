//! What a connection's one writer sends, and the writer itself: answers
//! and output chunks in the order their calls queue them (back-pressured),
//! and small control frames (progress, input credit) ahead of them, never
//! waiting for room.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncWrite;
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;

use super::gather::{Gather, Taken};
use crate::ipc::protocol::{self, HostFrame, Progress};
use crate::sync::LockUnpoisoned;

/// A frame on its way out, with what it holds until written.
pub(crate) struct Outgoing {
    pub(crate) body: Vec<u8>,
    pub(crate) hold: Hold,
}

/// What a queued frame holds until it is written, released when it is
/// (held, never read: dropping it is the release).
pub(crate) enum Hold {
    /// Nothing: a call's last progress, queued ahead of its answer.
    Nothing,
    /// A call's answer: see [`Held`].
    Answer(#[expect(dead_code, reason = "held until the answer is written")] Held),
    /// A call's gathered output: the writer takes what was gathered when
    /// it reaches this (the frame's body is empty), and holds its window
    /// bytes until they are written.
    Gathered(Arc<Gather>),
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

/// The latest progress of a call, and whether a frame for it is queued
/// (the writer encodes the latest when it gets to it).
#[derive(Default)]
pub(crate) struct ProgressSlot {
    latest: Mutex<Option<Progress>>,
    queued: AtomicBool,
}

impl ProgressSlot {
    /// Keeps `progress` as the latest; `true` when no frame for the slot
    /// is queued, so the caller must queue one.
    pub(crate) fn set(&self, progress: Progress) -> bool {
        *self.latest.lock_unpoisoned() = Some(progress);
        !self.queued.swap(true, Ordering::SeqCst)
    }

    /// The frame meant to be queued was not.
    pub(crate) fn unqueue(&self) {
        self.queued.store(false, Ordering::SeqCst);
    }

    /// The latest progress, encoded, when there is one not yet sent.
    pub(crate) fn take_encoded(&self) -> Option<Vec<u8>> {
        self.queued.store(false, Ordering::SeqCst);
        let latest = self.latest.lock_unpoisoned().take()?;
        Some(protocol::encode(&HostFrame::Progress(latest)))
    }
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

/// What the writer takes next.
enum WriterStep {
    Frame(Vec<u8>, Option<Hold>),
    /// Nothing to write this turn (a progress slot already sent).
    Skip,
    /// Every call is answered and no refusal waits: the connection's
    /// writing is done.
    Done,
}

/// Writes a connection's frames in turn, giving control frames and the
/// calls' frames turns about (so neither a chatty progress nor a stream of
/// output starves the other). A frame the peer does not take within the
/// I/O timeout loses the connection, which cancels its calls; except an
/// output chunk of a call still running, which waits as long as the reader
/// does, as a pipe's writer waits for `less` (once the call is cancelled,
/// by its timeout or otherwise, the timeout applies again).
pub(crate) async fn write_frames<W>(
    mut writer: W,
    mut outgoing: mpsc::Receiver<Outgoing>,
    mut control: mpsc::UnboundedReceiver<Control>,
    stop: CancellationToken,
    io: Duration,
) where
    W: AsyncWrite + Unpin,
{
    let mut control_turn = true;
    loop {
        let next = if control_turn {
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                Some(next) = control.recv() => control_frame(next),
                frame = outgoing.recv() => call_frame(frame, &mut control),
            }
        } else {
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                frame = outgoing.recv() => call_frame(frame, &mut control),
                Some(next) = control.recv() => control_frame(next),
            }
        };
        let (body, hold) = match next {
            WriterStep::Frame(body, hold) => (body, hold),
            WriterStep::Skip => continue,
            WriterStep::Done => return,
        };
        control_turn = hold.is_some();
        let taken = match &hold {
            Some(Hold::Gathered(gather)) => Some(gather.take()),
            _ => None,
        };
        let (wire, running) = match (&hold, &taken) {
            (_, Some(taken)) => (Wire::Gathered(taken), taken.ends.clone()),
            _ => (Wire::Frame(&body), None),
        };
        let written = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            written = write_within(&mut writer, wire, io, running) => written,
        };
        drop((hold, taken));
        if !written {
            stop.cancel();
            return;
        }
    }
}

fn control_frame(control: Control) -> WriterStep {
    match control {
        Control::Frame(body) => WriterStep::Frame(body, None),
        Control::Progress(slot) => match slot.take_encoded() {
            Some(body) => WriterStep::Frame(body, None),
            None => WriterStep::Skip,
        },
    }
}

/// A call's frame; at the end of them, the refusals still queued (the
/// last words on a connection) go out first.
fn call_frame(
    frame: Option<Outgoing>,
    control: &mut mpsc::UnboundedReceiver<Control>,
) -> WriterStep {
    match frame {
        Some(frame) => WriterStep::Frame(frame.body, Some(frame.hold)),
        None => match control.try_recv() {
            Ok(Control::Frame(body)) => WriterStep::Frame(body, None),
            Ok(Control::Progress(_)) => WriterStep::Skip,
            Err(_) => WriterStep::Done,
        },
    }
}

/// What the writer writes in one go.
enum Wire<'a> {
    /// One frame's body.
    Frame(&'a [u8]),
    /// A call's gathered output, as frames.
    Gathered(&'a Taken),
}

/// Writes one frame, or a call's gathered frames, within the I/O timeout;
/// output of a call still `running` waits until the call is cancelled or
/// answered (either token) before its timeout starts. `false` when it
/// failed or timed out.
async fn write_within<W>(
    writer: &mut W,
    wire: Wire<'_>,
    io: Duration,
    running: Option<[CancellationToken; 2]>,
) -> bool
where
    W: AsyncWrite + Unpin,
{
    let write = async {
        match wire {
            Wire::Frame(body) => protocol::write_frame_async(writer, body).await,
            Wire::Gathered(taken) => write_gathered(writer, taken).await,
        }
    };
    tokio::pin!(write);
    if let Some([cancelled, answered]) = running {
        tokio::select! {
            biased;
            written = &mut write => return written.is_ok(),
            () = cancelled.cancelled() => {}
            () = answered.cancelled() => {}
        }
    }
    matches!(tokio::time::timeout(io, write).await, Ok(Ok(())))
}

/// Writes a call's gathered output: every frame, in as few system calls as
/// the socket takes them.
async fn write_gathered<W>(writer: &mut W, taken: &Taken) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    use tokio::io::AsyncWriteExt;
    let mut headers = Vec::new();
    let mut slices = taken.frames(&mut headers);
    let mut left = &mut slices[..];
    while !left.is_empty() {
        let n = writer.write_vectored(left).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        std::io::IoSlice::advance_slices(&mut left, n);
    }
    writer.flush().await
}

/// An answer (or an error about the connection, id 0) as a frame body.
pub(crate) fn answer_body(response: crate::ipc::protocol::Response) -> Vec<u8> {
    protocol::encode(&HostFrame::Answer(response))
}
