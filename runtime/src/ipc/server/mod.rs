//! The IPC server: an [`IpcRouter`] served on a Unix socket in a private
//! directory (or on TCP loopback for containers and VMs), every connection
//! authenticated by a random token before anything larger than a few KiB is
//! read, every stage bounded in time and memory.
//!
//! Here, the public [`IpcServer`]; then, in the order a connection meets
//! them:
//! - `builder`: [`IpcServerBuilder`], its options and limits, and `start`;
//! - `listen`: the private socket directory, the accept loops, and the
//!   connection limit;
//! - `handshake`: the hello and the welcome, the token check, and turning a
//!   connection away;
//! - `connection`: one connection's pipeline, a reader and a writer task,
//!   and the limits on calls and bytes in flight;
//! - `outbox`: the one writer per connection, answers and output in order;
//! - `call`: running one call, within its time limit, and its answer;
//! - `call_io`: a call's output, progress and streamed input.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::endpoint::Endpoint;
use super::env::SandboxEnv;
use super::router::IpcRouter;

mod builder;
mod call;
mod call_io;
mod connection;
mod handshake;
mod listen;
mod outbox;

pub(crate) use call_io::{CallIo, INPUT_WINDOW};

pub use builder::IpcServerBuilder;

/// An [`IpcRouter`] served to sandboxed processes.
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
    endpoint: Endpoint,
    token: String,
    socket_dir: Option<tempfile::TempDir>,
    shared: Arc<Shared>,
    accept: Option<tokio::task::JoinHandle<()>>,
    client_bin: Option<PathBuf>,
    wrapper_dir: Option<PathBuf>,
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
}

/// What the accept loops, every connection and every call share.
struct Shared {
    router: IpcRouter,
    token: String,
    max_frame: usize,
    max_in_flight: usize,
    max_queued_bytes: usize,
    call_timeout: Option<Duration>,
    cancel_grace: Duration,
    hello_timeout: Duration,
    io_timeout: Duration,
    connections: Arc<Semaphore>,
    /// Stop accepting and reading new requests; calls in flight go on.
    soft: CancellationToken,
    /// Stop everything now: calls, writers, connections.
    hard: CancellationToken,
    tracker: TaskTracker,
    /// Calls whose response has not been written yet.
    calls_running: Arc<AtomicUsize>,
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

    /// Where clients connect.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The token clients present.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The private directory holding the Unix socket (bind it into a
    /// sandbox), if the server listens on one.
    pub fn socket_dir(&self) -> Option<&Path> {
        self.socket_dir.as_ref().map(tempfile::TempDir::path)
    }

    /// What a child process needs to reach this server.
    pub fn sandbox_env(&self) -> SandboxEnv {
        SandboxEnv::new(self.endpoint.clone(), self.token.clone())
            .with_client_bin(self.client_bin.clone())
            .with_wrapper_dir(self.wrapper_dir.clone())
    }

    /// Stops accepting and reading requests, lets calls in flight finish and
    /// their responses go out until `deadline`, then cancels whatever is
    /// left and removes the socket and its directory.
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
        if let Some(dir) = self.socket_dir.take() {
            let _ = dir.close();
        }
        ShutdownReport { abandoned_calls }
    }
}

impl Drop for IpcServer {
    fn drop(&mut self) {
        self.shared.soft.cancel();
        self.shared.hard.cancel();
        if let Some(accept) = self.accept.take() {
            accept.abort();
        }
        // The socket directory goes with its `TempDir`.
    }
}
