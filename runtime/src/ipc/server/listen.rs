//! Listening: the server's private directory, and the main listener (the
//! full-access socket, or a TCP port every scope shares). Each scope's own
//! socket is `rooms`'; the accept loop both run is `accept`'s.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::task::JoinHandle;

use super::accept::accept;
use super::handshake::{Admits, Door};
use super::rooms::{self, Room};
use super::state::ServerState;
use crate::ipc::endpoint::Endpoint;

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
    shared: &Arc<ServerState>,
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
                tokio::spawn(accept(
                    listener,
                    shared.clone(),
                    Door::new(Admits::Any, shared.max_unauthenticated),
                )),
            )
        }
        None => {
            let socket = main.socket.clone().expect("a Unix room has a socket");
            let listener = rooms::bind(&socket)?;
            let admits = Admits::Only(full_access);
            let door = Door::new(admits, shared.max_unauthenticated);
            let accept = tokio::spawn(accept(listener, shared.clone(), door));
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
