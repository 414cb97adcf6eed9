//! The environment a sandboxed program starts from: none of the host's
//! variables (its credentials among them) but the few that say how to show
//! text, `HOME` on the sandbox's own `/tmp`, and `PATH` on the system
//! directories. `Bwrap::command`, `Bwrap::prefix` and a `LaunchSpec` with
//! a prefix or a `SandboxEnv` all start from it.

use std::ffi::OsString;

/// The `PATH` a sandbox gets before the wrapper directory is put first.
pub(crate) const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

/// The host's variables a sandbox keeps, when set: how to draw on the
/// terminal, in which language, in which time zone. None holds a secret.
const KEPT: [&str; 4] = ["TERM", "LANG", "LC_ALL", "TZ"];

/// The variables a sandboxed program starts with.
pub(crate) fn base() -> Vec<(OsString, OsString)> {
    let mut vars: Vec<(OsString, OsString)> = KEPT
        .iter()
        .filter_map(|key| Some((OsString::from(key), std::env::var_os(key)?)))
        .collect();
    vars.push(("HOME".into(), "/tmp".into()));
    vars.push(("PATH".into(), SYSTEM_PATH.into()));
    vars
}
