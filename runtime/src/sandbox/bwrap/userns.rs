//! Whether a bubblewrap can lock its sandbox out of new user namespaces
//! (`--unshare-user --disable-userns`, bubblewrap 0.8 and a kernel that
//! lets it make a user namespace): asked once per `bwrap` program by
//! running it, and said once through `tracing` when it cannot. The seccomp
//! filter refuses `CLONE_NEWUSER` either way; this is the second lock.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// Whether `program` runs a sandbox with `--unshare-user --disable-userns`.
pub(super) fn can_disable(program: &Path) -> bool {
    static KNOWN: OnceLock<Mutex<HashMap<PathBuf, bool>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Mutex::default);
    if let Some(&answer) = known
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(program)
    {
        return answer;
    }
    let answer = probe(program);
    known
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(program.to_path_buf(), answer);
    answer
}

/// Runs `true` in a sandbox that disables user namespaces.
fn probe(program: &Path) -> bool {
    let run = Command::new(program)
        .args(["--unshare-user", "--disable-userns", "--cap-drop", "ALL"])
        .args(["--ro-bind", "/", "/", "--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match run {
        Ok(output) if output.status.success() => true,
        Ok(output) => {
            tracing::warn!(
                target: "gangway::sandbox",
                bwrap = %program.display(),
                reason = %String::from_utf8_lossy(&output.stderr).trim(),
                "this bubblewrap cannot disable user namespaces in its sandboxes (it needs \
                 bubblewrap 0.8 and a kernel that allows a user namespace); a sandboxed \
                 process is kept from making one by the seccomp filter alone"
            );
            false
        }
        // No bwrap to run: the sandbox itself will fail to start, saying so.
        Err(_) => false,
    }
}
