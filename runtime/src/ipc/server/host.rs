//! The running server a host program holds: [`IpcServer`], the scopes it
//! issues and revokes, the environment it gives each sandbox, and its
//! shutdown.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::auditor::Auditor;
use super::grants;
use super::rooms;
use super::state::{ServerState, scoped_manifest};
use crate::ipc::authority::scope::{Scope, ScopeError, is_valid_id};
use crate::ipc::endpoint::Endpoint;
use crate::sandbox::env::SandboxEnv;
use crate::tool::{Manifest, closest};

/// An [`IpcRouter`](crate::ipc::IpcRouter) served to sandboxed processes.
///
/// ```
/// use gangway::IpcCommand;
/// use gangway::ipc::{IpcClient, IpcRouter, IpcServer};
///
/// /// Add two numbers.
/// #[derive(Clone, serde::Serialize, IpcCommand)]
/// #[ipc(response = i64)]
/// struct Add { a: i64, b: i64 }
/// impl Add { async fn handle(&mut self) -> i64 { self.a + self.b } }
///
/// # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
/// let server = IpcServer::start(IpcRouter::new().register(Add { a: 0, b: 0 })).await.unwrap();
/// let env = server.sandbox_env();
/// let sum = tokio::task::spawn_blocking(move || {
///     let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
///     client.call(&Add { a: 2, b: 3 }).unwrap()
/// })
/// .await
/// .unwrap();
/// assert_eq!(sum, 5);
/// server.shutdown(std::time::Duration::from_secs(1)).await;
/// # });
/// ```
pub struct IpcServer {
    pub(super) endpoint: Endpoint,
    pub(super) token: String,
    /// The private directory holding every grant's room; `None` once
    /// shut down.
    pub(super) dir: Option<tempfile::TempDir>,
    /// The full-access grant's room.
    pub(super) main: rooms::Room,
    /// Rooms opened for scopes so far.
    pub(super) rooms_opened: AtomicU64,
    /// The runtime the server runs on, where scopes' sockets are served.
    pub(super) runtime: tokio::runtime::Handle,
    pub(super) shared: Arc<ServerState>,
    pub(super) accept: Option<tokio::task::JoinHandle<()>>,
    pub(super) client_bin: Option<PathBuf>,
    pub(super) wrapper_dir: Option<PathBuf>,
}

impl fmt::Debug for IpcServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IpcServer")
            .field("endpoint", &self.endpoint)
            .field("commands", &self.shared.router.commands().len())
            .finish_non_exhaustive()
    }
}

/// How [`IpcServer::shutdown`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShutdownReport {
    /// Calls still running (or unwritten) at the deadline, cancelled.
    pub abandoned_calls: usize,
    /// Audit records the sink failed to keep over the server's life (as
    /// [`IpcServer::audit_errors`] counted them).
    pub audit_errors: u64,
    /// Audit records the sink had not written by the deadline (it goes on
    /// with them as long as the process lives).
    pub audit_unwritten: u64,
}

impl IpcServer {
    /// Where clients connect.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The full-access token: every command, never expiring.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The directory holding the full-access socket and the full-access
    /// token's file, if the server listens on a Unix socket. Binding it
    /// into a sandbox gives that sandbox every command: bind what its own
    /// environment's [`SandboxEnv::sandbox_paths`] lists instead (each
    /// scope has a directory of its own).
    #[deprecated(
        note = "it holds the full-access token's file; bind `SandboxEnv::sandbox_paths()` of \
                the sandbox's own environment (each scope has a socket directory of its own)"
    )]
    pub fn socket_dir(&self) -> Option<&Path> {
        self.main.socket.as_ref().map(|_| self.main.dir.as_path())
    }

    /// What a child process needs to reach this server with full access
    /// (every command, no expiry). For a sandbox that should call less, see
    /// [`scope`](IpcServer::scope).
    pub fn sandbox_env(&self) -> SandboxEnv {
        self.env_for(self.token.clone(), &self.main)
    }

    /// The environment of the grant holding `token`, whose room is `room`.
    fn env_for(&self, token: String, room: &rooms::Room) -> SandboxEnv {
        let endpoint = match &room.socket {
            Some(socket) => Endpoint::Unix(socket.clone()),
            None => self.endpoint.clone(),
        };
        SandboxEnv::new(endpoint, token)
            .with_token_file(Some(room.token_file.clone()))
            .with_server_dir(self.dir.as_ref().map(|dir| dir.path().to_path_buf()))
            .with_client_bin(self.client_bin.clone())
            .with_wrapper_dir(self.wrapper_dir.clone())
    }

    /// Issues `scope`: a fresh token that may call only the scope's
    /// commands, until it expires or is [revoked](IpcServer::revoke),
    /// carried by the environment returned, and (on a Unix socket server) a
    /// socket of its own, in a directory of its own that holds only it and
    /// the token's file: the only socket that takes this token, and the
    /// only one the scope's sandbox sees. It goes when the scope lapses. A
    /// call outside the scope is
    /// refused before its arguments are read (`IpcError::Denied`, exit 77:
    /// `search: not available in this sandbox`). The environment names the
    /// server's wrapper directory, whose wrappers may be for every command:
    /// give the sandbox its own with
    /// [`SandboxEnv::with_wrapper_dir`] and the scope's
    /// [`manifest_for`](IpcServer::manifest_for).
    ///
    /// # Panics
    ///
    /// With the reason, where [`try_scope`](IpcServer::try_scope) returns
    /// an error: an invalid or live id, a command the server does not serve.
    #[track_caller]
    pub fn scope(&self, scope: Scope) -> SandboxEnv {
        match self.try_scope(scope) {
            Ok(env) => env,
            Err(error) => panic!("IpcServer::scope: {error}"),
        }
    }

    /// Issues `scope`, as [`scope`](IpcServer::scope), or says why not. (A
    /// [`revoke`](IpcServer::revoke) of the same id racing with it may lapse
    /// the scope as soon as it is issued: its socket is then removed at once,
    /// as for any revoked scope.)
    ///
    /// # Errors
    ///
    /// [`ScopeError::InvalidId`], [`ScopeError::Duplicate`] (a live scope has
    /// the id), [`ScopeError::UnknownCommand`] (with the nearest command
    /// served), [`ScopeError::Token`], [`ScopeError::Socket`] (its socket or
    /// token file could not be made).
    pub fn try_scope(&self, scope: Scope) -> Result<SandboxEnv, ScopeError> {
        let id = scope.id().to_owned();
        if !is_valid_id(&id) {
            return Err(ScopeError::InvalidId { id });
        }
        if let Some(commands) = scope.allowed_commands() {
            let router = &self.shared.router;
            for command in commands {
                if !router.contains(command) {
                    return Err(ScopeError::UnknownCommand {
                        command: command.to_owned(),
                        suggestion: closest(command, router.commands().map(|c| c.name.as_str()))
                            .map(str::to_owned),
                        id,
                    });
                }
            }
        }
        let token = grants::fresh_token().map_err(|error| ScopeError::Token(error.to_string()))?;
        let Some(grant) = self.shared.grants.issue(scope, token.clone()) else {
            return Err(ScopeError::Duplicate { id });
        };
        match self.open_room(&token, grant.clone()) {
            Ok(room) => Ok(self.env_for(token, &room)),
            Err(error) => {
                self.shared.grants.withdraw(&grant);
                Err(ScopeError::Socket {
                    id,
                    message: error.to_string(),
                })
            }
        }
    }

    /// Makes and serves the room of scope `grant`.
    fn open_room(&self, token: &str, grant: Arc<grants::Grant>) -> std::io::Result<rooms::Room> {
        let Some(dir) = &self.dir else {
            return Err(std::io::Error::other("the server is shut down"));
        };
        let number = self.rooms_opened.fetch_add(1, Ordering::Relaxed) + 1;
        let room = rooms::make(dir.path(), number, token, self.main.socket.is_some())?;
        // Binding and spawning need the server's runtime, which the
        // caller may not be running on.
        let _entered = self.runtime.enter();
        if let Err(error) = rooms::serve(&room, grant, &self.shared) {
            let _ = std::fs::remove_dir_all(&room.dir);
            return Err(error);
        }
        Ok(room)
    }

    /// Revokes scope `id` (expired or not): its socket stops accepting
    /// connections and is removed with its token file, its token is refused
    /// from now on, its open connections are closed (each told why), and their
    /// running calls are cancelled
    /// ([`CancelReason::Revoked`](crate::ipc::CancelReason::Revoked); the
    /// caller exits 77). `false` when no scope has the id, or it was revoked
    /// already. The full-access token cannot be revoked: stop the server.
    pub fn revoke(&self, id: &str) -> bool {
        self.shared.grants.revoke(id)
    }

    /// The manifest of the commands scope `id` may call (what
    /// `gangway::wrappers::write_wrappers` writes wrappers for, and what
    /// `gangway list` shows inside its sandbox); `None` when no live scope
    /// has the id.
    pub fn manifest_for(&self, id: &str) -> Option<Manifest> {
        let grant = self.shared.grants.live(id)?;
        Some(scoped_manifest(&self.shared.router, grant.commands()))
    }

    /// How many audit records the sink failed to keep (each failure is also
    /// reported through `tracing`, target `gangway::audit`); 0 without an
    /// audit sink.
    pub fn audit_errors(&self) -> u64 {
        self.shared.auditor.as_ref().map_or(0, Auditor::lost)
    }

    /// Stops accepting and reading requests, lets calls in flight finish and
    /// their responses go out until `deadline`, then cancels whatever is
    /// left and removes every socket and token file with the server's
    /// private directory. With an audit sink,
    /// then waits (`deadline` again, at least a second) for every record to
    /// be written; the report says how many were lost or not yet written.
    pub async fn shutdown(mut self, deadline: Duration) -> ShutdownReport {
        self.shared.soft.cancel();
        if let Some(accept) = self.accept.take() {
            let _ = accept.await;
        }
        self.shared.tracker.close();
        let finished = tokio::time::timeout(deadline, self.shared.tracker.wait())
            .await
            .is_ok();
        let abandoned_calls = if finished {
            0
        } else {
            self.shared.calls_running.load(Ordering::SeqCst)
        };
        self.shared.hard.cancel();
        // Cancelled tasks end at their next await; give them a moment to.
        let _ = tokio::time::timeout(Duration::from_secs(1), self.shared.tracker.wait()).await;
        // Every call has its record queued: see them written.
        let audit_unwritten = match &self.shared.auditor {
            Some(auditor) => auditor.flush(deadline.max(Duration::from_secs(1))).await,
            None => 0,
        };
        if let Some(dir) = self.dir.take() {
            let _ = dir.close();
        }
        ShutdownReport {
            abandoned_calls,
            audit_errors: self.audit_errors(),
            audit_unwritten,
        }
    }
}

impl Drop for IpcServer {
    fn drop(&mut self) {
        self.shared.soft.cancel();
        self.shared.hard.cancel();
        if let Some(accept) = self.accept.take() {
            accept.abort();
        }
        // The private directory goes with its `TempDir`.
    }
}
