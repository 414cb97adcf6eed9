//! The old name of [`caller`](crate::caller), the in-sandbox client,
//! renamed so that it is not taken for [`ipc`](crate::ipc)'s clients or the
//! `gangway` command-line tool. Each item here forwards to its new home and
//! warns where it is used.

use std::ffi::OsString;

/// [`caller::run`](crate::caller::run) under its old path.
#[deprecated(since = "0.1.0", note = "renamed `gangway::caller::run`")]
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    crate::caller::run(args)
}

/// [`caller::run_if_call`](crate::caller::run_if_call) under its old path.
#[deprecated(since = "0.1.0", note = "renamed `gangway::caller::run_if_call`")]
pub fn run_if_call<I, T>(args: I) -> Option<i32>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    crate::caller::run_if_call(args)
}

/// [`caller::say`](crate::caller::say) under its old path.
#[deprecated(since = "0.1.0", note = "renamed `gangway::caller::say`")]
pub fn say(message: impl AsRef<str>) {
    crate::caller::say(message);
}

/// [`caller::write_stdout`](crate::caller::write_stdout) under its old path.
#[deprecated(since = "0.1.0", note = "renamed `gangway::caller::write_stdout`")]
pub fn write_stdout(bytes: &[u8]) -> i32 {
    crate::caller::write_stdout(bytes)
}

/// [`caller::EXIT_CODES`](crate::caller::EXIT_CODES) under its old path.
#[deprecated(since = "0.1.0", note = "renamed `gangway::caller::EXIT_CODES`")]
pub const EXIT_CODES: &str = crate::caller::EXIT_CODES;

/// [`caller::ENV_PROGRESS`](crate::caller::ENV_PROGRESS) under its old path.
#[deprecated(since = "0.1.0", note = "renamed `gangway::caller::ENV_PROGRESS`")]
pub const ENV_PROGRESS: &str = crate::caller::ENV_PROGRESS;
