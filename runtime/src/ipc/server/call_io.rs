//! A served call's traffic besides its answer: the output its handler
//! writes (in chunks, back-pressured through a per-call window), its
//! progress (latest value wins, never waits), and its streamed standard
//! input (fed by the connection's reader within the credit granted).

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::gather::Gather;
use super::outbox::{Control, Hold, Outgoing, ProgressSlot};
use crate::ipc::call::context::CallContext;
use crate::ipc::call::line::{CallLine, InputChunks, Written};
use crate::ipc::call::live_input::INPUT_WINDOW;
use crate::ipc::protocol::{self, HostFrame, InputWanted, OutputStream, Progress};
use crate::sync::LockUnpoisoned;

/// How many bytes of one call's output may wait to be written: a caller
/// that stops reading holds its handler at this much.
const OUTPUT_WINDOW: usize = 1024 * 1024;

/// The largest output chunk (smaller under a smaller frame limit).
const MAX_CHUNK: usize = 256 * 1024;

/// What each write costs in the window besides its bytes: what a gathered
/// piece may cost (its buffer, its frame's envelope), so that a caller that
/// stops reading holds a handler making tiny writes at about the window in
/// memory too, not the window in pieces.
const WRITE_OVERHEAD: usize = 64;

/// A write's share of the window.
fn window_share(len: usize) -> u32 {
    u32::try_from(len + WRITE_OVERHEAD).unwrap_or(u32::MAX)
}

/// A running call, as its connection reaches it: the context its handler
/// sees (to cancel it) and the call's I/O (to feed its input).
#[derive(Clone)]
pub(crate) struct ServedCall {
    pub(crate) context: CallContext,
    pub(crate) io: Arc<CallIo>,
}

/// The connection-side half of a call's context.
pub(crate) struct CallIo {
    id: u64,
    /// Weak: a context a handler kept past its call does not hold the
    /// connection's writer open.
    frames: mpsc::WeakSender<Outgoing>,
    control: mpsc::UnboundedSender<Control>,
    window: Arc<Semaphore>,
    max_chunk: usize,
    /// The call's output not yet taken by the writer.
    gather: Arc<Gather>,
    progress: Arc<ProgressSlot>,
    input: Mutex<InputFeed>,
    /// Cancelled once the call is answered: its output still queued is
    /// then written within the I/O timeout, like the answer.
    answered: CancellationToken,
    /// Input bytes taken in and output bytes sent, for the audit record.
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
}

/// Where a call's streamed input goes.
#[derive(Default)]
struct InputFeed {
    /// Open while the handler may still read input.
    sender: Option<mpsc::UnboundedSender<io::Result<Vec<u8>>>>,
    /// Bytes the caller may send: credit granted less bytes received.
    credit: u64,
}

impl CallIo {
    pub(crate) fn new(
        id: u64,
        frames: mpsc::WeakSender<Outgoing>,
        control: mpsc::UnboundedSender<Control>,
        max_frame: usize,
    ) -> Self {
        let max_chunk = max_frame
            .saturating_sub(protocol::CHUNK_OVERHEAD)
            .clamp(1, MAX_CHUNK);
        CallIo {
            id,
            frames,
            control,
            window: Arc::new(Semaphore::new(OUTPUT_WINDOW)),
            max_chunk,
            gather: Arc::new(Gather::new(id, max_chunk)),
            progress: Arc::new(ProgressSlot::default()),
            input: Mutex::new(InputFeed::default()),
            answered: CancellationToken::new(),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
        }
    }

    /// Sends `data` to the caller's `stream` in chunks, each waiting for
    /// room in the call's window and, when the call's output needs a new
    /// notice, for room in the connection's queue. `false` once the call is
    /// cancelled or the connection gone.
    async fn write_now(
        &self,
        stream: OutputStream,
        data: &[u8],
        cancelled: &CancellationToken,
    ) -> bool {
        if cancelled.is_cancelled() {
            return false;
        }
        let Some(frames) = self.frames.upgrade() else {
            return false;
        };
        for chunk in data.chunks(self.max_chunk) {
            // A chunk is at most `MAX_CHUNK`, well under the window.
            let wanted = window_share(chunk.len());
            let permit = tokio::select! {
                biased;
                () = cancelled.cancelled() => return false,
                permit = self.window.clone().acquire_many_owned(wanted) => permit,
            };
            let Ok(mut permit) = permit else { return false };
            // Room for the notice is taken when there is some; when the
            // queue is full, waited for outside the gather's lock, and the
            // append tried again.
            let mut slot = None;
            loop {
                let appended =
                    self.gather
                        .append(stream, chunk, permit, [cancelled, &self.answered], || {
                            let slot = match slot.take() {
                                Some(slot) => slot,
                                None => match frames.try_reserve() {
                                    Ok(slot) => slot,
                                    Err(_) => return false,
                                },
                            };
                            slot.send(self.notice());
                            true
                        });
                match appended {
                    Ok(()) => break,
                    Err(back) => permit = back,
                }
                slot = tokio::select! {
                    biased;
                    () = cancelled.cancelled() => return false,
                    slot = frames.reserve() => match slot {
                        Ok(slot) => Some(slot),
                        Err(_) => return false,
                    },
                };
            }
            self.bytes_out
                .fetch_add(chunk.len() as u64, Ordering::Relaxed);
        }
        true
    }

    /// Sends `data` as [`write_now`](Self::write_now) does when that needs
    /// no waiting (room in the window, and in the queue if a notice is
    /// due): the common case, with no future to box. `None` when it would
    /// wait.
    fn try_write_now(
        &self,
        stream: OutputStream,
        data: &[u8],
        cancelled: &CancellationToken,
    ) -> Option<bool> {
        if cancelled.is_cancelled() {
            return Some(false);
        }
        let Some(frames) = self.frames.upgrade() else {
            return Some(false);
        };
        if data.is_empty() {
            return Some(true);
        }
        if data.len() > self.max_chunk {
            return None;
        }
        let wanted = window_share(data.len());
        let permit = self.window.clone().try_acquire_many_owned(wanted).ok()?;
        let appended =
            self.gather
                .append(stream, data, permit, [cancelled, &self.answered], || {
                    frames
                        .try_reserve()
                        .map(|slot| slot.send(self.notice()))
                        .is_ok()
                });
        appended.ok()?;
        self.bytes_out
            .fetch_add(data.len() as u64, Ordering::Relaxed);
        Some(true)
    }

    /// What stands in the writer's queue for the call's gathered output.
    fn notice(&self) -> Outgoing {
        Outgoing {
            body: Vec::new(),
            hold: Hold::Gathered(self.gather.clone()),
        }
    }

    /// Records the call's progress and makes sure a frame for it is
    /// queued; never waits.
    fn progress_now(&self, done: u64, total: Option<u64>, message: Option<String>) {
        let progress = Progress {
            id: self.id,
            done,
            total,
            message,
        };
        if self.progress.set(progress)
            && self
                .control
                .send(Control::Progress(self.progress.clone()))
                .is_err()
        {
            self.progress.unqueue();
        }
    }

    /// Streamed input taken in and output sent so far, in bytes.
    pub(crate) fn traffic(&self) -> (u64, u64) {
        (
            self.bytes_in.load(Ordering::Relaxed),
            self.bytes_out.load(Ordering::Relaxed),
        )
    }

    /// The call is answered (its handler returned).
    pub(crate) fn answered(&self) {
        self.answered.cancel();
    }

    /// The call's latest progress not yet sent, encoded: queued ahead of
    /// its answer, so the caller sees where the call ended.
    pub(crate) fn flush_progress(&self) -> Option<Vec<u8>> {
        self.progress.take_encoded()
    }

    /// Opens the call's input: the receiving end for the handler's
    /// [`InputStream`](crate::ipc::InputStream), with the first credit sent
    /// to the caller.
    fn open_input_now(&self) -> InputChunks {
        let (sender, receiver) = mpsc::unbounded_channel();
        {
            let mut feed = self.input.lock_unpoisoned();
            feed.sender = Some(sender);
            feed.credit = 0;
        }
        self.grant_now(INPUT_WINDOW);
        receiver
    }

    /// Gives the caller credit for `bytes` more of input.
    fn grant_now(&self, bytes: u64) {
        {
            let mut feed = self.input.lock_unpoisoned();
            if feed.sender.is_none() {
                return;
            }
            feed.credit += bytes;
        }
        let frame = protocol::encode(&HostFrame::InputWanted(InputWanted { id: self.id, bytes }));
        let _ = self.control.send(Control::Frame(frame));
    }

    /// A chunk of input from the caller. More than its credit is a broken
    /// client: the handler's input fails, and `false` asks the reader to
    /// drop the connection.
    pub(crate) fn feed(&self, data: Vec<u8>) -> bool {
        let mut feed = self.input.lock_unpoisoned();
        let feed = &mut *feed;
        let Some(sender) = &feed.sender else {
            // Input for a call that does not stream it, or whose handler
            // is done with it: dropped.
            return true;
        };
        let len = data.len() as u64;
        if len == 0 {
            // Nothing to hand on (and nothing a flood of them may queue).
            return true;
        }
        if len > feed.credit {
            let _ = sender.send(Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the caller sent more input than the host asked for",
            )));
            feed.sender = None;
            return false;
        }
        feed.credit -= len;
        self.bytes_in.fetch_add(len, Ordering::Relaxed);
        if sender.send(Ok(data)).is_err() {
            // The handler dropped its stream: nobody reads the rest.
            feed.sender = None;
        }
        true
    }

    /// The caller's input ended (`broken`: it went away first).
    pub(crate) fn end_input(&self, broken: bool) {
        let mut feed = self.input.lock_unpoisoned();
        if let Some(sender) = feed.sender.take()
            && broken
        {
            let _ = sender.send(Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the caller went away before its input ended",
            )));
        }
    }
}

impl CallLine for CallIo {
    fn write<'a>(
        &'a self,
        stream: OutputStream,
        bytes: &'a [u8],
        cancelled: &'a CancellationToken,
    ) -> Written<'a> {
        Box::pin(self.write_now(stream, bytes, cancelled))
    }

    fn try_write(
        &self,
        stream: OutputStream,
        bytes: &[u8],
        cancelled: &CancellationToken,
    ) -> Option<bool> {
        self.try_write_now(stream, bytes, cancelled)
    }

    fn progress(&self, done: u64, total: Option<u64>, message: Option<String>) {
        self.progress_now(done, total, message);
    }

    fn open_input(&self) -> Option<InputChunks> {
        Some(self.open_input_now())
    }

    fn grant(&self, bytes: u64) {
        self.grant_now(bytes);
    }
}
