//! The accept loop every listener runs (the main one and each scope's),
//! and the limit met there: the listener's room for connections before
//! their hello, past which the next ones wait in the kernel's queue. (The
//! limits on connections that said their hello, each scope's quota and
//! the server's backstop, are met once the hello names the scope.)

use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::OwnedSemaphorePermit;

use super::connection::serve_connection;
use super::handshake::Door;
use super::state::ServerState;
use crate::ipc::authority::guard::PeerCredentials;

/// A listener whose connections come split into a reading and a writing
/// half, with the peer's credentials where the socket tells them.
pub(super) trait Listener: Send + Sync + 'static {
    type Reader: AsyncRead + Unpin + Send + 'static;
    type Writer: AsyncWrite + Unpin + Send + 'static;

    /// The next connection.
    fn next(&self) -> impl Future<Output = io::Result<Accepted<Self>>> + Send;
}

/// How much of a connection's incoming bytes one read takes: the hello and
/// the first call, which a client sends in one write, in one system call
/// (a read as large as this bypasses the buffer, so input chunks are not
/// copied twice).
const READ_BUFFER: usize = 8 * 1024;

impl Listener for tokio::net::UnixListener {
    type Reader = BufReader<tokio::net::unix::OwnedReadHalf>;
    type Writer = tokio::net::unix::OwnedWriteHalf;

    async fn next(&self) -> io::Result<Accepted<Self>> {
        let (stream, _) = self.accept().await?;
        let peer = stream
            .peer_cred()
            .ok()
            .map(|cred| PeerCredentials::new(cred.pid(), cred.uid(), cred.gid()));
        let (reader, writer) = stream.into_split();
        Ok((BufReader::with_capacity(READ_BUFFER, reader), writer, peer))
    }
}

impl Listener for tokio::net::TcpListener {
    type Reader = BufReader<tokio::net::tcp::OwnedReadHalf>;
    type Writer = tokio::net::tcp::OwnedWriteHalf;

    async fn next(&self) -> io::Result<Accepted<Self>> {
        let (stream, _) = self.accept().await?;
        let _ = stream.set_nodelay(true);
        let (reader, writer) = stream.into_split();
        Ok((BufReader::with_capacity(READ_BUFFER, reader), writer, None))
    }
}

/// A connection's two halves and its peer's credentials.
type Accepted<L> = (
    <L as Listener>::Reader,
    <L as Listener>::Writer,
    Option<PeerCredentials>,
);

/// Accepts connections at `door` until the server stops: one at a time
/// while the door has room for one more before its hello; with none,
/// the next ones wait in the kernel's queue (a sandbox flooding its own
/// socket delays only its own connections).
pub(super) async fn accept<L: Listener>(listener: L, shared: Arc<ServerState>, door: Door) {
    loop {
        let waiting = tokio::select! {
            () = shared.soft.cancelled() => return,
            waiting = door.waiting.clone().acquire_owned() => match waiting {
                Ok(waiting) => waiting,
                Err(_) => return,
            },
        };
        let accepted = tokio::select! {
            () = shared.soft.cancelled() => return,
            accepted = listener.next() => accepted,
        };
        match accepted {
            Ok((reader, writer, peer)) => admit(reader, writer, peer, &door, &shared, waiting),
            Err(_) => accept_failed().await,
        }
    }
}

/// Running out of file descriptors must not spin the accept loop.
async fn accept_failed() {
    tokio::time::sleep(Duration::from_millis(20)).await;
}

/// Serves a connection, which holds its room at the door (`waiting`) until
/// its hello is taken.
fn admit<R, W>(
    reader: R,
    writer: W,
    peer: Option<PeerCredentials>,
    door: &Door,
    shared: &Arc<ServerState>,
    waiting: OwnedSemaphorePermit,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let shared = shared.clone();
    let door = door.clone();
    shared.tracker.clone().spawn(async move {
        let hard = shared.hard.clone();
        tokio::select! {
            () = hard.cancelled() => {}
            () = serve_connection(reader, writer, peer, &door, &shared, waiting) => {}
        }
    });
}
