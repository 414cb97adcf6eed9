//! The caller's signals during a call: SIGINT (Ctrl-C), SIGTERM and SIGHUP
//! cancel the call on the host (a cancel frame, not only a hang-up); the
//! client then waits up to the host's cancel grace for the answer and exits
//! 128 + the signal's number, as shells expect. A second signal exits at
//! once. A signal the client was started with ignored (a shell's
//! background job, `nohup`) stays ignored, as it does for any program.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};

use crate::ipc::{CallCanceller, exit};

/// How long past the host's grace the client waits for its answer.
const MARGIN: Duration = Duration::from_millis(500);

/// The grace assumed when the host did not say (a deferred hello not yet
/// answered).
const DEFAULT_GRACE: Duration = Duration::from_secs(2);

/// Watches for the signals while a call runs; stops when dropped.
pub(super) struct SignalWatch {
    caught: Arc<AtomicI32>,
    handle: Handle,
}

impl SignalWatch {
    /// Starts watching, on a thread: the first signal cancels the call
    /// through `canceller` and arms an exit after the host's cancel grace
    /// (and a margin); a second exits at once.
    pub(super) fn start(canceller: CallCanceller) -> io::Result<Self> {
        let watched: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
            .into_iter()
            .filter(|&signal| !ignored(signal))
            .collect();
        let mut signals = Signals::new(watched)?;
        let handle = signals.handle();
        let caught = Arc::new(AtomicI32::new(0));
        let seen = caught.clone();
        std::thread::Builder::new()
            .name("gangway-signals".to_owned())
            .spawn(move || {
                for signal in signals.forever() {
                    if seen.swap(signal, Ordering::SeqCst) != 0 {
                        // Asked twice: do not wait for the host.
                        std::process::exit(exit::signal(signal));
                    }
                    // The deadline first, and the cancel on a thread of
                    // its own: a host that stopped reading cannot hold
                    // the client past it, nor keep a second signal out.
                    let wait = canceller.cancel_grace().unwrap_or(DEFAULT_GRACE) + MARGIN;
                    let _ = std::thread::Builder::new()
                        .name("gangway-cancel-deadline".to_owned())
                        .spawn(move || {
                            std::thread::sleep(wait);
                            std::process::exit(exit::signal(signal));
                        });
                    let cancel = canceller.clone();
                    let _ = std::thread::Builder::new()
                        .name("gangway-cancel".to_owned())
                        .spawn(move || cancel.cancel(Some(signal)));
                }
            })?;
        Ok(SignalWatch { caught, handle })
    }

    /// The first signal caught, if any.
    pub(super) fn caught(&self) -> Option<i32> {
        match self.caught.load(Ordering::SeqCst) {
            0 => None,
            signal => Some(signal),
        }
    }
}

impl Drop for SignalWatch {
    fn drop(&mut self) {
        self.handle.close();
    }
}

/// Whether `signal`'s disposition is "ignore" (inherited through exec).
fn ignored(signal: i32) -> bool {
    // SAFETY: sigaction(2) with a null new action only reads the current
    // one into `current`, a zeroed `sigaction` of our own.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut current) == 0
            && current.sa_sigaction == libc::SIG_IGN
    }
}
