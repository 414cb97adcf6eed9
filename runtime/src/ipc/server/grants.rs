//! The tokens a server accepts, each bound to what it allows: the
//! server's own full-access token, and one per [`Scope`] issued. A token
//! presented at the hello is compared with every token in constant time;
//! a grant that expired or was revoked stays known, so its refusal can
//! say why.

use std::collections::BTreeSet;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use subtle::ConstantTimeEq;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::ipc::authority::lease::ScopeLease;
use crate::ipc::authority::scope::Scope;
use crate::ipc::authority::scrub::KnownSecrets;
use crate::ipc::call::cancel::CancelReason;
use crate::ipc::error::kind::ErrorKind;
use crate::ipc::exit;
use crate::ipc::protocol::WireError;

/// How many connections each grant may hold open even when the server's
/// backstop (`max_connections`) is reached: scopes at their quotas
/// together lock no other scope out.
pub(crate) const GUARANTEED_PER_SCOPE: usize = 4;

/// How many expired or revoked grants are remembered.
const MAX_LAPSED: usize = 4096;

/// One token and what it allows.
pub(crate) struct Grant {
    token: String,
    /// `None`: the full-access token.
    scope: Option<Arc<str>>,
    /// `None`: every command.
    commands: Option<BTreeSet<String>>,
    expires_at: Option<Instant>,
    revoked: CancellationToken,
    /// Room for the connections the grant may hold open at once.
    connections: Arc<Semaphore>,
    quota: usize,
    /// Room for the connections it may hold past the server's backstop.
    guaranteed: Arc<Semaphore>,
    /// What its calls' guards see of its life.
    lease: ScopeLease,
}

/// Why a grant no longer admits calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lapse {
    Expired,
    Revoked,
}

impl Lapse {
    /// What the caller is told.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Lapse::Expired => "this sandbox's access expired; the host must issue a new scope",
            Lapse::Revoked => "this sandbox's access was revoked by the host",
        }
    }

    /// The error a call or connection is refused with (`denied`, exit 77).
    pub(crate) fn error(self) -> WireError {
        WireError::server(ErrorKind::Denied, self.reason(), exit::DENIED)
    }

    /// What the scope's running calls are cancelled with.
    pub(crate) fn cancel_reason(self) -> CancelReason {
        match self {
            Lapse::Expired => CancelReason::Expired,
            Lapse::Revoked => CancelReason::Revoked,
        }
    }
}

impl Grant {
    /// The scope's id; `None` for full access.
    pub(crate) fn scope(&self) -> Option<&Arc<str>> {
        self.scope.as_ref()
    }

    /// The grant's life, as its calls' guards see it.
    pub(crate) fn lease(&self) -> &ScopeLease {
        &self.lease
    }

    /// The commands allowed, or `None` for all.
    pub(crate) fn commands(&self) -> Option<&BTreeSet<String>> {
        self.commands.as_ref()
    }

    /// Why the grant admits nothing more, if it does not.
    pub(crate) fn lapse(&self) -> Option<Lapse> {
        if self.revoked.is_cancelled() {
            Some(Lapse::Revoked)
        } else if self.expires_at.is_some_and(|at| Instant::now() >= at) {
            Some(Lapse::Expired)
        } else {
            None
        }
    }

    /// Room for one more connection of this grant's, waiting at most
    /// `within` for one of its connections to close; `None` if none did.
    pub(crate) async fn connection_slot(&self, within: Duration) -> Option<OwnedSemaphorePermit> {
        let slot = self.connections.clone().acquire_owned();
        tokio::time::timeout(within, slot).await.ok()?.ok()
    }

    /// Room for one more connection of this grant's, if it has some now.
    pub(crate) fn try_connection_slot(&self) -> Option<OwnedSemaphorePermit> {
        self.connections.clone().try_acquire_owned().ok()
    }

    /// How many connections the grant may hold open at once.
    pub(crate) fn connection_quota(&self) -> usize {
        self.quota
    }

    /// One of the connections the grant may hold open past the server's
    /// backstop, if it holds fewer than [`GUARANTEED_PER_SCOPE`] of them.
    pub(crate) fn guaranteed_slot(&self) -> Option<OwnedSemaphorePermit> {
        self.guaranteed.clone().try_acquire_owned().ok()
    }

    /// Whether `presented` is this grant's token, compared in constant time.
    pub(crate) fn token_is(&self, presented: &str) -> bool {
        presented.as_bytes().ct_eq(self.token.as_bytes()).into()
    }

    /// Completes when the grant lapses: it is revoked, or it expires.
    pub(crate) async fn lapsed(&self) {
        match self.expires_at {
            Some(at) => tokio::select! {
                () = self.revoked.cancelled() => {}
                () = tokio::time::sleep_until(at.into()) => {}
            },
            None => self.revoked.cancelled().await,
        }
    }
}

/// Every grant a server made.
pub(crate) struct Grants {
    grants: RwLock<Vec<Arc<Grant>>>,
    /// How many connections each grant may hold open at once.
    quota: usize,
    /// Counts the changes to the tokens held, so the audit log's scrubber
    /// knows when to look again.
    generation: AtomicU64,
    /// Cancelled when the server stops: every grant's lease ends then.
    stopped: CancellationToken,
}

impl Grants {
    /// Grants with the server's full-access token, each grant holding at
    /// most `quota` connections open at once, their leases ending when
    /// `stopped` is cancelled.
    pub(crate) fn new(full_access: String, quota: usize, stopped: CancellationToken) -> Self {
        let grants = Grants {
            grants: RwLock::default(),
            quota,
            generation: AtomicU64::new(0),
            stopped,
        };
        let revoked = CancellationToken::new();
        grants.push(Grant {
            token: full_access,
            scope: None,
            commands: None,
            expires_at: None,
            lease: ScopeLease::new(revoked.clone(), None, grants.stopped.clone()),
            revoked,
            connections: Arc::new(Semaphore::new(quota)),
            guaranteed: Arc::new(Semaphore::new(GUARANTEED_PER_SCOPE)),
            quota,
        });
        grants
    }

    fn push(&self, grant: Grant) {
        self.grants
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Arc::new(grant));
        self.changed();
    }

    fn changed(&self) {
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// The server's own grant: every command, never lapsing.
    pub(crate) fn full_access(&self) -> Arc<Grant> {
        self.grants
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .find(|grant| grant.scope.is_none())
            .cloned()
            .expect("the full-access grant is made first and never forgotten")
    }

    /// Forgets `grant`, which was issued but could not be put to use (its
    /// socket could not be made): its id may be issued again at once.
    pub(crate) fn withdraw(&self, grant: &Arc<Grant>) {
        grant.revoked.cancel();
        self.grants
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|held| !Arc::ptr_eq(held, grant));
        self.changed();
    }

    /// Adds a grant for `scope` under `token`; `None` when a live scope
    /// has its id.
    pub(crate) fn issue(&self, scope: Scope, token: String) -> Option<Arc<Grant>> {
        let (id, commands, lifetime) = scope.into_parts();
        let mut grants = self
            .grants
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if grants
            .iter()
            .any(|grant| grant.scope.as_deref() == Some(&*id) && grant.lapse().is_none())
        {
            return None;
        }
        // Lapsed grants are kept, so their tokens are refused with the
        // reason; past a bound, the oldest are forgotten (their tokens then
        // read as wrong).
        let lapsed = grants
            .iter()
            .filter(|grant| grant.lapse().is_some())
            .count();
        if lapsed >= MAX_LAPSED {
            let mut extra = lapsed + 1 - MAX_LAPSED;
            grants.retain(|grant| {
                let forget = extra > 0 && grant.lapse().is_some();
                extra -= usize::from(forget);
                !forget
            });
        }
        // A lifetime past what the clock can say never ends.
        let expires_at = lifetime.and_then(|lifetime| Instant::now().checked_add(lifetime));
        let revoked = CancellationToken::new();
        let grant = Arc::new(Grant {
            token,
            scope: Some(Arc::from(id)),
            commands,
            expires_at,
            lease: ScopeLease::new(revoked.clone(), expires_at, self.stopped.clone()),
            revoked,
            connections: Arc::new(Semaphore::new(self.quota)),
            quota: self.quota,
            guaranteed: Arc::new(Semaphore::new(GUARANTEED_PER_SCOPE)),
        });
        grants.push(grant.clone());
        self.changed();
        Some(grant)
    }

    /// The grant whose token is `presented`, compared with every token in
    /// constant time (the time taken tells nothing of any token's bytes).
    pub(crate) fn find(&self, presented: &str) -> Option<Arc<Grant>> {
        let grants = self
            .grants
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut found = None;
        for grant in grants.iter() {
            if grant.token_is(presented) {
                found = Some(grant.clone());
            }
        }
        found
    }

    /// The live grant of scope `id`.
    pub(crate) fn live(&self, id: &str) -> Option<Arc<Grant>> {
        self.grants
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .find(|grant| grant.scope.as_deref() == Some(id) && grant.lapse().is_none())
            .cloned()
    }

    /// Revokes scope `id`: the live grant of that id if there is one (an
    /// expired one issued again is a new generation, left alone), else
    /// every expired one not yet revoked, so their running calls end.
    /// `false` when there was nothing to revoke.
    pub(crate) fn revoke(&self, id: &str) -> bool {
        if let Some(live) = self.live(id) {
            live.revoked.cancel();
            return true;
        }
        let grants = self
            .grants
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut revoked = false;
        for grant in grants.iter() {
            if grant.scope.as_deref() == Some(id) && !grant.revoked.is_cancelled() {
                grant.revoked.cancel();
                revoked = true;
            }
        }
        revoked
    }
}

/// The audit log's scrubber searches records for the live tokens: a
/// lapsed one opens nothing any more.
impl KnownSecrets for Grants {
    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn secrets(&self) -> Vec<String> {
        self.grants
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter(|grant| grant.lapse().is_none())
            .map(|grant| grant.token.clone())
            .collect()
    }
}

/// 32 random bytes, as hex.
pub(super) fn fresh_token() -> io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| io::Error::other(error.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
