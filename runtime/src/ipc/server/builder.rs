//! [`IpcServerBuilder`]: the server's options and limits, checked and put
//! to work by [`start`](IpcServerBuilder::start).

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::auditor::Auditor;
use super::grants::{Grants, fresh_token};
use super::host::IpcServer;
use super::listen::{Listening, listen};
use super::state::ServerState;
use crate::ipc::authority::audit::AuditSink;
use crate::ipc::authority::guard::CallGuard;
use crate::ipc::authority::limits::MAX_TOKEN_LEN;
use crate::ipc::command::router::IpcRouter;
use crate::ipc::protocol;
use crate::sandbox::env::locate_client_bin;

/// The shortest token accepted: a token is the only credential.
const MIN_TOKEN_LEN: usize = 16;
/// The most calls one connection may have in flight.
const MAX_IN_FLIGHT: usize = 65_536;
/// An audit sink a builder holds: taken by the first server started from
/// it (or a clone), since a sink has one owner.
type SharedSink = Arc<Mutex<Option<Box<dyn AuditSink>>>>;

/// Options for an [`IpcServer`]; start it with
/// [`start`](IpcServerBuilder::start).
#[derive(Clone)]
#[must_use]
pub struct IpcServerBuilder {
    max_frame: usize,
    max_connections: usize,
    max_connections_per_scope: usize,
    max_unauthenticated: usize,
    idle_timeout: Duration,
    max_in_flight: usize,
    max_queued_bytes: usize,
    call_timeout: Option<Duration>,
    cancel_grace: Duration,
    hello_timeout: Duration,
    io_timeout: Duration,
    tcp: Option<SocketAddr>,
    allow_non_loopback: bool,
    socket_parent: Option<PathBuf>,
    token: Option<String>,
    client_bin: Option<PathBuf>,
    wrapper_dir: Option<PathBuf>,
    guard: Option<Arc<dyn CallGuard>>,
    audit: Option<SharedSink>,
}

impl fmt::Debug for IpcServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IpcServerBuilder")
            .field("max_frame", &self.max_frame)
            .field("max_connections", &self.max_connections)
            .field("max_connections_per_scope", &self.max_connections_per_scope)
            .field("max_unauthenticated", &self.max_unauthenticated)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_in_flight", &self.max_in_flight)
            .field("call_timeout", &self.call_timeout)
            .field("cancel_grace", &self.cancel_grace)
            .field("tcp", &self.tcp)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("guard", &self.guard.is_some())
            .field("audit", &self.audit.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for IpcServerBuilder {
    fn default() -> Self {
        IpcServerBuilder {
            max_frame: protocol::DEFAULT_MAX_FRAME,
            max_connections: 256,
            max_connections_per_scope: 64,
            max_unauthenticated: 16,
            idle_timeout: Duration::from_secs(600),
            max_in_flight: 32,
            max_queued_bytes: 64 * 1024 * 1024,
            call_timeout: Some(Duration::from_secs(300)),
            cancel_grace: Duration::from_secs(2),
            hello_timeout: Duration::from_secs(5),
            io_timeout: Duration::from_secs(30),
            tcp: None,
            allow_non_loopback: false,
            socket_parent: None,
            token: None,
            client_bin: None,
            wrapper_dir: None,
            guard: None,
            audit: None,
        }
    }
}

/// The builder's setters: each `option(arg: Type) => value;` is a
/// `pub fn option(mut self, arg: Type) -> Self` storing `value` (the
/// argument, clamped or wrapped) in the field of the same name.
macro_rules! setters {
    ($($(#[$doc:meta])* $option:ident($arg:ident: $ty:ty) => $value:expr;)*) => {
        $(
            $(#[$doc])*
            pub fn $option(mut self, $arg: $ty) -> Self {
                self.$option = $value;
                self
            }
        )*
    };
}

impl IpcServerBuilder {
    setters! {
        /// The largest frame read or written, in bytes (16 MiB by default). A
        /// larger request is answered with `frame_too_large`, a larger response
        /// with `response_too_large`.
        max_frame(bytes: usize) => bytes.max(protocol::MAX_HELLO_FRAME);

        /// How many connections that said their hello may be open at once
        /// over every socket (256 by default), a backstop above the limits
        /// each scope has. Past it, each scope still has 4 connections of its
        /// own (so scopes at their quotas together lock no other out), and
        /// any other connection is answered with a `busy` error (exit 69)
        /// and closed. Connections yet to say their hello are bounded by each
        /// socket's
        /// [`max_unauthenticated`](IpcServerBuilder::max_unauthenticated):
        /// the descriptors connections may hold are at most this, plus 4 and
        /// `max_unauthenticated` for each live scope (and the full-access
        /// one).
        max_connections(connections: usize) => connections.clamp(1, Semaphore::MAX_PERMITS);

        /// How many connections one scope (its token: the full-access one
        /// is a scope of its own) may hold open at once (64 by default). One
        /// more waits, after its hello, for one of them to close (at most
        /// the [`hello_timeout`](IpcServerBuilder::hello_timeout), holding
        /// its socket's room for hellos meanwhile), then is answered `busy`
        /// (exit 69) and closed; over TCP, where every scope shares one
        /// port, it is answered at once. A sandbox flooding its own socket
        /// so holds at most this many, and every other scope is served.
        max_connections_per_scope(connections: usize) => connections.clamp(1, Semaphore::MAX_PERMITS);

        /// How many connections one socket (each scope's; over TCP, the one
        /// port every scope shares) takes at once before they have said their
        /// hello (16 by default); the next ones wait in the kernel's queue
        /// until one says it or its
        /// [`hello_timeout`](IpcServerBuilder::hello_timeout) ends it. A
        /// sandbox flooding its own socket with silent connections so delays
        /// its own connections, and no other scope's. Over TCP the one port's
        /// room is every scope's: any process that reaches the port can
        /// delay every caller's connections by filling it (a Unix socket
        /// server gives each scope a socket of its own; prefer it).
        max_unauthenticated(connections: usize) => connections.clamp(1, Semaphore::MAX_PERMITS);

        /// How long an authenticated connection may sit with no call running
        /// and nothing received before it is closed, told why (10 minutes
        /// by default; closed between one and two of these). A client
        /// connects again on its next call.
        idle_timeout(timeout: Duration) => timeout.max(Duration::from_millis(1));

        /// How many calls one connection may have running or waiting to be
        /// written at once (32 by default); past that, the server stops reading
        /// that connection until one is written (at most 65,536).
        max_in_flight(calls: usize) => calls.clamp(1, MAX_IN_FLIGHT);

        /// How many bytes of encoded responses one connection may have queued
        /// for writing (64 MiB by default; at most 4 GiB), for a client slow to
        /// read. Calls finished beyond that wait, each holding its own encoded
        /// response and its in-flight slot, so a connection that stops reading
        /// holds at most this plus `max_in_flight` responses until the I/O
        /// timeout ends it.
        max_queued_bytes(bytes: usize) => bytes.clamp(1, u32::MAX as usize);

        /// How long one call may run (5 minutes by default; `None` for no
        /// limit) unless its command sets its own (`#[ipc(timeout = "...")]`).
        /// A call over it is cancelled and answered with a `timeout` error
        /// (exit 124).
        call_timeout(timeout: Option<Duration>) => timeout;

        /// How long a cancelled call's handler may take to finish once its
        /// [`CallContext`](crate::ipc::CallContext) says it is cancelled (the
        /// caller left, or the call timed out) before it is dropped (2 seconds
        /// by default).
        cancel_grace(grace: Duration) => grace;

        /// How long a new connection has to present its token (5 seconds by
        /// default); a connection that does not is closed.
        hello_timeout(timeout: Duration) => timeout;

        /// How long the rest of a frame may take once it has begun, and how long
        /// writing one response may take (30 seconds by default): a peer that
        /// stalls mid-frame, or stops reading, loses its connection.
        io_timeout(timeout: Duration) => timeout;

        /// Listen on TCP instead of a Unix socket, for containers and VMs that
        /// cannot share a file system with the host. The address must be a
        /// loopback one unless [`allow_non_loopback`](IpcServerBuilder::allow_non_loopback)
        /// says otherwise; the token is required all the same.
        tcp(addr: SocketAddr) => Some(addr);

        /// Let [`tcp`](IpcServerBuilder::tcp) listen beyond this machine (a VM
        /// bridge, say). Anyone who can reach the port and has the token can
        /// call the commands.
        allow_non_loopback(allow: bool) => allow;

        /// Where the server's private directory is created (default:
        /// `$XDG_RUNTIME_DIR`, else the system's temporary directory). It
        /// holds a directory per grant, with its token file and (without
        /// [`tcp`](IpcServerBuilder::tcp)) its socket; a sandbox is shown
        /// only its own.
        socket_parent(dir: impl Into<PathBuf>) => Some(dir.into());

        /// Use this token instead of a fresh random one (16 to 1024 bytes).
        token(token: impl Into<String>) => Some(token.into());

        /// The `gangway` client binary sandboxed processes run (default: from
        /// `GANGWAY_BIN`, else next to this executable, else on `PATH`).
        client_bin(path: impl Into<PathBuf>) => Some(path.into());

        /// The directory of generated wrapper scripts, which
        /// [`SandboxEnv`](crate::ipc::SandboxEnv) puts first on a child's
        /// `PATH`.
        wrapper_dir(dir: impl Into<PathBuf>) => Some(dir.into());
    }

    /// Asks `guard` about every call, after its arguments are bound and
    /// before its handler runs; a [`Decision::Deny`](crate::ipc::Decision::Deny)
    /// is answered as [`IpcError::Denied`](crate::ipc::IpcError::Denied)
    /// (the caller exits 77 with the reason).
    pub fn guard(mut self, guard: impl CallGuard) -> Self {
        self.guard = Some(Arc::new(guard));
        self
    }

    /// Sends an [`AuditRecord`](crate::ipc::AuditRecord) to `sink` for every
    /// call when it ends, and for every connection whose token is refused
    /// at its hello (wrong, expired or revoked; not connections turned away
    /// for being too many, too slow or of another version)
    /// ([`AuditLog::jsonl`](crate::ipc::AuditLog::jsonl),
    /// [`AuditLog::tracing`](crate::ipc::AuditLog::tracing), or a sink of
    /// your own). The sink belongs to the first server started from this
    /// builder or a clone of it, even if that start then fails.
    pub fn audit(mut self, sink: impl AuditSink) -> Self {
        self.audit = Some(Arc::new(Mutex::new(Some(Box::new(sink)))));
        self
    }

    /// Starts serving `router`.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a token under 16 or over 1024 bytes, a non-loopback TCP
    /// address not allowed, a wrapper directory whose path holds `:`, or a
    /// socket parent that cannot hold the socket, or an audit sink another
    /// server (started from a clone of this builder) took; otherwise the
    /// error of creating the directory, binding, reading random bytes, or
    /// starting the audit thread.
    pub async fn start(self, router: IpcRouter) -> io::Result<IpcServer> {
        let invalid = |message: String| io::Error::new(io::ErrorKind::InvalidInput, message);
        let token = match self.token {
            Some(token) if !(MIN_TOKEN_LEN..=MAX_TOKEN_LEN).contains(&token.len()) => {
                return Err(invalid(format!(
                    "a token must be {MIN_TOKEN_LEN} to {MAX_TOKEN_LEN} bytes, not {}; leave it out for a fresh random one",
                    token.len()
                )));
            }
            Some(token) => token,
            None => fresh_token()?,
        };
        if let Some(addr) = self.tcp
            && !addr.ip().is_loopback()
            && !self.allow_non_loopback
        {
            return Err(invalid(format!(
                "{addr} is not a loopback address; anyone who reaches it could try the token. Use \
                 127.0.0.1, or `allow_non_loopback(true)` if that is what you mean"
            )));
        }
        if let Some(dir) = &self.wrapper_dir
            && dir.to_string_lossy().contains(':')
        {
            return Err(invalid(format!(
                "the wrapper directory {} holds `:`, which a PATH entry cannot",
                dir.display()
            )));
        }
        let soft = CancellationToken::new();
        let grants = Arc::new(Grants::new(
            token.clone(),
            self.max_connections_per_scope,
            soft.clone(),
        ));
        let auditor = match &self.audit {
            Some(sink) => {
                let sink = sink
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take()
                    .ok_or_else(|| {
                        invalid(
                            "this builder's audit sink belongs to a server started before; give \
                             each server a sink of its own"
                                .to_owned(),
                        )
                    })?;
                Some(Auditor::start(sink, Some(grants.clone()))?)
            }
            None => None,
        };
        let shared = Arc::new(ServerState {
            router,
            grants,
            guard: self.guard,
            auditor,
            max_frame: self.max_frame,
            max_in_flight: self.max_in_flight,
            max_queued_bytes: self.max_queued_bytes,
            call_timeout: self.call_timeout,
            cancel_grace: self.cancel_grace,
            hello_timeout: self.hello_timeout,
            io_timeout: self.io_timeout,
            connections: Arc::new(Semaphore::new(self.max_connections)),
            max_unauthenticated: self.max_unauthenticated,
            idle_timeout: self.idle_timeout,
            soft: soft.clone(),
            hard: CancellationToken::new(),
            tracker: TaskTracker::new(),
            calls_running: Arc::new(AtomicUsize::new(0)),
        });
        let Listening {
            endpoint,
            dir,
            main,
            accept,
        } = listen(self.tcp, self.socket_parent.as_deref(), &token, &shared).await?;
        Ok(IpcServer {
            endpoint,
            token,
            dir: Some(dir),
            main,
            rooms_opened: AtomicU64::new(0),
            runtime: tokio::runtime::Handle::current(),
            shared,
            accept: Some(accept),
            client_bin: self.client_bin.or_else(locate_client_bin),
            wrapper_dir: self.wrapper_dir,
        })
    }
}

impl IpcServer {
    /// Serves `router` on a Unix socket in a fresh private directory, with a
    /// fresh token and default limits.
    ///
    /// # Errors
    ///
    /// As [`IpcServerBuilder::start`].
    pub async fn start(router: IpcRouter) -> std::io::Result<IpcServer> {
        IpcServer::builder().start(router).await
    }

    /// Options for a server.
    pub fn builder() -> IpcServerBuilder {
        IpcServerBuilder::default()
    }
}
