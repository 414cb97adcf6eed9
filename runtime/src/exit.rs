//! The exit codes a command-line caller ends with, in one place (and one
//! table, [`TABLE`], from which the client's `--help` text, [`HELP`], is
//! made at compile time): what
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

/// Every exit code and what it means, as `--help` lists them: the code as
/// shown (`128+n` for a signal), and its meaning, each line of it at most
/// 70 columns wide.
pub const TABLE: &[(&str, &[&str])] = &[
    ("0", &["the call succeeded"]),
    (
        "1",
        &[
            "the command failed: its handler returned an error or panicked, or its",
            "response was over the host's frame limit",
        ],
    ),
    (
        "2",
        &["usage error: unknown command or flag, bad value, missing argument"],
    ),
    (
        "69",
        &["the host cannot be reached or refused the connection"],
    ),
    ("70", &["the command's response could not be encoded"]),
    ("74", &["standard input could not be read"]),
    (
        "77",
        &[
            "not allowed: the command is outside this sandbox's scope, the host's",
            "guard refused the call, or the sandbox's access expired or was revoked",
        ],
    ),
    ("124", &["the call timed out (and was cancelled)"]),
    (
        "128+n",
        &[
            "ended by signal n: 130 for Ctrl-C (SIGINT), 143 for SIGTERM, 129 for",
            "SIGHUP; the call is cancelled on the host first",
        ],
    ),
];

/// The exit codes as the client's `--help` lists them, made from [`TABLE`].
pub const HELP: &str = match std::str::from_utf8(&HELP_BYTES) {
    Ok(text) => text,
    Err(_) => panic!("the exit code table is not UTF-8"),
};

/// How the help's heading reads.
const HEADING: &str = "Exit codes:\n";

/// The column where a meaning starts.
const MEANING_AT: usize = 7;

const HELP_BYTES: [u8; help_len()] = render_help();

/// The help text's length.
const fn help_len() -> usize {
    let mut len = HEADING.len();
    let mut row = 0;
    while row < TABLE.len() {
        let (code, lines) = TABLE[row];
        // "  <code>" padded to the meaning's column (at least two spaces).
        len += pad_to(code.len());
        let mut line = 0;
        while line < lines.len() {
            if line > 0 {
                len += MEANING_AT;
            }
            len += lines[line].len() + 1;
            line += 1;
        }
        row += 1;
    }
    len
}

/// The width of `  <code>` and the spaces after it (at least two).
const fn pad_to(code_len: usize) -> usize {
    let used = 2 + code_len + 2;
    if used > MEANING_AT { used } else { MEANING_AT }
}

/// The help text, byte by byte.
const fn render_help() -> [u8; help_len()] {
    let mut out = [b' '; help_len()];
    let mut at = copy(&mut out, 0, HEADING.as_bytes());
    let mut row = 0;
    while row < TABLE.len() {
        let (code, lines) = TABLE[row];
        copy(&mut out, at + 2, code.as_bytes());
        at += pad_to(code.len());
        let mut line = 0;
        while line < lines.len() {
            if line > 0 {
                at += MEANING_AT;
            }
            at = copy(&mut out, at, lines[line].as_bytes());
            out[at] = b'\n';
            at += 1;
            line += 1;
        }
        row += 1;
    }
    out
}

/// Copies `bytes` into `out` at `at`; where they end.
const fn copy<const N: usize>(out: &mut [u8; N], at: usize, bytes: &[u8]) -> usize {
    let mut i = 0;
    while i < bytes.len() {
        out[at + i] = bytes[i];
        i += 1;
    }
    at + bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_lists_every_code_of_the_table_and_each_constant() {
        let expected = "\
Exit codes:
  0    the call succeeded
  1    the command failed: its handler returned an error or panicked, or its
       response was over the host's frame limit
  2    usage error: unknown command or flag, bad value, missing argument
  69   the host cannot be reached or refused the connection
  70   the command's response could not be encoded
  74   standard input could not be read
  77   not allowed: the command is outside this sandbox's scope, the host's
       guard refused the call, or the sandbox's access expired or was revoked
  124  the call timed out (and was cancelled)
  128+n  ended by signal n: 130 for Ctrl-C (SIGINT), 143 for SIGTERM, 129 for
       SIGHUP; the call is cancelled on the host first
";
        assert_eq!(HELP, expected);
        let listed: Vec<&str> = TABLE.iter().map(|(code, _)| *code).collect();
        for code in [
            OK,
            FAILURE,
            USAGE,
            UNAVAILABLE,
            SOFTWARE,
            STDIN,
            DENIED,
            TIMEOUT,
        ] {
            assert!(
                listed.contains(&code.to_string().as_str()),
                "{code} is not in the table"
            );
        }
        assert_eq!(INTERRUPTED, 130);
    }
}
