//! Listening: the server's private directory, the main listener (the
//! full-access socket, or a TCP port every scope shares), the accept
//! loops, and the connection limit, past which a connection is turned away
//! as busy. Each scope's own socket is `rooms`'.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinHandle;

use super::Shared;
use super::connection::serve_connection;
use super::handshake::{Admits, turn_away_busy};
use super::rooms::{self, Room};
use crate::ipc::endpoint::Endpoint;
use crate::ipc::guard::PeerCredentials;

/// A bound server: where it listens, its private directory and the
/// full-access grant's room in it, and the task accepting connections.
pub(super) struct Listening {
    pub(super) endpoint: Endpoint,
    pub(super) dir: tempfile::TempDir,
    pub(super) main: Room,
    pub(super) accept: JoinHandle<()>,
}

/// Makes the server's private directory under `socket_parent` and the
/// full-access grant's room in it (its token file; without `tcp`, its
/// Unix socket, mode 0600), binds `tcp` if given, and starts accepting
/// connections.
pub(super) async fn listen(
    tcp: Option<SocketAddr>,
    socket_parent: Option<&Path>,
    token: &str,
    shared: &Arc<Shared>,
) -> io::Result<Listening> {
    let dir = private_dir(socket_parent)?;
    let full_access = shared.grants.full_access();
    let main = rooms::make(dir.path(), 0, token, tcp.is_none())?;
    let (endpoint, accept) = match tcp {
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await?;
            let endpoint = Endpoint::Tcp(listener.local_addr()?);
            (
                endpoint,
                tokio::spawn(accept(listener, shared.clone(), Admits::Any)),
            )
        }
        None => {
            let socket = main.socket.clone().expect("a Unix room has a socket");
            let listener = rooms::bind(&socket)?;
            let admits = Admits::Only(full_access);
            let accept = tokio::spawn(accept(listener, shared.clone(), admits));
            (Endpoint::Unix(socket), accept)
        }
    };
    Ok(Listening {
        endpoint,
        dir,
        main,
        accept,
    })
}

/// A fresh directory only this user can enter, created with mode 0700 in
/// one step, with a path short enough that its rooms' sockets fit in
/// `sockaddr_un` (108 bytes).
fn private_dir(parent: Option<&Path>) -> io::Result<tempfile::TempDir> {
    let too_long = |base: &Path| {
        base.as_os_str().len() + "/gangway-XXXXXX".len() + rooms::LONGEST_SOCKET_TAIL >= 108
    };
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

/// A listener whose connections come split into a reading and a writing
/// half, with the peer's credentials where the socket tells them.
pub(super) trait Listener: Send + Sync + 'static {
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

/// Accepts connections, taking the tokens `admits` names, until the
/// server stops.
pub(super) async fn accept<L: Listener>(listener: L, shared: Arc<Shared>, admits: Admits) {
    loop {
        let accepted = tokio::select! {
            () = shared.soft.cancelled() => return,
            accepted = listener.next() => accepted,
        };
        match accepted {
            Ok((reader, writer, peer)) => admit(reader, writer, peer, &admits, &shared),
            Err(_) => accept_failed().await,
        }
    }
}

/// Running out of file descriptors must not spin the accept loop.
async fn accept_failed() {
    tokio::time::sleep(Duration::from_millis(20)).await;
}

/// Serves a connection, or turns it away when the server is full.
fn admit<R, W>(
    reader: R,
    writer: W,
    peer: Option<PeerCredentials>,
    admits: &Admits,
    shared: &Arc<Shared>,
) where
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
            let admits = admits.clone();
            tracker.spawn(async move {
                let hard = shared.hard.clone();
                tokio::select! {
                    () = hard.cancelled() => {}
                    () = serve_connection(reader, writer, peer, &admits, &shared, permit.clone()) => {}
                }
                drop(permit);
            });
        }
        Err(_) => {
            tracker.spawn(turn_away_busy(reader, writer));
        }
    }
}
