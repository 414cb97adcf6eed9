//! What writing or checking wrappers reports, and how it fails.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::render::RenderFailure;

/// What [`write_wrappers`](crate::write_wrappers) did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WrapperReport {
    /// Commands whose wrapper was written (new or changed).
    pub written: Vec<String>,
    /// Commands whose wrapper was already up to date.
    pub unchanged: Vec<String>,
    /// Wrappers removed because their command is gone.
    pub removed: Vec<String>,
    /// Link wrappers: the client program was placed (new or changed).
    pub client_written: bool,
    /// Script wrappers: a client program link wrappers had placed was
    /// removed with them.
    pub client_removed: bool,
}

/// Why wrappers could not be written or checked.
#[derive(Debug)]
#[non_exhaustive]
pub enum WrapperError {
    /// A command name that cannot be a file name.
    InvalidName(String),
    /// A template failure.
    Render(RenderFailure),
    /// A file-system failure, with the path.
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A file of a command's name that gangway did not write.
    NotOurs {
        /// The file.
        path: PathBuf,
    },
    /// A stdin argument name that cannot be one shell word.
    InvalidArgName {
        /// The command.
        command: String,
        /// The name.
        name: String,
    },
    /// Link wrappers: a command has the client program's file name.
    ReservedName(String),
    /// Link wrappers: the client program cannot be read.
    MissingClient {
        /// The path given.
        path: PathBuf,
        /// Why it cannot be read.
        source: io::Error,
    },
    /// `--check`: the directory differs from the manifest.
    OutOfDate {
        /// A unified diff from what is there to what should be.
        diff: String,
    },
}

impl fmt::Display for WrapperError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WrapperError::InvalidName(name) => write!(
                f,
                "command name `{name}` cannot be a wrapper's file name: it must match `[A-Za-z][A-Za-z0-9_-]*`"
            ),
            WrapperError::Render(error) => error.fmt(f),
            WrapperError::NotOurs { path } => write!(
                f,
                "refusing to replace {}: it is not a gangway wrapper; move it away or choose another directory",
                path.display()
            ),
            WrapperError::InvalidArgName { command, name } => write!(
                f,
                "command `{command}` reads stdin into `{name}`, which is not a plain argument name \
                 (letters, digits, `_` and `-`)"
            ),
            WrapperError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            WrapperError::ReservedName(name) => write!(
                f,
                "command `{name}` cannot have a link wrapper: the client program has that file \
                 name in the directory; rename the command or use script wrappers"
            ),
            WrapperError::MissingClient { path, source } => write!(
                f,
                "the client program {} cannot be read ({source}); build it (`cargo build -p \
                 gangway-client`) or name another with `--client`",
                path.display()
            ),
            WrapperError::OutOfDate { diff } => write!(f, "the wrappers are out of date:\n{diff}"),
        }
    }
}

impl std::error::Error for WrapperError {}

pub(super) fn io_error(path: &Path) -> impl FnOnce(io::Error) -> WrapperError + '_ {
    move |source| WrapperError::Io {
        path: path.to_path_buf(),
        source,
    }
}
