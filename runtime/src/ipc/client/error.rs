//! How a client's call can fail: [`ClientError`], and the host's own
//! [`RemoteError`] when it answered with one.

use std::fmt;
use std::io;

use serde_bytes::ByteBuf;

use crate::ipc::error::kind::ErrorKind;
use crate::ipc::exit;
use crate::ipc::protocol::WireError;
use crate::sandbox::env::{ENV_ENDPOINT, ENV_TOKEN, ENV_TOKEN_FILE};

/// An error a call ended in, as the host reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteError {
    /// What kind of failure (`usage`, `handler`, `auth`, ...; see
    /// [`ErrorKind`]).
    pub kind: ErrorKind,
    /// For a person.
    pub message: String,
    /// The exit code a command-line client should end with.
    pub exit: i32,
    /// The argument at fault, for a usage error.
    pub argument: Option<String>,
    /// The nearest valid spelling, for a usage error.
    pub suggestion: Option<String>,
    /// The handler's encoded error value.
    pub data: Option<Vec<u8>>,
}

/// Why a call did not produce a response.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// `GANGWAY_ENDPOINT` is not set, or neither `GANGWAY_TOKEN` nor
    /// `GANGWAY_TOKEN_FILE` is.
    MissingEnv {
        /// The variable.
        var: &'static str,
    },
    /// The sandbox's access ended: the token file `GANGWAY_TOKEN_FILE`
    /// names is gone (with the scope's socket), as the host removes it once
    /// the access is revoked or expires.
    AccessEnded {
        /// The token file that was.
        token_file: std::path::PathBuf,
    },
    /// The file `GANGWAY_TOKEN_FILE` names cannot be read.
    TokenFile {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The endpoint text is not an endpoint.
    BadEndpoint(String),
    /// The host could not be reached.
    Connect {
        /// Where.
        endpoint: String,
        /// Why.
        source: io::Error,
    },
    /// The connection failed mid-call.
    Io(io::Error),
    /// The host's answer made no sense.
    Protocol(String),
    /// The host answered with an error.
    Remote(Box<RemoteError>),
    /// A request over the host's frame limit, refused before sending.
    TooLarge {
        /// The request's size.
        bytes: usize,
        /// The host's limit.
        max: usize,
    },
    /// Standard input could not be read.
    Stdin(io::Error),
    /// Piped standard input over what fits in one call.
    StdinTooLarge {
        /// The room there was, in bytes.
        max: usize,
    },
    /// The host speaks another version of the protocol (another gangway
    /// release).
    Version {
        /// This client's version.
        client: u32,
        /// The host's.
        host: u32,
    },
}

impl ClientError {
    /// The exit code a command-line client should end with: the host's for
    /// a remote error, 2 for a call too large to send, 74 (`EX_IOERR`) when
    /// standard input cannot be read, 77 (`EX_NOPERM`) when the sandbox's
    /// access has ended (its token file is gone), 69 (`EX_UNAVAILABLE`) when the host
    /// cannot be reached or the exchange broke.
    pub fn exit_code(&self) -> i32 {
        match self {
            ClientError::Remote(remote) => remote.exit,
            ClientError::TooLarge { .. } | ClientError::StdinTooLarge { .. } => exit::USAGE,
            ClientError::Stdin(_) => exit::STDIN,
            ClientError::AccessEnded { .. } => exit::DENIED,
            _ => exit::UNAVAILABLE,
        }
    }

    /// The remote error, if the host answered with one.
    pub fn remote(&self) -> Option<&RemoteError> {
        match self {
            ClientError::Remote(remote) => Some(remote),
            _ => None,
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::MissingEnv { var } => write!(
                f,
                "{var} is not set: run this inside a sandbox the gangway host started, or set \
                 {ENV_ENDPOINT} and {ENV_TOKEN} (or {ENV_TOKEN_FILE})"
            ),
            ClientError::AccessEnded { token_file } => write!(
                f,
                "this sandbox's access has ended: its token ({}) and socket are gone, as when \
                 the host revokes the access, the access expires, or the host stops; the host \
                 must issue a new scope",
                token_file.display()
            ),
            ClientError::TokenFile { path, source } => write!(
                f,
                "cannot read the token from {} ({ENV_TOKEN_FILE}): {source}",
                path.display()
            ),
            ClientError::BadEndpoint(message) => write!(f, "{ENV_ENDPOINT}: {message}"),
            ClientError::Connect { endpoint, source } => write!(
                f,
                "cannot reach the gangway host at {endpoint}: {source}; is the host running?"
            ),
            ClientError::Io(error) => {
                write!(f, "the connection to the gangway host failed: {error}")
            }
            ClientError::Protocol(message) => {
                write!(f, "the gangway host's answer made no sense: {message}")
            }
            ClientError::Remote(remote) => f.write_str(&remote.message),
            ClientError::TooLarge { bytes, max } => write!(
                f,
                "the call is {bytes} bytes, over the host's {max}-byte limit; pass large input as a file instead"
            ),
            ClientError::Stdin(error) => write!(f, "cannot read standard input: {error}"),
            ClientError::Version { client, host } => {
                f.write_str(&crate::ipc::protocol::version_mismatch(*client, *host))
            }
            ClientError::StdinTooLarge { max } => write!(
                f,
                "standard input is over the {max} bytes the host takes in one call; pass large input as a file instead"
            ),
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Connect { source, .. }
            | ClientError::TokenFile { source, .. }
            | ClientError::Io(source)
            | ClientError::Stdin(source) => Some(source),
            _ => None,
        }
    }
}

impl From<WireError> for RemoteError {
    fn from(wire: WireError) -> Self {
        RemoteError {
            kind: wire.kind,
            message: wire.message,
            exit: wire.exit,
            argument: wire.argument,
            suggestion: wire.suggestion,
            data: wire.data.map(ByteBuf::into_vec),
        }
    }
}
