//! What a sandboxed program (or the process that starts its sandbox)
//! starts from: none of the host's variables (its credentials among them)
//! but the few that say how to show text, and `PATH` on the system
//! directories; and none of the host's file descriptors but the standard
//! three. `Bwrap::command`, `Bwrap::prefix` and a `LaunchSpec` with a
//! prefix or a `SandboxEnv` all start from it.

use std::ffi::OsString;

/// The `PATH` a sandbox gets before the wrapper directory is put first.
pub(crate) const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

/// The host's variables a sandbox keeps, when set: how to draw on the
/// terminal, in which language, in which time zone. None holds a secret.
const KEPT: [&str; 4] = ["TERM", "LANG", "LC_ALL", "TZ"];

/// The variables a program in a sandbox starts with: `HOME` is the
/// sandbox's own `/tmp`.
#[cfg(feature = "ipc")]
pub(crate) fn in_sandbox() -> Vec<(OsString, OsString)> {
    let mut vars = kept();
    vars.push(("HOME".into(), "/tmp".into()));
    vars
}

/// The variables a process on the host that starts a sandbox (a prefix's
/// first program) starts with: `HOME` stays the host's, since the host's
/// `/tmp` is anyone's to write.
#[cfg(feature = "controller")]
pub(crate) fn on_host() -> Vec<(OsString, OsString)> {
    let mut vars = kept();
    if let Some(home) = std::env::var_os("HOME") {
        vars.push(("HOME".into(), home));
    }
    vars
}

/// The host's variables kept, and `PATH` on the system directories.
fn kept() -> Vec<(OsString, OsString)> {
    let mut vars: Vec<(OsString, OsString)> = KEPT
        .iter()
        .filter_map(|key| Some((OsString::from(key), std::env::var_os(key)?)))
        .collect();
    vars.push(("PATH".into(), SYSTEM_PATH.into()));
    vars
}

/// Marks every file descriptor above standard error close-on-exec: run
/// between fork and exec (`pre_exec`), so a descriptor the host leaked
/// (opened without close-on-exec, or inherited from whatever started the
/// host) does not reach the sandbox. One `close_range` where the kernel
/// has it (5.11), else an `fcntl` per possible descriptor.
///
/// Async-signal-safe: system calls only, no allocation.
pub(crate) fn seal_inherited_fds() -> std::io::Result<()> {
    // SAFETY: `close_range` with CLOSE_RANGE_CLOEXEC only sets a flag on
    // descriptors; it reads and writes no memory of ours.
    let sealed = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if sealed == 0 {
        return Ok(());
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes the struct it is given, which lives here.
    let highest = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        limit.rlim_cur.min(65_536) as libc::c_int
    } else {
        1024
    };
    for fd in 3..highest {
        // SAFETY: `fcntl` on a descriptor that is not open fails with
        // EBADF and changes nothing.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}
