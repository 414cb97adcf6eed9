//! Scope leases: what tells a guard that the scope a call came from is
//! still the one it knew. A person's approval "for this session" holds
//! for one issued scope (not its id: a scope issued again under the same
//! id is a new one), and ends when that scope is revoked or expires, or
//! when its server stops.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

/// Numbers the leases of a process, so that no two are the same.
static NEXT_LEASE: AtomicU64 = AtomicU64::new(1);

/// The life of the scope (or the full-access token) a call came through,
/// as its guard sees it ([`CallInfo::lease`](crate::ipc::CallInfo::lease)).
#[derive(Clone)]
pub struct ScopeLease {
    id: u64,
    /// Cancelled when the scope is revoked.
    revoked: CancellationToken,
    expires_at: Option<Instant>,
    /// Cancelled when the server stops.
    stopped: CancellationToken,
}

impl ScopeLease {
    /// A lease ending when `revoked` or `stopped` is cancelled, or at
    /// `expires_at`.
    pub(crate) fn new(
        revoked: CancellationToken,
        expires_at: Option<Instant>,
        stopped: CancellationToken,
    ) -> Self {
        ScopeLease {
            id: NEXT_LEASE.fetch_add(1, Ordering::Relaxed),
            revoked,
            expires_at,
            stopped,
        }
    }

    /// Unique to one issued scope in this process: a scope issued again
    /// under the same id has another.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Whether the scope still admits calls: not revoked, not expired,
    /// its server not stopped.
    pub fn is_live(&self) -> bool {
        !self.revoked.is_cancelled()
            && !self.stopped.is_cancelled()
            && self.expires_at.is_none_or(|at| Instant::now() < at)
    }
}

impl PartialEq for ScopeLease {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl fmt::Debug for ScopeLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopeLease")
            .field("id", &self.id)
            .field("live", &self.is_live())
            .finish()
    }
}
