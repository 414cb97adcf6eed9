//! What the accept loops, every connection and every call of a server
//! share: its router, grants, guard, audit queue, limits, and the tokens
//! that stop it.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::auditor::Auditor;
use super::grants::Grants;
use crate::ipc::authority::guard::CallGuard;
use crate::ipc::command::router::IpcRouter;
use crate::tool::Manifest;

/// What the accept loops, every connection and every call share.
pub(super) struct ServerState {
    pub(super) router: IpcRouter,
    /// Shared with the audit thread, which keeps their tokens out of records.
    pub(super) grants: Arc<Grants>,
    pub(super) guard: Option<Arc<dyn CallGuard>>,
    pub(super) auditor: Option<Auditor>,
    pub(super) max_frame: usize,
    pub(super) max_in_flight: usize,
    pub(super) max_queued_bytes: usize,
    pub(super) call_timeout: Option<Duration>,
    pub(super) cancel_grace: Duration,
    pub(super) hello_timeout: Duration,
    pub(super) io_timeout: Duration,
    /// The backstop over every connection past its hello, over every
    /// socket.
    pub(super) connections: Arc<Semaphore>,
    /// How many connections one socket takes before their hello.
    pub(super) max_unauthenticated: usize,
    /// How long an authenticated connection may idle.
    pub(super) idle_timeout: Duration,
    /// Stop accepting and reading new requests; calls in flight go on.
    pub(super) soft: CancellationToken,
    /// Stop everything now: calls, writers, connections.
    pub(super) hard: CancellationToken,
    pub(super) tracker: TaskTracker,
    /// Calls whose response has not been written yet.
    pub(super) calls_running: Arc<AtomicUsize>,
}

/// The manifest of the commands in `allowed` (`None`: all).
pub(super) fn scoped_manifest(
    router: &IpcRouter,
    allowed: Option<&std::collections::BTreeSet<String>>,
) -> Manifest {
    Manifest::new(
        router
            .commands()
            .filter(|command| allowed.is_none_or(|allowed| allowed.contains(&command.name)))
            .map(|command| command.schema.clone())
            .collect(),
    )
}
