//! [`OutputStream`]: which of the caller's streams a handler's output goes
//! to, as the handler names it and as the wire carries it.

use serde::{Deserialize, Serialize};

/// Which of the caller's streams output goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}
