//! The exit codes a command-line caller ends with, in one place: what
//! [`IpcError::exit_code`](crate::ipc::IpcError::exit_code) gives, what the
//! server puts in a `protocol::WireError`'s `exit`,
//! and what the `gangway call` client returns. A wrapper script exits with
//! the code its call ended in, so these are what a sandboxed shell sees.
//!
//! | code | name | when |
//! |---|---|---|
//! | 0 | [`OK`] | the call succeeded (help included) |
//! | 1 | [`FAILURE`] | the handler failed or panicked, or its answer was too large or could not be written out |
//! | 2 | [`USAGE`] | a usage mistake: an unknown command or flag, a bad value, a missing argument, a call too large to send |
//! | 69 | [`UNAVAILABLE`] | the host cannot be reached, refused the connection (busy, wrong token) or the exchange broke (`EX_UNAVAILABLE`) |
//! | 70 | [`SOFTWARE`] | the handler's response could not be encoded (`EX_SOFTWARE`) |
//! | 74 | [`STDIN`] | standard input could not be read (`EX_IOERR`) |
//! | 77 | [`DENIED`] | the sandbox may not call the command: outside its scope, refused by the host's guard, or its access expired or was revoked (`EX_NOPERM`) |
//! | 124 | [`TIMEOUT`] | the call ran past its timeout and was cancelled (as `timeout(1)` exits) |

/// The call succeeded.
pub const OK: i32 = 0;

/// The call failed: the handler reported failure or panicked, its response
/// was over the frame limit, or the client could not write it out.
pub const FAILURE: i32 = 1;

/// A usage mistake: an unknown command or flag, a bad value, a missing
/// argument, a request over the host's frame limit.
pub const USAGE: i32 = 2;

/// The host cannot be reached, turned the connection away, or the exchange
/// broke (`EX_UNAVAILABLE` from `sysexits.h`).
pub const UNAVAILABLE: i32 = 69;

/// The handler's response could not be encoded (`EX_SOFTWARE`).
pub const SOFTWARE: i32 = 70;

/// Standard input could not be read (`EX_IOERR`).
pub const STDIN: i32 = 74;

/// The sandbox may not make the call: the command is outside its scope,
/// the host's guard refused it, or the sandbox's access expired or was
/// revoked (`EX_NOPERM`).
pub const DENIED: i32 = 77;

/// The call ran past its timeout (the command's `#[ipc(timeout = "...")]`,
/// else the server's call timeout) and was cancelled: what `timeout(1)`
/// exits with.
pub const TIMEOUT: i32 = 124;

/// The call was ended by signal `signal` in the caller (SIGINT from
/// Ctrl-C, SIGTERM, SIGHUP), after the host was told to cancel it: 128 +
/// the signal's number, as shells report a command a signal ended (130,
/// 143, 129).
pub const fn signal(signal: i32) -> i32 {
    128 + signal
}

/// What a cancelled call's answer carries when the caller named no signal:
/// as for Ctrl-C (SIGINT).
pub const INTERRUPTED: i32 = signal(2);
