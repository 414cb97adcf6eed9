//! Why a call stopped for its handler: the [`CancelReason`] a cancelled
//! call carries, and the [`CallEnded`] error a write returns once the call
//! is over.

use std::fmt;

/// Why output could not be sent: the call is over for the handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallEnded {
    pub(crate) reason: CancelReason,
}

impl CallEnded {
    /// Why the call ended.
    pub fn reason(&self) -> CancelReason {
        self.reason
    }
}

impl fmt::Display for CallEnded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the output was not sent: {}", self.reason)
    }
}

impl std::error::Error for CallEnded {}

impl From<CallEnded> for std::io::Error {
    fn from(ended: CallEnded) -> Self {
        std::io::Error::new(std::io::ErrorKind::BrokenPipe, ended)
    }
}

/// Why a call was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CancelReason {
    /// The caller asked: it got SIGINT (Ctrl-C), SIGTERM or SIGHUP, or an
    /// in-process caller gave up on a streaming call.
    Interrupted,
    /// The caller went away (closed the connection: Ctrl-C, a killed
    /// process, `cmd | head` closing early).
    CallerGone,
    /// The call ran past its timeout (`#[ipc(timeout = "...")]`, else the
    /// server's call timeout).
    TimedOut,
    /// The server stopped at its shutdown deadline: the handler itself is
    /// dropped at once, so only work it handed a clone of the context sees
    /// this.
    Shutdown,
    /// The host revoked the sandbox's scope
    /// ([`IpcServer::revoke`](crate::ipc::IpcServer::revoke)).
    Revoked,
    /// The sandbox's scope expired
    /// ([`Scope::expires_in`](crate::ipc::Scope::expires_in)).
    Expired,
}

impl fmt::Display for CancelReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CancelReason::Interrupted => "the caller interrupted it",
            CancelReason::CallerGone => "the caller went away",
            CancelReason::TimedOut => "the call timed out",
            CancelReason::Shutdown => "the server is shutting down",
            CancelReason::Revoked => "the sandbox's access was revoked",
            CancelReason::Expired => "the sandbox's access expired",
        })
    }
}
