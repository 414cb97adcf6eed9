//! The handshake: a small hello carrying the token, checked in constant
//! time before anything larger is read, answered with a welcome; each
//! listener's door (whose tokens it takes, room for connections before
//! their hello); and the refusals that end a connection before it makes a
//! call (no hello in time, a wrong token or version, too many connections),
//! each given at most a second.

use std::io;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Semaphore;

use super::grants::Grant;
use super::state::ServerState;
use crate::ipc::authority::audit::{AuditOutcome, AuditRecord};
use crate::ipc::authority::guard::{Decision, PeerCredentials};
use crate::ipc::error::kind::ErrorKind;
use crate::ipc::exit;
use crate::ipc::protocol::{self, FrameError, Hello, Response, Welcome, WireError};

/// How long a connection turned away is given to read why.
const REFUSAL_GRACE: Duration = Duration::from_secs(1);

/// What a caller whose token is not taken is told.
const WRONG_TOKEN: &str = "the token is missing or wrong for this socket; check GANGWAY_TOKEN \
     (or GANGWAY_TOKEN_FILE): a scope's token works on its own socket alone";

/// Whose tokens a listener takes.
#[derive(Clone)]
pub(super) enum Admits {
    /// Any grant's: a TCP listener serves every scope.
    Any,
    /// One grant's: each Unix socket belongs to one scope (or to the
    /// full-access grant), so a token works only on its own socket.
    Only(Arc<Grant>),
}

/// A listener's door: whose tokens it takes, and room for the connections
/// still to say their hello, its own (a sandbox flooding its socket fills
/// its own door's room, no other's).
#[derive(Clone)]
pub(super) struct Door {
    pub(super) admits: Admits,
    pub(super) waiting: Arc<Semaphore>,
}

impl Door {
    /// A door taking `admits`, with room for `waiting` connections before
    /// their hello.
    pub(super) fn new(admits: Admits, waiting: usize) -> Door {
        Door {
            admits,
            waiting: Arc::new(Semaphore::new(waiting)),
        }
    }
}

/// Sends one error frame for the connection as a whole and gives up on it,
/// within a second: say why, end our side, then take in (undecoded) what
/// the client sent with its hello (its first call), so that closing does
/// not reset the connection: over TCP a reset can destroy the answer
/// before it is read.
async fn refuse<R, W>(reader: &mut R, writer: &mut W, error: WireError)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let body = protocol::encode(&Response::failure(0, error));
    let _ = tokio::time::timeout(REFUSAL_GRACE, async {
        protocol::write_frame_async(writer, &body).await?;
        writer.shutdown().await?;
        let mut sink = [0u8; 1024];
        let mut taken = 0;
        // A hello and a first call that fits beside it, at most.
        while taken < 2 * (protocol::MAX_HELLO_FRAME + 4) {
            match reader.read(&mut sink).await? {
                0 => break,
                n => taken += n,
            }
        }
        Ok::<_, io::Error>(())
    })
    .await;
}

/// The handshake's first half: a small hello with the token, in time.
/// No frame past the hello's size limit is taken, and nothing past the
/// hello is decoded, before the token checks out (the connection's read
/// buffer may already hold up to 8 KiB of what follows, undecoded). The grant the token carries; a connection refused
/// has been told why.
pub(super) async fn authenticate<R, W>(
    reader: &mut R,
    writer: &mut W,
    peer: Option<PeerCredentials>,
    admits: &Admits,
    shared: &ServerState,
) -> Option<Arc<Grant>>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let hello = match read_hello(reader, shared).await {
        Ok(hello) => hello,
        Err(Some(error)) => {
            refuse(reader, writer, error).await;
            return None;
        }
        Err(None) => return None,
    };
    match take_token(&hello, admits, peer, shared) {
        Ok(grant) => Some(grant),
        Err(error) => {
            refuse(reader, writer, *error).await;
            None
        }
    }
}

/// Refuses a connection whose scope has all the connections it may hold
/// open, saying so.
pub(super) async fn refuse_over_quota<R, W>(reader: &mut R, writer: &mut W, grant: &Grant)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let message = format!(
        "this sandbox has {} connections to the host open, all it may; close one (each client \
         holds one while it runs)",
        grant.connection_quota()
    );
    refuse_busy(reader, writer, &message).await;
}

/// Refuses a connection the host has no room for now, saying `why` (a
/// `busy` error, exit 69).
pub(super) async fn refuse_busy<R, W>(reader: &mut R, writer: &mut W, why: &str)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let error = WireError::server(ErrorKind::Busy, why, exit::UNAVAILABLE);
    refuse(reader, writer, error).await;
}

/// The handshake's second half: the welcome, with the server's limits.
/// Whether it went out in time.
pub(super) async fn welcome<W>(writer: &mut W, shared: &ServerState) -> bool
where
    W: AsyncWrite + Unpin,
{
    let welcome = Welcome {
        v: protocol::VERSION,
        max_frame: shared.max_frame as u64,
        cancel_grace_ms: Some(u64::try_from(shared.cancel_grace.as_millis()).unwrap_or(u64::MAX)),
        idle_ms: Some(u64::try_from(shared.idle_timeout.as_millis()).unwrap_or(u64::MAX)),
    };
    let body = protocol::encode(&welcome);
    matches!(
        tokio::time::timeout(
            shared.io_timeout,
            protocol::write_frame_async(writer, &body)
        )
        .await,
        Ok(Ok(()))
    )
}

/// A hello read in time, and the size of its frame; or the error to turn
/// the connection away with (`None`: it is gone, nothing to say).
async fn read_hello<R>(
    reader: &mut R,
    shared: &ServerState,
) -> Result<(Hello, usize), Option<WireError>>
where
    R: AsyncRead + Unpin,
{
    let auth = |message: &str| WireError::server(ErrorKind::Auth, message, exit::UNAVAILABLE);
    let mismatch =
        |message: String| WireError::server(ErrorKind::Protocol, message, exit::UNAVAILABLE);
    let frame = tokio::time::timeout(
        shared.hello_timeout,
        protocol::read_frame_async(reader, protocol::MAX_HELLO_FRAME),
    )
    .await;
    let body = match frame {
        Ok(Ok(Some(body))) => body,
        Err(_) => return Err(Some(auth("no hello with the token arrived in time"))),
        Ok(Err(FrameError::TooLarge { .. })) => {
            let message = "the first frame must be a small hello carrying the token";
            return Err(Some(auth(message)));
        }
        Ok(Ok(None) | Err(_)) => return Err(None),
    };
    let Ok(hello) = protocol::decode::<Hello>(&body) else {
        let message = "the first frame is not a gangway hello; is this client a different version?";
        return Err(Some(mismatch(message.to_owned())));
    };
    if hello.v != protocol::VERSION {
        return Err(Some(mismatch(protocol::version_mismatch(
            hello.v,
            protocol::VERSION,
        ))));
    }
    Ok((hello, body.len()))
}

/// The grant whose token the hello presents, if this listener takes it
/// and it has not lapsed; else the refusal, recorded (never waited for:
/// anyone who can connect can send these).
fn take_token(
    (hello, frame_len): &(Hello, usize),
    admits: &Admits,
    peer: Option<PeerCredentials>,
    shared: &ServerState,
) -> Result<Arc<Grant>, Box<WireError>> {
    let refused = |scope: Option<&Arc<str>>, error: WireError| {
        if let Some(auditor) = &shared.auditor {
            auditor.try_record(AuditRecord {
                ts: SystemTime::now(),
                scope: scope.map(|scope| scope.to_string()),
                pid: peer.and_then(|peer| peer.pid),
                uid: peer.map(|peer| peer.uid),
                command: None,
                args: None,
                decision: Some(Decision::Deny(error.message.clone())),
                rule: None,
                approval: None,
                outcome: AuditOutcome::Refused,
                exit: Some(error.exit),
                duration: Duration::ZERO,
                bytes_in: *frame_len as u64,
                bytes_out: 0,
            });
        }
        Box::new(error)
    };
    let found = match admits {
        Admits::Any => shared.grants.find(&hello.token),
        Admits::Only(grant) => grant.token_is(&hello.token).then(|| grant.clone()),
    };
    let Some(grant) = found else {
        // On a scope's own socket, the scope is who knocked.
        let socket_scope = match admits {
            Admits::Only(grant) => grant.scope(),
            Admits::Any => None,
        };
        let error = WireError::server(ErrorKind::Auth, WRONG_TOKEN, exit::UNAVAILABLE);
        return Err(refused(socket_scope, error));
    };
    match grant.lapse() {
        Some(lapse) => {
            let error = lapse.error();
            Err(refused(grant.scope(), error))
        }
        None => Ok(grant),
    }
}
