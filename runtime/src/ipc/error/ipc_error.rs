//! Why a call failed, in terms a caller can act on.

use std::fmt;
use std::time::Duration;

use super::duration_text::shown_duration;
use super::kind::ErrorKind;
use crate::exit;

/// Why a dispatched call did not produce a successful response.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IpcError {
    /// No command is registered under this name.
    UnknownMethod {
        /// The name that was called.
        method: String,
        /// The closest registered name, if one is close.
        suggestion: Option<String>,
    },
    /// The name called cannot be a command's (over 128 bytes, or of other
    /// characters than letters, digits, `-` and `_`): refused before any
    /// look-up.
    InvalidName {
        /// The name called, cut to its first 64 bytes when longer (with its
        /// length noted).
        method: String,
    },
    /// Shell words that do not fit the command's schema (from
    /// [`dispatch_argv`](crate::ipc::IpcRouter::dispatch_argv)).
    Usage {
        /// The command.
        method: String,
        /// What is wrong, naming the argument and the nearest valid spelling.
        error: crate::tool::BindError,
    },
    /// The request's arguments could not be applied.
    InvalidParams {
        /// The command.
        method: String,
        /// What is wrong, naming the argument.
        message: String,
    },
    /// The handler ran and reported failure.
    Handler {
        /// The command.
        method: String,
        /// The error's message.
        message: String,
        /// The error value, MessagePack-encoded, so a typed client can
        /// decode it.
        data: Vec<u8>,
    },
    /// The handler panicked; only this call failed.
    Panicked {
        /// The command.
        method: String,
        /// The panic message.
        message: String,
    },
    /// The response could not be encoded.
    Encode {
        /// The command.
        method: String,
        /// The encoder's message.
        message: String,
    },
    /// The caller may not call this command: it is outside the
    /// sandbox's scope, the host's guard refused the call, or the
    /// sandbox's access expired or was revoked. Nothing of the call ran.
    Denied {
        /// The command.
        command: String,
        /// Why, in words the caller (a person or a model) can act on.
        reason: String,
    },
    /// The call was cancelled: its caller interrupted it or went away
    /// before its handler ran (while the host's guard was deciding on it),
    /// or its handler did not finish within the cancel grace and was
    /// dropped.
    Cancelled {
        /// The command.
        method: String,
    },
    /// The call ran past its timeout (the command's `#[ipc(timeout)]`,
    /// else the server's) and was cancelled: the same error over a socket,
    /// to an MCP client in process, and through a forwarding MCP server.
    TimedOut {
        /// The command.
        method: String,
        /// The timeout it ran past.
        after: Duration,
    },
}

impl IpcError {
    /// The error for a name that cannot be a command's: it keeps the name's
    /// first 64 bytes (at a character boundary), escaped as Rust escapes a
    /// string (`\u{1b}`: no control character reaches a terminal or a
    /// model's transcript), and notes its length when cut.
    pub(crate) fn invalid_name(method: &str) -> IpcError {
        const KEPT: usize = 64;
        let mut end = method.len().min(KEPT);
        while !method.is_char_boundary(end) {
            end -= 1;
        }
        let kept = method[..end].escape_debug();
        let method = if end < method.len() {
            format!("{kept}… ({} bytes)", method.len())
        } else {
            kept.to_string()
        };
        IpcError::InvalidName { method }
    }

    /// The kind of error, whose name ([`ErrorKind::as_str`]) is stable and
    /// used on the wire.
    pub fn kind(&self) -> ErrorKind {
        match self {
            IpcError::UnknownMethod { .. } | IpcError::InvalidName { .. } => {
                ErrorKind::UnknownMethod
            }
            IpcError::Usage { .. } => ErrorKind::Usage,
            IpcError::InvalidParams { .. } => ErrorKind::InvalidParams,
            IpcError::Handler { .. } => ErrorKind::Handler,
            IpcError::Panicked { .. } => ErrorKind::Panicked,
            IpcError::Encode { .. } => ErrorKind::Encode,
            IpcError::Denied { .. } => ErrorKind::Denied,
            IpcError::Cancelled { .. } => ErrorKind::Cancelled,
            IpcError::TimedOut { .. } => ErrorKind::Timeout,
        }
    }

    /// The exit code a command-line caller reports: 2 ([`exit::USAGE`]) for
    /// a usage mistake (an unknown command or flag, a bad value, a missing
    /// argument), 1 ([`exit::FAILURE`]) when the handler failed or panicked,
    /// 70 ([`exit::SOFTWARE`], `EX_SOFTWARE`) when the response could not be
    /// encoded, 77 ([`exit::DENIED`], `EX_NOPERM`) when the call was not
    /// allowed, 124 ([`exit::TIMEOUT`]) when it ran past its timeout, 130
    /// ([`exit::INTERRUPTED`]) when it was cancelled (before its handler ran,
    /// or with its handler dropped after the cancel grace).
    pub fn exit_code(&self) -> i32 {
        match self {
            IpcError::UnknownMethod { .. }
            | IpcError::InvalidName { .. }
            | IpcError::Usage { .. }
            | IpcError::InvalidParams { .. } => exit::USAGE,
            IpcError::Handler { .. } | IpcError::Panicked { .. } => exit::FAILURE,
            IpcError::Encode { .. } => exit::SOFTWARE,
            IpcError::Denied { .. } => exit::DENIED,
            IpcError::Cancelled { .. } => exit::INTERRUPTED,
            IpcError::TimedOut { .. } => exit::TIMEOUT,
        }
    }

    /// The method the error is about.
    pub fn method(&self) -> &str {
        match self {
            IpcError::UnknownMethod { method, .. }
            | IpcError::InvalidName { method }
            | IpcError::Usage { method, .. }
            | IpcError::InvalidParams { method, .. }
            | IpcError::Handler { method, .. }
            | IpcError::Panicked { method, .. }
            | IpcError::Encode { method, .. }
            | IpcError::Cancelled { method }
            | IpcError::TimedOut { method, .. }
            | IpcError::Denied {
                command: method, ..
            } => method,
        }
    }
}

impl fmt::Display for IpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IpcError::UnknownMethod {
                method,
                suggestion: Some(suggestion),
            } => write!(
                f,
                "unknown command `{method}`; did you mean `{suggestion}`?"
            ),
            IpcError::UnknownMethod {
                method,
                suggestion: None,
            } => write!(f, "unknown command `{method}`"),
            IpcError::InvalidName { method } => write!(
                f,
                "`{method}` cannot be a command's name: a name is 1 to 128 letters, digits, `-` \
                 and `_`, beginning with a letter; see `gangway list` for the commands here"
            ),
            IpcError::Usage { method, error } => write!(f, "{method}: {error}"),
            IpcError::InvalidParams { method, message } => write!(f, "{method}: {message}"),
            IpcError::Handler {
                method, message, ..
            } => write!(f, "{method}: {message}"),
            IpcError::Panicked { method, message } => {
                write!(f, "{method}: the handler panicked: {message}")
            }
            IpcError::Encode { method, message } => {
                write!(f, "{method}: the response could not be encoded: {message}")
            }
            IpcError::Denied { command, reason } => write!(f, "{command}: {reason}"),
            IpcError::Cancelled { method } => write!(f, "command `{method}` was cancelled"),
            IpcError::TimedOut { method, after } => write!(
                f,
                "command `{method}` timed out after {}",
                shown_duration(*after)
            ),
        }
    }
}

impl std::error::Error for IpcError {}

/// Why a command could not be registered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegisterError {
    /// Another command already has this name.
    Duplicate {
        /// The name.
        name: String,
    },
    /// The name is not `[A-Za-z][A-Za-z0-9_-]*` of at most 128 bytes.
    InvalidName {
        /// The name.
        name: String,
    },
    /// The response's JSON Schema (`#[ipc(output_schema)]`) cannot be an
    /// output schema: the type contains itself.
    OutputSchema {
        /// The command's name.
        name: String,
        /// Why, and what to do.
        reason: String,
    },
}

impl fmt::Display for RegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegisterError::Duplicate { name } => write!(
                f,
                "a command named `{name}` is already registered; give one of them another name \
                 (`#[ipc(name = \"...\")]` or an `#[ipc(method)]` field)"
            ),
            RegisterError::InvalidName { name } => write!(
                f,
                "invalid command name `{name}`: it becomes a file name and a shell word, so it must \
                 match `[A-Za-z][A-Za-z0-9_-]*` and be at most 128 bytes"
            ),
            RegisterError::OutputSchema { name, reason } => {
                write!(f, "command `{name}`: {reason}")
            }
        }
    }
}

impl std::error::Error for RegisterError {}
