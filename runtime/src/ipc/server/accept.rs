//! The accept loop every listener runs (the main one and each scope's),
//! and the connection limit, past which a connection is turned away as
//! busy.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

use super::Shared;
use super::connection::serve_connection;
use super::handshake::{Admits, turn_away_busy};
use crate::ipc::guard::PeerCredentials;

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
