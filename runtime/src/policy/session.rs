//! "Session" answers: what a person allowed for the rest of a scope's
//! session, kept by the scope's lease (one issued scope, not its id) and
//! forgotten once the lease lapses (revoked, expired, its server stopped).

use std::collections::HashMap;
use std::sync::Mutex;

use super::pin::Covered;
use crate::ipc::{CallInfo, ScopeLease};
use crate::sync::LockUnpoisoned;

/// Which session a call belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum SessionKey {
    /// The scope issued under this lease.
    Lease(u64),
    /// A call with no lease (made with `CallInfo::new`, or over MCP): its
    /// scope id, for as long as the policy lives.
    Scope(Option<String>),
}

/// One session's answers.
struct Session {
    lease: Option<ScopeLease>,
    allowed: Vec<Covered>,
}

/// Every session's answers.
#[derive(Default)]
pub(crate) struct Sessions {
    sessions: Mutex<HashMap<SessionKey, Session>>,
}

fn key_of(call: &CallInfo) -> SessionKey {
    match call.lease() {
        Some(lease) => SessionKey::Lease(lease.id()),
        None => SessionKey::Scope(call.scope().map(str::to_owned)),
    }
}

impl Sessions {
    /// Whether a person allowed what `covered` holds for `call`'s session,
    /// and that session is still live.
    pub(crate) fn allows(&self, call: &CallInfo, covered: &Covered) -> bool {
        let sessions = self.sessions.lock_unpoisoned();
        sessions.get(&key_of(call)).is_some_and(|session| {
            session.lease.as_ref().is_none_or(ScopeLease::is_live)
                && session
                    .allowed
                    .iter()
                    .any(|allowed| allowed.covers(covered))
        })
    }

    /// Allows what `covered` holds for the rest of `call`'s session (and
    /// forgets the sessions that lapsed).
    pub(crate) fn allow(&self, call: &CallInfo, covered: Covered) {
        let mut sessions = self.sessions.lock_unpoisoned();
        sessions.retain(|_, session| session.lease.as_ref().is_none_or(ScopeLease::is_live));
        if call.lease().is_some_and(|lease| !lease.is_live()) {
            return;
        }
        sessions
            .entry(key_of(call))
            .or_insert_with(|| Session {
                lease: call.lease().cloned(),
                allowed: Vec::new(),
            })
            .allowed
            .push(covered);
    }

    /// How many sessions hold answers (lapsed ones not yet forgotten too).
    #[cfg(test)]
    pub(crate) fn live_count(&self) -> usize {
        self.sessions.lock_unpoisoned().len()
    }
}
