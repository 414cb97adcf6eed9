//! One connection's pipeline, once the handshake is done: a reader task
//! that takes requests in (and notices the peer leaving), a task per call,
//! and one writer that sends the answers whole, in the order they finish.
//! Calls in flight and bytes queued for writing are bounded per connection.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::Shared;
use super::call::answer;
use super::handshake::greet;
use crate::ipc::context::{CallContext, CancelReason};
use crate::ipc::exit;
use crate::ipc::kind::ErrorKind;
use crate::ipc::protocol::{self, FrameError, Request, Response, WireError};

/// A response on its way out, with what it holds until written (nothing,
/// for an error about the connection as a whole).
struct Outgoing {
    body: Vec<u8>,
    _held: Option<Held>,
}

/// What a call's answer holds until it is written, each released when it
/// is.
struct Held {
    /// Its bytes of the connection's queue budget (`max_queued_bytes`).
    _queued: OwnedSemaphorePermit,
    /// Its slot among the connection's calls in flight (`max_in_flight`).
    _slot: OwnedSemaphorePermit,
    /// Its place in the server's count of running calls.
    _running: RunningCall,
}

/// Counts a call as running until its response is written (or dropped).
struct RunningCall(Arc<AtomicUsize>);

impl RunningCall {
    fn start(counter: &Arc<AtomicUsize>) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        RunningCall(counter.clone())
    }
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Greets a connection, then serves its calls until it ends or the server
/// stops.
pub(super) async fn serve_connection<R, W>(
    mut reader: R,
    mut writer: W,
    shared: &Arc<Shared>,
    admitted: Arc<OwnedSemaphorePermit>,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    if !greet(&mut reader, &mut writer, shared).await {
        return;
    }
    // A hello that finished as shutdown began gets no calls.
    if shared.soft.is_cancelled() {
        return;
    }
    // One writer per connection, fed by every call on it, so responses go
    // out whole.
    let connection = shared.hard.child_token();
    let (outbox, outgoing) = mpsc::channel::<Outgoing>(shared.max_in_flight);
    let write_task = shared.tracker.spawn(write_answers(
        writer,
        outgoing,
        connection.clone(),
        shared.io_timeout,
    ));
    let (requests, mut incoming) = mpsc::channel::<Request>(1);
    shared.tracker.spawn(read_requests(
        reader,
        requests,
        outbox.clone(),
        shared.clone(),
        connection.clone(),
    ));
    let slots = Arc::new(Semaphore::new(shared.max_in_flight));
    let bytes = Arc::new(Semaphore::new(shared.max_queued_bytes));
    loop {
        let request = tokio::select! {
            biased;
            () = shared.soft.cancelled() => break,
            () = connection.cancelled() => break,
            request = incoming.recv() => request,
        };
        // The reader is done: the peer left, or was refused.
        let Some(request) = request else { break };
        let slot = tokio::select! {
            biased;
            () = shared.soft.cancelled() => break,
            () = connection.cancelled() => break,
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
        };
        shared.tracker.spawn(run_call(
            shared.clone(),
            request,
            slot,
            bytes.clone(),
            outbox.clone(),
            connection.clone(),
            admitted.clone(),
        ));
    }
    drop(outbox);
    let _ = write_task.await;
}

/// Reads a connection's requests and hands them on, one at a time. While
/// the calls are at their in-flight limit it reads one request ahead and
/// then only watches for the peer hanging up, which cancels the calls: so a
/// peer that leaves is noticed unless it left two or more requests unread,
/// and then when the first answer fails to reach it.
async fn read_requests<R>(
    mut reader: R,
    requests: mpsc::Sender<Request>,
    outbox: mpsc::Sender<Outgoing>,
    shared: Arc<Shared>,
    connection: CancellationToken,
) where
    R: AsyncRead + Unpin,
{
    // The first byte of the next frame, when it came while waiting.
    let mut early = None;
    loop {
        let next = tokio::select! {
            biased;
            () = shared.soft.cancelled() => return,
            () = connection.cancelled() => return,
            next = next_request(&mut reader, early.take(), &outbox, &shared) => next,
        };
        let request = match next {
            Next::Request(request) => request,
            // Whoever would read the answers is gone: stop their calls.
            Next::Closed => {
                connection.cancel();
                return;
            }
            // The refusal is queued; the writer sends it, then ends.
            Next::Refused => return,
        };
        let room = loop {
            let mut byte = [0u8; 1];
            tokio::select! {
                biased;
                () = shared.soft.cancelled() => return,
                () = connection.cancelled() => return,
                room = requests.reserve() => match room {
                    Ok(room) => break room,
                    Err(_) => return,
                },
                read = reader.read(&mut byte), if early.is_none() => match read {
                    Ok(1) => early = Some(byte[0]),
                    _ => {
                        connection.cancel();
                        return;
                    }
                },
            }
        };
        room.send(request);
    }
}

/// Runs one call and queues its answer, holding its slot until written.
async fn run_call(
    shared: Arc<Shared>,
    request: Request,
    slot: OwnedSemaphorePermit,
    bytes: Arc<Semaphore>,
    outbox: mpsc::Sender<Outgoing>,
    stop: CancellationToken,
    _admitted: Arc<OwnedSemaphorePermit>,
) {
    let running = RunningCall::start(&shared.calls_running);
    let context = CallContext::for_call();
    let call = answer(&shared, request, context.clone());
    tokio::pin!(call);
    let body = tokio::select! {
        biased;
        () = stop.cancelled() => {
            // The caller left (or the server stops now): say so to the
            // handler, and give it the grace to finish, unless the server
            // is stopping everything.
            if !shared.hard.is_cancelled() {
                context.cancel(CancelReason::CallerGone);
                tokio::select! {
                    biased;
                    () = shared.hard.cancelled() => {}
                    _ = tokio::time::timeout(shared.cancel_grace, &mut call) => {}
                }
            }
            // The server stopped (now, or during the grace): dropped at once.
            context.cancel(CancelReason::Shutdown);
            return;
        }
        body = &mut call => body,
    };
    // `max_queued_bytes` fits in a u32 (the builder clamps it).
    let wanted = u32::try_from(body.len().clamp(1, shared.max_queued_bytes)).unwrap_or(u32::MAX);
    let queued = tokio::select! {
        biased;
        () = stop.cancelled() => return,
        permit = bytes.acquire_many_owned(wanted) => permit,
    };
    let Ok(queued) = queued else { return };
    let held = Held {
        _queued: queued,
        _slot: slot,
        _running: running,
    };
    let _ = outbox
        .send(Outgoing {
            body,
            _held: Some(held),
        })
        .await;
}

/// Writes a connection's answers in turn. A peer that stops reading loses
/// the connection after the I/O timeout, which cancels its calls.
async fn write_answers<W>(
    mut writer: W,
    mut outgoing: mpsc::Receiver<Outgoing>,
    stop: CancellationToken,
    io: Duration,
) where
    W: AsyncWrite + Unpin,
{
    loop {
        let frame = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            frame = outgoing.recv() => frame,
        };
        // Every sender gone: all answers are out.
        let Some(frame) = frame else { return };
        let written = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            written = tokio::time::timeout(io, protocol::write_frame_async(&mut writer, &frame.body)) => written,
        };
        if !matches!(written, Ok(Ok(()))) {
            stop.cancel();
            return;
        }
    }
}

/// What came in on a connection.
enum Next {
    Request(Request),
    /// The peer closed the connection (or its sending half), or it broke.
    Closed,
    /// The peer sent something unacceptable; an error for it is queued.
    Refused,
}

/// Reads the next request, whose first byte may have come already.
async fn next_request<R>(
    reader: &mut R,
    early: Option<u8>,
    outbox: &mpsc::Sender<Outgoing>,
    shared: &Shared,
) -> Next
where
    R: AsyncRead + Unpin,
{
    // An authenticated client may stay idle between requests; once a frame
    // begins, the rest of it must come in time.
    let mut head = [0u8; 4];
    match early {
        Some(byte) => head[0] = byte,
        None => {
            if !matches!(reader.read(&mut head[..1]).await, Ok(1)) {
                return Next::Closed;
            }
        }
    }
    let body = tokio::time::timeout(shared.io_timeout, async {
        reader
            .read_exact(&mut head[1..])
            .await
            .map_err(FrameError::Io)?;
        protocol::read_body_async(reader, head, shared.max_frame).await
    })
    .await;
    let error = match body {
        Ok(Ok(body)) => match protocol::decode::<Request>(&body) {
            Ok(request) if request.id != 0 => return Next::Request(request),
            Ok(_) => WireError::server(
                ErrorKind::Protocol,
                "request ids start at 1",
                exit::UNAVAILABLE,
            ),
            Err(error) => WireError::server(
                ErrorKind::Protocol,
                format!("the request is not a gangway request: {error}"),
                exit::UNAVAILABLE,
            ),
        },
        Ok(Err(too_large @ FrameError::TooLarge { len, .. })) => {
            // Tell the peer, then take in (and drop) what it is still
            // sending, so it finishes writing and reads the answer instead
            // of meeting a closed socket.
            send_now(
                outbox,
                WireError::server(ErrorKind::FrameTooLarge, too_large.to_string(), exit::USAGE),
            )
            .await;
            let _ = tokio::time::timeout(
                shared.io_timeout,
                tokio::io::copy(&mut (&mut *reader).take(len as u64), &mut tokio::io::sink()),
            )
            .await;
            return Next::Refused;
        }
        Ok(Err(_)) | Err(_) => return Next::Closed,
    };
    send_now(outbox, error).await;
    Next::Refused
}

/// Queues an error for the peer, outside the per-call accounting.
async fn send_now(outbox: &mpsc::Sender<Outgoing>, error: WireError) {
    let body = protocol::encode(&Response::failure(0, error));
    let _ = outbox.send(Outgoing { body, _held: None }).await;
}
