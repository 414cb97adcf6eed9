//! Waiting until nobody holds a freshly written program open for writing,
//! before it is renamed into place.
//!
//! A process that writes a file while another of its threads starts a
//! child shares the file's descriptor with that child until the child
//! runs `exec` (descriptors are copied at `fork`; close-on-exec only
//! closes them at the `exec`). Executing the file in that window fails
//! with "Text file busy" (`ETXTBSY`), which a shell reports as the
//! command's failure: a host that writes wrappers while it starts
//! sandboxes, or a test suite running in parallel, would see a wrapper
//! fail once. The kernel grants a read lease only on a file nobody has
//! open for writing: that is the test, retried briefly.

use std::path::Path;
use std::time::{Duration, Instant};

/// How long a child may keep a copy of the writer's descriptor: between a
/// `fork` and its `exec`, which is short even on a loaded machine.
const MOST: Duration = Duration::from_secs(2);

/// Returns once no process holds `path` open for writing, or after
/// [`MOST`], or at once where leases are not available (another system or
/// file system, or a file this process does not own): then nothing is
/// known and the caller goes on as before.
pub(super) fn until_no_writers(path: &Path) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let Ok(file) = std::fs::File::open(path) else {
            return;
        };
        let fd = file.as_raw_fd();
        let started = Instant::now();
        loop {
            // SAFETY: `fd` is open for the whole loop (owned by `file`);
            // F_SETLEASE takes an integer argument and touches no memory.
            let granted = unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_RDLCK) } == 0;
            if granted {
                // SAFETY: as above; gives the lease back.
                unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK) };
                return;
            }
            let busy = std::io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN);
            if !busy || started.elapsed() > MOST {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (path, MOST, Instant::now);
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn waits_while_a_writer_holds_the_file_and_goes_on_once_it_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("program");
        std::fs::write(&path, b"#!/bin/sh\n").unwrap();
        {
            // Where this file system grants no leases, the wait is a no-op
            // by design: nothing to test here.
            use std::os::fd::AsRawFd;
            let file = std::fs::File::open(&path).unwrap();
            // SAFETY: `file` is open; F_SETLEASE touches no memory.
            if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, libc::F_RDLCK) } != 0 {
                eprintln!(
                    "no leases on this file system: {}",
                    std::io::Error::last_os_error()
                );
                return;
            }
            // SAFETY: as above.
            unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK) };
        }
        until_no_writers(&path);

        let writer = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let (done, finished) = mpsc::channel();
        let waiting = path.clone();
        let waiter = std::thread::spawn(move || {
            until_no_writers(&waiting);
            done.send(()).unwrap();
        });
        // Returning now would be wrong, however fast or slow the machine.
        assert!(
            finished.recv_timeout(Duration::from_millis(300)).is_err(),
            "returned while the file was open for writing"
        );
        drop(writer);
        finished
            .recv_timeout(Duration::from_secs(30))
            .expect("returns once the writer is gone");
        waiter.join().unwrap();
    }
}
