//! The handshake: a small hello carrying the token, checked in constant
//! time before anything larger is read, answered with a welcome; and the
//! refusals that end a connection before it makes a call (no hello in time,
//! a wrong token or version, too many connections).

use std::io;
use std::time::Duration;

use subtle::ConstantTimeEq;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::Shared;
use crate::ipc::exit;
use crate::ipc::kind::ErrorKind;
use crate::ipc::protocol::{self, FrameError, Hello, Response, Welcome, WireError};

/// How long a connection turned away as busy is given to read why.
const BUSY_GRACE: Duration = Duration::from_secs(1);

/// Turns away a connection over the server's limit: a `busy` error, then
/// the end of it.
pub(super) async fn turn_away_busy<R, W>(mut reader: R, mut writer: W)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let error = WireError::server(
        ErrorKind::Busy,
        "the host has too many connections open; try again",
        exit::UNAVAILABLE,
    );
    let body = protocol::encode(&Response::failure(0, error));
    // A second at most: say why, end our side, and take in the
    // hello so closing does not reset the connection (over TCP
    // a reset can destroy the answer before it is read).
    let _ = tokio::time::timeout(BUSY_GRACE, async {
        protocol::write_frame_async(&mut writer, &body).await?;
        writer.shutdown().await?;
        let mut sink = [0u8; 1024];
        let mut taken = 0;
        while taken < protocol::MAX_HELLO_FRAME {
            match reader.read(&mut sink).await? {
                0 => break,
                n => taken += n,
            }
        }
        Ok::<_, io::Error>(())
    })
    .await;
}

/// Sends one error frame and gives up on the connection.
async fn refuse<W: AsyncWrite + Unpin>(
    writer: &mut W,
    timeout: Duration,
    id: u64,
    error: WireError,
) {
    let body = protocol::encode(&Response::failure(id, error));
    let _ = tokio::time::timeout(timeout, protocol::write_frame_async(writer, &body)).await;
}

/// The handshake: a small hello with the token, in time. Nothing larger is
/// read, and nothing is decoded past the hello, before the token checks out.
pub(super) async fn greet<R, W>(reader: &mut R, writer: &mut W, shared: &Shared) -> bool
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let io = shared.io_timeout;
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
        Err(_) => {
            refuse(
                writer,
                io,
                0,
                auth("no hello with the token arrived in time"),
            )
            .await;
            return false;
        }
        Ok(Err(FrameError::TooLarge { .. })) => {
            let message = "the first frame must be a small hello carrying the token";
            refuse(writer, io, 0, auth(message)).await;
            return false;
        }
        Ok(Ok(None) | Err(_)) => return false,
    };
    let Ok(hello) = protocol::decode::<Hello>(&body) else {
        let message = "the first frame is not a gangway hello; is this client a different version?";
        refuse(writer, io, 0, mismatch(message.to_owned())).await;
        return false;
    };
    if hello.v != protocol::VERSION {
        let message = format!(
            "protocol version {} is not supported; this host speaks version {}",
            hello.v,
            protocol::VERSION
        );
        refuse(writer, io, 0, mismatch(message)).await;
        return false;
    }
    if !bool::from(hello.token.as_bytes().ct_eq(shared.token.as_bytes())) {
        refuse(
            writer,
            io,
            0,
            auth("the token is missing or wrong; check GANGWAY_TOKEN"),
        )
        .await;
        return false;
    }
    let welcome = Welcome {
        v: protocol::VERSION,
        max_frame: shared.max_frame as u64,
    };
    let body = protocol::encode(&welcome);
    matches!(
        tokio::time::timeout(io, protocol::write_frame_async(writer, &body)).await,
        Ok(Ok(()))
    )
}
