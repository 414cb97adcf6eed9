//! Gathering a call's output while the connection's writer is busy: each
//! `ctx.stdout`/`ctx.stderr` write is appended to the call's pending
//! pieces (a write of the same stream as the last piece joins it), and one
//! notice in the writer's queue stands for all of them. When the writer
//! reaches the notice it takes every piece gathered by then and writes
//! them, framed, in one system call. So 10,000 small writes made while one
//! frame goes out travel as a few frames, not 10,000, and nothing waits
//! longer than the writer takes to reach it: the notice is queued with the
//! first write after each take, so the output is on its way before the
//! handler's next await.
//!
//! Order is kept: a call's output goes only through here, pieces keep
//! their order (stdout and stderr included), and the call's answer is
//! queued after the notice of its last write.

use std::io::IoSlice;
use std::sync::Mutex;

use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;

use crate::ipc::protocol::{self, OutputStream};
use crate::sync::LockUnpoisoned;

/// One call's output not yet taken by the writer.
pub(crate) struct Gather {
    id: u64,
    /// The most data one frame carries.
    max_chunk: usize,
    state: Mutex<Gathered>,
}

#[derive(Default)]
struct Gathered {
    pieces: Vec<(OutputStream, Vec<u8>)>,
    /// The pieces' bytes of the call's output window, released once they
    /// are written.
    permit: Option<OwnedSemaphorePermit>,
    /// The call's cancellation and end: while neither has come, the
    /// pieces' write waits as long as the caller does.
    ends: Option<[CancellationToken; 2]>,
    /// Whether a notice for these pieces is in the writer's queue.
    queued: bool,
}

/// Everything gathered when the writer took it.
pub(crate) struct Taken {
    id: u64,
    pieces: Vec<(OutputStream, Vec<u8>)>,
    /// Held until the pieces are written (dropping it is the release).
    _permit: Option<OwnedSemaphorePermit>,
    pub(crate) ends: Option<[CancellationToken; 2]>,
}

impl Gather {
    pub(crate) fn new(id: u64, max_chunk: usize) -> Self {
        Gather {
            id,
            max_chunk,
            state: Mutex::default(),
        }
    }

    /// Appends `data` (at most one chunk) with its window `permit`. When
    /// no notice is queued, `notice` must queue one (it is called under
    /// the lock, so the writer cannot take the pieces in between); if it
    /// cannot, nothing is appended and the permit comes back.
    pub(crate) fn append(
        &self,
        stream: OutputStream,
        data: &[u8],
        permit: OwnedSemaphorePermit,
        ends: [&CancellationToken; 2],
        notice: impl FnOnce() -> bool,
    ) -> Result<(), OwnedSemaphorePermit> {
        let mut state = self.state.lock_unpoisoned();
        if !state.queued {
            if !notice() {
                return Err(permit);
            }
            state.queued = true;
        }
        match state.pieces.last_mut() {
            Some((last, piece))
                if *last == stream && piece.len() + data.len() <= self.max_chunk =>
            {
                piece.extend_from_slice(data);
            }
            _ => state.pieces.push((stream, data.to_vec())),
        }
        match &mut state.permit {
            Some(held) => held.merge(permit),
            None => state.permit = Some(permit),
        }
        if state.ends.is_none() {
            state.ends = Some(ends.map(CancellationToken::clone));
        }
        Ok(())
    }

    /// Takes every piece gathered so far; the next write queues a new
    /// notice.
    pub(crate) fn take(&self) -> Taken {
        let mut state = self.state.lock_unpoisoned();
        state.queued = false;
        Taken {
            id: self.id,
            pieces: std::mem::take(&mut state.pieces),
            _permit: state.permit.take(),
            ends: state.ends.clone(),
        }
    }
}

impl Taken {
    /// The pieces as frames: each frame's length and envelope in
    /// `headers`, and the slices to write in turn (envelope, data, ...), so
    /// the data is not copied again.
    pub(crate) fn frames<'a>(&'a self, headers: &'a mut Vec<u8>) -> Vec<IoSlice<'a>> {
        let mut ends = Vec::with_capacity(self.pieces.len());
        for (stream, data) in &self.pieces {
            protocol::encode_output_header(headers, self.id, *stream, data.len());
            ends.push(headers.len());
        }
        let mut slices = Vec::with_capacity(self.pieces.len() * 2);
        let mut start = 0;
        for ((_, data), end) in self.pieces.iter().zip(ends) {
            slices.push(IoSlice::new(&headers[start..end]));
            slices.push(IoSlice::new(data));
            start = end;
        }
        slices
    }
}
