//! A room per grant: a directory of its own in the server's private
//! directory, holding the grant's token file and, on a Unix socket server,
//! its own socket. A sandbox is shown its room alone, read-only, so it
//! sees no other scope's socket or token and cannot move, replace or plant
//! anything beside its own. A scope's room is served until the scope
//! lapses (revoked or expired) or the server stops, then removed: the
//! listener closed, the socket and the token file gone.
//!
//! Room 0 is the full-access grant's; scopes get 1, 2, ... in the order
//! they are issued.

use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::UnixListener;

use super::accept::accept;
use super::grants::Grant;
use super::handshake::{Admits, Door};
use super::state::ServerState;

/// The longest a socket's path gets past the server's directory: rooms
/// are numbered with at most 8 digits.
pub(super) const LONGEST_SOCKET_TAIL: usize = "/12345678/s".len();

/// The most rooms a server opens over its life.
const MAX_ROOMS: u64 = 99_999_999;

/// One grant's room.
#[derive(Debug, Clone)]
pub(super) struct Room {
    /// The room's directory.
    pub(super) dir: PathBuf,
    /// The file holding the grant's token.
    pub(super) token_file: PathBuf,
    /// The grant's socket, on a Unix socket server.
    pub(super) socket: Option<PathBuf>,
}

/// Makes room `number` in `server_dir`: its directory (mode 0700), the
/// token file (mode 0600), and with `unix`, the path of its socket (for the
/// caller to bind).
pub(super) fn make(server_dir: &Path, number: u64, token: &str, unix: bool) -> io::Result<Room> {
    if number > MAX_ROOMS {
        return Err(io::Error::other(format!(
            "this server has issued {MAX_ROOMS} scopes, all it can; start another"
        )));
    }
    let dir = server_dir.join(number.to_string());
    let in_dir =
        |error: io::Error| io::Error::new(error.kind(), format!("{}: {error}", dir.display()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(in_dir)?;
    let token_file = dir.join("token");
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&token_file)
        .and_then(|mut file| file.write_all(token.as_bytes()));
    if let Err(error) = written {
        // Nothing half made is left behind.
        let _ = std::fs::remove_dir_all(&dir);
        return Err(in_dir(error));
    }
    Ok(Room {
        socket: unix.then(|| dir.join("s")),
        dir,
        token_file,
    })
}

/// A Unix socket listening at `path`, mode 0600 (in a directory no one
/// else may enter anyway).
pub(super) fn bind(path: &Path) -> io::Result<UnixListener> {
    let named =
        |error: io::Error| io::Error::new(error.kind(), format!("{}: {error}", path.display()));
    let listener = UnixListener::bind(path).map_err(named)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(named)?;
    Ok(listener)
}

/// Serves scope `grant`'s `room`: accepts connections on its socket,
/// taking the scope's token alone, until the scope lapses or the server
/// stops; then removes the room. Needs a tokio runtime context (the
/// listener is bound and the task spawned here).
pub(super) fn serve(room: &Room, grant: Arc<Grant>, shared: &Arc<ServerState>) -> io::Result<()> {
    let listener = room.socket.as_deref().map(bind).transpose()?;
    let dir = room.dir.clone();
    let shared = shared.clone();
    let tracker = shared.tracker.clone();
    tracker.spawn(async move {
        let admits = Admits::Only(grant.clone());
        let accepting = async {
            match listener {
                Some(listener) => {
                    accept(
                        listener,
                        shared.clone(),
                        Door::new(admits, shared.max_unauthenticated),
                    )
                    .await
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = shared.soft.cancelled() => {}
            () = grant.lapsed() => {}
            () = accepting => {}
        }
        // The listener is dropped with `accepting`: closed before the
        // socket goes, so no connection is taken on a removed room.
        let _ = std::fs::remove_dir_all(&dir);
    });
    Ok(())
}
