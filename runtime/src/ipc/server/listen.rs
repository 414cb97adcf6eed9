//! Listening: the private directory that holds the Unix socket (or a TCP
//! listener), the accept loops, and the connection limit, past which a
//! connection is turned away as busy.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinHandle;

use super::Shared;
use super::connection::serve_connection;
use super::handshake::turn_away_busy;
use crate::ipc::endpoint::Endpoint;
use crate::ipc::guard::PeerCredentials;

/// A bound server: where it listens, and the task accepting connections.
pub(super) struct Listening {
    pub(super) endpoint: Endpoint,
    /// The private directory of the Unix socket; `None` on TCP.
    pub(super) socket_dir: Option<tempfile::TempDir>,
    pub(super) accept: JoinHandle<()>,
}

/// Binds `tcp`, or else a Unix socket (mode 0600) in a fresh private
/// directory under `socket_parent`, and starts accepting connections.
pub(super) async fn listen(
    tcp: Option<SocketAddr>,
    socket_parent: Option<&Path>,
    shared: &Arc<Shared>,
) -> io::Result<Listening> {
    Ok(match tcp {
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            let endpoint = Endpoint::Tcp(listener.local_addr()?);
            let accept = tokio::spawn(accept(listener, shared.clone()));
            Listening {
                endpoint,
                socket_dir: None,
                accept,
            }
        }
        None => {
            let dir = private_dir(socket_parent)?;
            let path = dir.path().join("s");
            let listener = tokio::net::UnixListener::bind(&path)?;
            set_mode(&path, 0o600)?;
            let accept = tokio::spawn(accept(listener, shared.clone()));
            Listening {
                endpoint: Endpoint::Unix(path),
                socket_dir: Some(dir),
                accept,
            }
        }
    })
}

/// A fresh directory only this user can enter, created with mode 0700 in
/// one step, with a path short enough that its socket fits in
/// `sockaddr_un` (108 bytes).
fn private_dir(parent: Option<&Path>) -> io::Result<tempfile::TempDir> {
    let too_long = |base: &Path| base.as_os_str().len() + "/gangway-XXXXXX/s".len() >= 100;
    let create = |base: &Path| {
        tempfile::Builder::new()
            .prefix("gangway-")
            .rand_bytes(6)
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(base)
    };
    use std::os::unix::fs::PermissionsExt;
    if let Some(parent) = parent {
        if too_long(parent) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is too long a path for a Unix socket (a socket path must stay under 108 bytes)",
                    parent.display()
                ),
            ));
        }
        return create(parent).map_err(|error| {
            io::Error::new(
                error.kind(),
                format!(
                    "cannot create the socket directory in {}: {error}",
                    parent.display()
                ),
            )
        });
    }
    let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
    let candidates = runtime_dir
        .filter(|d| d.is_dir())
        .into_iter()
        .chain([std::env::temp_dir(), PathBuf::from("/tmp")]);
    let mut last_error = None;
    for base in candidates.filter(|base| !too_long(base)) {
        match create(&base) {
            Ok(dir) => return Ok(dir),
            Err(error) => last_error = Some(error),
        }
    }
    Err(last_error.unwrap_or_else(|| io::Error::other("no directory can hold the socket")))
}

fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// A listener whose connections come split into a reading and a writing
/// half, with the peer's credentials where the socket tells them.
trait Listener: Send + Sync + 'static {
    type Reader: AsyncRead + Unpin + Send + 'static;
    type Writer: AsyncWrite + Unpin + Send + 'static;

    /// The next connection.
    fn next(&self) -> impl Future<Output = io::Result<Accepted<Self>>> + Send;
}

impl Listener for tokio::net::UnixListener {
    type Reader = tokio::net::unix::OwnedReadHalf;
    type Writer = tokio::net::unix::OwnedWriteHalf;

    async fn next(&self) -> io::Result<Accepted<Self>> {
        let (stream, _) = self.accept().await?;
        let peer = stream
            .peer_cred()
            .ok()
            .map(|cred| PeerCredentials::new(cred.pid(), cred.uid(), cred.gid()));
        let (reader, writer) = stream.into_split();
        Ok((reader, writer, peer))
    }
}

impl Listener for tokio::net::TcpListener {
    type Reader = tokio::net::tcp::OwnedReadHalf;
    type Writer = tokio::net::tcp::OwnedWriteHalf;

    async fn next(&self) -> io::Result<Accepted<Self>> {
        let (stream, _) = self.accept().await?;
        let _ = stream.set_nodelay(true);
        let (reader, writer) = stream.into_split();
        Ok((reader, writer, None))
    }
}

/// A connection's two halves and its peer's credentials.
type Accepted<L> = (
    <L as Listener>::Reader,
    <L as Listener>::Writer,
    Option<PeerCredentials>,
);

/// Accepts connections until the server stops.
async fn accept<L: Listener>(listener: L, shared: Arc<Shared>) {
    loop {
        let accepted = tokio::select! {
            () = shared.soft.cancelled() => return,
            accepted = listener.next() => accepted,
        };
        match accepted {
            Ok((reader, writer, peer)) => admit(reader, writer, peer, &shared),
            Err(_) => accept_failed().await,
        }
    }
}

/// Running out of file descriptors must not spin the accept loop.
async fn accept_failed() {
    tokio::time::sleep(Duration::from_millis(20)).await;
}

/// Serves a connection, or turns it away when the server is full.
fn admit<R, W>(reader: R, writer: W, peer: Option<PeerCredentials>, shared: &Arc<Shared>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let shared = shared.clone();
    let tracker = shared.tracker.clone();
    match shared.connections.clone().try_acquire_owned() {
        Ok(permit) => {
            // Held by the connection and by each of its calls, so a call
            // finishing its cancel grace after its caller left still counts
            // against the connection limit.
            let permit = Arc::new(permit);
            tracker.spawn(async move {
                let hard = shared.hard.clone();
                tokio::select! {
                    () = hard.cancelled() => {}
                    () = serve_connection(reader, writer, peer, &shared, permit.clone()) => {}
                }
                drop(permit);
            });
        }
        Err(_) => {
            tracker.spawn(turn_away_busy(reader, writer));
        }
    }
}
