//! Processes the end-to-end tests start and signal: spawning a wrapper in
//! a process group of its own, reading its output as it streams, finding
//! the client below a shell or bwrap, and signalling it once it watches.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use super::{text, wait_until};

/// Starts `command` with piped output, in a process group of its own (so
/// a signal to the group reaches the client and whatever runs it).
pub fn spawn(mut command: Command) -> Child {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    default_signals(&mut command);
    command.spawn().expect("the wrapper starts")
}

/// Starts `command` with SIGINT, SIGTERM and SIGHUP at their default
/// disposition: a suite started in the background (where a shell ignores
/// SIGINT for its children) must still see the wrappers as a terminal
/// would start them, since an ignored signal stays ignored in the client.
pub fn default_signals(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: signal(2) is async-signal-safe, as `pre_exec` requires.
    unsafe {
        command.pre_exec(|| {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(signal, libc::SIG_DFL);
            }
            Ok(())
        });
    }
}

/// Reads `child`'s stdout until it holds `wanted`, on a thread (a call
/// that never streams fails the test instead of hanging it).
pub fn read_until(child: &mut Child, wanted: &'static str) -> Vec<u8> {
    let mut stdout = child.stdout.take().unwrap();
    let (done, seen) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buffer = [0u8; 4096];
        while !got.windows(wanted.len()).any(|w| w == wanted.as_bytes()) {
            match stdout.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buffer[..n]),
            }
        }
        let _ = done.send((got, stdout));
    });
    let (got, stdout) = seen
        .recv_timeout(super::PATIENCE)
        .unwrap_or_else(|_| panic!("`{wanted}` did not arrive"));
    child.stdout = Some(stdout);
    got
}

/// Waits for `child` (killing it past the test's patience) and gives its
/// exit code, stdout and stderr.
pub fn finish(child: Child) -> (Option<i32>, String, String) {
    let output = super::wait_output(child, super::PATIENCE);
    (
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr),
    )
}

/// Sends `signal` to the process group `child` leads.
pub fn signal_group(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), "--", &format!("-{}", child.id())])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal}");
}

/// Sends `signal` to the client `child` runs: `child` itself when the
/// wrapper `exec`s it, else the newest process below it (inside bwrap,
/// which gives the sandbox a session of its own, as a terminal inside it
/// would deliver Ctrl-C to the command in its foreground).
pub fn signal_client(child: &Child, signal: &str) {
    let pid = client_pid(child);
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal} {pid}");
}

/// The client `child` runs: itself, or the newest process below it.
pub fn client_pid(child: &Child) -> u32 {
    let mut pid = child.id();
    while let Some(below) = children(pid).into_iter().max() {
        pid = below;
    }
    pid
}

/// Waits until the client `child` runs catches SIGINT (its `SigCgt` mask
/// in `/proc`): it watches for signals once its call has run a moment.
pub fn wait_catching_signals(child: &Child) {
    wait_until("the client catches SIGINT", || {
        let status = std::fs::read_to_string(format!("/proc/{}/status", client_pid(child)))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix("SigCgt:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .is_some_and(|mask| mask & (1 << (2 - 1)) != 0)
    });
}

/// The processes whose parent is `pid`.
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let candidate: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // `pid (comm) state ppid ...`: the comm may hold spaces.
            let after = &stat[stat.rfind(')')? + 2..];
            let ppid: u32 = after.split(' ').nth(1)?.parse().ok()?;
            (ppid == pid).then_some(candidate)
        })
        .collect()
}

/// Sends SIGCONT to `pid` (a process group when negative) when dropped:
/// a test that stopped a process resumes it even when an assertion fails
/// first, so nothing stays stopped after the test.
pub struct ResumeOnDrop(pub i32);

impl Drop for ResumeOnDrop {
    fn drop(&mut self) {
        // SAFETY: kill(2) on a process the test started.
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}
