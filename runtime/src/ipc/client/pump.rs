//! The blocking client's stdin pump: a thread that sends standard input to
//! a call as the host grants credit for it, so the client keeps reading
//! the call's output while the input trickles in (`tail -f log | cmd`).

use std::io::{self, Read, Write};
use std::sync::{Arc, Condvar, Mutex};

use crate::ipc::protocol::{self, CallRef, ClientFrame};
use crate::sync::LockUnpoisoned;

/// The largest input chunk the pump sends.
const CHUNK: usize = 128 * 1024;

/// A running pump: grant it credit, stop it when the call ends.
pub(super) struct Pump {
    state: Arc<(Mutex<State>, Condvar)>,
}

#[derive(Default)]
struct State {
    credit: u64,
    stopped: bool,
    /// Why reading the input failed, if it did: the call's input ended
    /// there, and the caller reports it once the call is answered.
    failed: Option<io::Error>,
}

impl Pump {
    /// Starts a thread sending `input` to call `id` through `writer`, a
    /// chunk at a time (each within `max_frame`) within the credit granted;
    /// at the input's end it sends `input_end`. A read error ends the input
    /// the same way, and is kept for [`failure`](Pump::failure).
    pub(super) fn start<W>(
        id: u64,
        mut input: Box<dyn Read + Send>,
        writer: Arc<Mutex<W>>,
        max_frame: usize,
    ) -> io::Result<Pump>
    where
        W: Write + Send + 'static,
    {
        let state = Arc::new((Mutex::new(State::default()), Condvar::new()));
        let shared = state.clone();
        std::thread::Builder::new()
            .name("gangway-stdin".to_owned())
            .spawn(move || {
                let chunk = max_frame
                    .saturating_sub(protocol::CHUNK_OVERHEAD)
                    .clamp(1, CHUNK);
                let mut buffer = vec![0u8; chunk];
                loop {
                    let room = {
                        let (lock, wake) = &*shared;
                        let mut state = lock.lock_unpoisoned();
                        while state.credit == 0 && !state.stopped {
                            state = wake.wait(state).unwrap_or_else(|e| e.into_inner());
                        }
                        if state.stopped {
                            return;
                        }
                        usize::try_from(state.credit).unwrap_or(chunk).min(chunk)
                    };
                    let n = loop {
                        match input.read(&mut buffer[..room]) {
                            Ok(n) => break n,
                            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                            Err(error) => {
                                shared.0.lock_unpoisoned().failed = Some(error);
                                break 0;
                            }
                        }
                    };
                    if shared.0.lock_unpoisoned().stopped {
                        return;
                    }
                    let body = if n == 0 {
                        protocol::encode(&ClientFrame::InputEnd(CallRef { id }))
                    } else {
                        protocol::encode_input(id, &buffer[..n])
                    };
                    let sent = protocol::write_frame(&mut *writer.lock_unpoisoned(), &body);
                    if n == 0 || sent.is_err() {
                        return;
                    }
                    shared.0.lock_unpoisoned().credit -= n as u64;
                }
            })?;
        Ok(Pump { state })
    }

    /// Why reading the input failed, if it did.
    pub(super) fn failure(&self) -> Option<io::Error> {
        self.state.0.lock_unpoisoned().failed.take()
    }

    /// The host takes `bytes` more.
    pub(super) fn grant(&self, bytes: u64) {
        let (lock, wake) = &*self.state;
        let mut state = lock.lock_unpoisoned();
        state.credit = state.credit.saturating_add(bytes);
        wake.notify_one();
    }
}

impl Drop for Pump {
    /// The call is over: the thread sends nothing more. (One blocked
    /// reading input ends with the process, or at the input's next bytes.)
    fn drop(&mut self) {
        let (lock, wake) = &*self.state;
        lock.lock_unpoisoned().stopped = true;
        wake.notify_one();
    }
}
