//! A connection's reader: takes frames in (calls, their input and
//! cancels, lists), hands calls on to be run, answers what it can alone
//! (a list, a broken frame), and ends the connection when it falls idle,
//! its scope lapses, or the peer leaves.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_bytes::ByteBuf;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::call_io::CallIo;
use super::call_io::ServedCall;
use super::calls::{Admitted, CallRecorder, Calls, Registered, not_started};
use super::grants::Grant;
use super::outbox::{Control, Hold, Outgoing, answer_body};
use super::state::{ServerState, scoped_manifest};
use crate::ipc::authority::guard::{Admission, PeerCredentials};
use crate::ipc::call::cancel::CancelReason;
use crate::ipc::call::context::CallContext;
use crate::ipc::call::line::CallLine;
use crate::ipc::error::kind::ErrorKind;
use crate::ipc::exit;
use crate::ipc::protocol::{self, ClientFrame, FrameError, Request, Response, WireError};

/// How much of a call's name is kept for its audit record: what the record
/// keeps, and a whole token more, so that a token pasted into the name is
/// whole when the audit thread searches for it.
const AUDITED_NAME: usize =
    crate::ipc::authority::limits::COMMAND + crate::ipc::authority::limits::MAX_TOKEN_LEN;

/// Who calls on a connection: the grant its token carries, and its
/// process.
pub(super) struct Caller {
    pub(super) grant: Arc<Grant>,
    pub(super) peer: Option<PeerCredentials>,
}

/// A connection's reading half, and where what it reads goes.
pub(super) struct FrameReader<R> {
    pub(super) reader: R,
    /// The first byte of the next frame, when it came while waiting.
    pub(super) early: Option<u8>,
    pub(super) routes: Routes,
}

/// Where what a connection's reader takes in goes: calls to the
/// connection's task (`requests`), input and cancels to the calls' contexts
/// (`calls`), new calls' output to the writer (held weakly, so the writer
/// ends once every call is answered), refusals to its control queue.
pub(super) struct Routes {
    pub(super) requests: mpsc::Sender<Admitted>,
    pub(super) outbox: mpsc::WeakSender<Outgoing>,
    pub(super) control: mpsc::UnboundedSender<Control>,
    pub(super) calls: Calls,
    pub(super) caller: Caller,
    pub(super) shared: Arc<ServerState>,
    /// Cancelled when the connection ends (or this reader ends it).
    pub(super) connection: CancellationToken,
}

/// Reading is over: the connection ended, or the reader ends it.
struct Stop;

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Reads frames until the peer leaves or the connection ends: calls
    /// are handed on (up to `max_in_flight` waiting to start), input and
    /// cancels go straight to their calls. While the queue of calls waiting
    /// is full it only watches for the peer hanging up, which cancels the
    /// calls.
    pub(super) async fn run(mut self) {
        // Once access lapses, nothing more is read: the calls running are
        // cancelled and need no input.
        let grant = self.routes.caller.grant.clone();
        let lapsed = grant.lapsed();
        tokio::pin!(lapsed);
        loop {
            let routes = &self.routes;
            let next = tokio::select! {
                biased;
                () = routes.connection.cancelled() => return,
                () = &mut lapsed => return routes.lapsed(),
                () = idle(&routes.calls, routes.shared.idle_timeout) => {
                    return routes.say_idle().await;
                }
                next = next_frame(&mut self.reader, self.early.take(), &routes.control, &routes.shared) => next,
            };
            if self.take(next).await.is_err() {
                return;
            }
        }
    }

    /// Acts on what came in.
    async fn take(&mut self, next: Incoming) -> Result<(), Stop> {
        let routes = &self.routes;
        match next {
            Incoming::Frame(ClientFrame::Call(request), frame_len) => {
                routes.calls.awaiting_stdin.store(false, Ordering::SeqCst);
                let Some(call) = routes.admit(request, frame_len).await? else {
                    return Ok(());
                };
                match self.room_for_a_call().await? {
                    Some(room) => {
                        room.send(call);
                    }
                    None => self.routes.not_started(call).await,
                }
                Ok(())
            }
            Incoming::Frame(ClientFrame::List(list), _) => routes.answer_list(list.id).await,
            Incoming::Frame(frame, _) => {
                if deliver(frame, &routes.calls) {
                    Ok(())
                } else {
                    Err(routes.hang_up())
                }
            }
            Incoming::Closed => Err(routes.hang_up()),
            // The refusal is queued; the calls running finish and are
            // answered, but get no more input.
            Incoming::Refused => {
                routes.fail_inputs();
                Err(Stop)
            }
        }
    }

    /// Room in the queue of calls waiting to start (`None`: shutting down),
    /// watching meanwhile for the peer hanging up (the first byte of its
    /// next frame is kept).
    async fn room_for_a_call(&mut self) -> Result<Option<mpsc::OwnedPermit<Admitted>>, Stop> {
        let room = self.routes.requests.clone().reserve_owned();
        tokio::pin!(room);
        loop {
            let mut byte = [0u8; 1];
            tokio::select! {
                biased;
                () = self.routes.connection.cancelled() => return Err(Stop),
                room = &mut room => return Ok(room.ok()),
                read = self.reader.read(&mut byte), if self.early.is_none() => match read {
                    Ok(1) => self.early = Some(byte[0]),
                    _ => return Err(self.routes.hang_up()),
                },
            }
        }
    }
}

impl Routes {
    /// A call registered, to be handed on to run; `None` when, with access
    /// lapsed or the server shutting down, it was answered that it did not
    /// start (running ones still get their input and cancels; the
    /// connection ends once they are answered).
    async fn admit(&self, request: Request, frame_len: usize) -> Result<Option<Admitted>, Stop> {
        if self.calls.lock_unpoisoned().contains_key(&request.id) {
            let message = format!("call id {} is already in use", request.id);
            refuse(
                &self.control,
                WireError::server(ErrorKind::Protocol, message, exit::UNAVAILABLE),
            );
            self.fail_inputs();
            return Err(Stop);
        }
        let admitted = self.register(request, frame_len);
        let lapsed = self.caller.grant.lapse().is_some();
        if lapsed || self.shared.soft.is_cancelled() || self.requests.is_closed() {
            self.not_started(admitted).await;
            return Ok(None);
        }
        Ok(Some(admitted))
    }

    /// Answers a call that did not start, and records it.
    async fn not_started(&self, call: Admitted) {
        not_started(&self.control, call, &self.caller.grant).await;
    }

    /// A call's context, in the connection's list, with what records it.
    fn register(&self, request: Request, frame_len: usize) -> Admitted {
        let shared = &self.shared;
        let io = CallIo::new(
            request.id,
            self.outbox.clone(),
            self.control.clone(),
            shared.max_frame,
        );
        let admission = Admission::new(
            self.caller.grant.scope().cloned(),
            self.caller.peer,
            shared
                .guard
                .is_some()
                .then(|| self.caller.grant.lease().clone()),
            shared.guard.clone(),
            shared.auditor.is_some(),
        );
        let io = Arc::new(io);
        let line: Arc<dyn CallLine> = io.clone();
        let served = ServedCall {
            context: CallContext::served(Some(line), Some(Arc::new(admission))),
            io,
        };
        self.calls
            .lock_unpoisoned()
            .insert(request.id, served.clone());
        Admitted {
            call: CallRecorder {
                shared: shared.clone(),
                // What a record keeps of it, and no more (a name may be as
                // large as a frame).
                method: crate::ipc::authority::audit_caps::capped(&request.method, AUDITED_NAME),
                served,
                read_at: Instant::now(),
                frame_len,
                recorded: false,
            },
            _registered: Registered {
                calls: self.calls.clone(),
                id: request.id,
            },
            request,
        }
    }

    /// Answers `gangway list` in the writer's bounded queue, so a flood of
    /// lists waits for the peer to read.
    async fn answer_list(&self, id: u64) -> Result<(), Stop> {
        let Some(outbox) = self.outbox.upgrade() else {
            return Err(Stop);
        };
        let answer = Outgoing {
            body: list_commands(id, &self.caller.grant, &self.shared),
            hold: Hold::Nothing,
        };
        tokio::select! {
            biased;
            () = self.connection.cancelled() => Err(Stop),
            _ = outbox.send(answer) => Ok(()),
        }
    }

    /// Access lapsed: the calls running are cancelled first, so a handler
    /// whose input then fails knows why (its call is answered as denied).
    fn lapsed(&self) {
        if let Some(lapse) = self.caller.grant.lapse() {
            for call in self.calls.lock_unpoisoned().values() {
                call.context.cancel(lapse.cancel_reason());
            }
        }
        self.fail_inputs();
    }

    /// Whoever would read the answers is gone: their calls stop.
    fn hang_up(&self) -> Stop {
        self.fail_inputs();
        self.connection.cancel();
        Stop
    }

    /// The peer is gone (or broke the protocol): its calls' input will
    /// never end, so it fails.
    fn fail_inputs(&self) {
        for call in self.calls.lock_unpoisoned().values() {
            call.io.end_input(true);
        }
    }

    /// Tells an idle connection's caller it is closed. The notice queues
    /// behind the answers already queued (a caller reading it first would
    /// take it for its call's answer).
    async fn say_idle(&self) {
        let message = format!(
            "the connection was idle for {}, and is closed; connect again",
            crate::ipc::error::duration_text::shown_duration(self.shared.idle_timeout)
        );
        let error = WireError::server(ErrorKind::Busy, message, exit::UNAVAILABLE);
        match self.outbox.upgrade() {
            Some(outbox) => {
                let notice = Outgoing {
                    body: answer_body(Response::failure(0, error)),
                    hold: Hold::Nothing,
                };
                tokio::select! {
                    biased;
                    () = self.connection.cancelled() => {}
                    _ = outbox.send(notice) => {}
                }
            }
            None => refuse(&self.control, error),
        }
        self.fail_inputs();
    }
}

/// Completes once `timeout` has passed with no call running at its end
/// and none waiting for its caller's standard input (between one and two
/// timeouts of nothing running and, as the reader restarts it at each
/// frame, nothing received).
async fn idle(calls: &Calls, timeout: std::time::Duration) {
    loop {
        tokio::time::sleep(timeout).await;
        if calls.lock_unpoisoned().is_empty() && !calls.awaiting_stdin.load(Ordering::SeqCst) {
            return;
        }
    }
}

/// Hands a frame that is not a call to the call it names (frames for a
/// call that has ended are dropped: they crossed its answer). `false` for
/// a peer that broke the protocol.
fn deliver(frame: ClientFrame, calls: &Calls) -> bool {
    let (id, action) = match frame {
        ClientFrame::Input(chunk) => (chunk.id, Some(chunk.data)),
        ClientFrame::InputEnd(call) => (call.id, None),
        ClientFrame::Cancel(cancel) => {
            if let Some(call) = calls.lock_unpoisoned().get(&cancel.id) {
                call.context.cancel(CancelReason::Interrupted);
            }
            return true;
        }
        ClientFrame::Call(_) | ClientFrame::List(_) => return true,
    };
    let Some(io) = calls.lock_unpoisoned().get(&id).map(|call| call.io.clone()) else {
        return true;
    };
    match action {
        Some(data) => io.feed(ByteBuf::into_vec(data)),
        None => {
            io.end_input(false);
            true
        }
    }
}

/// What came in on a connection.
enum Incoming {
    /// A frame, and its size.
    Frame(ClientFrame, usize),
    /// The peer closed the connection (or its sending half), or it broke.
    Closed,
    /// The peer sent something unacceptable; an error for it is queued.
    Refused,
}

/// Reads the next frame, whose first byte may have come already.
async fn next_frame<R>(
    reader: &mut R,
    early: Option<u8>,
    control: &mpsc::UnboundedSender<Control>,
    shared: &ServerState,
) -> Incoming
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
                return Incoming::Closed;
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
        // Input, the bulk of a streamed call, becomes its chunk in place.
        Ok(Ok(mut body)) if let Some((id, data)) = protocol::decode_input(&body) => {
            let len = body.len();
            body.truncate(data.end);
            body.drain(..data.start);
            let chunk = protocol::InputChunk {
                id,
                data: ByteBuf::from(body),
            };
            return Incoming::Frame(ClientFrame::Input(chunk), len);
        }
        Ok(Ok(body)) => match protocol::decode::<ClientFrame>(&body) {
            Ok(ClientFrame::Call(request)) if request.id == 0 => WireError::server(
                ErrorKind::Protocol,
                "request ids start at 1",
                exit::UNAVAILABLE,
            ),
            Ok(frame) => return Incoming::Frame(frame, body.len()),
            Err(error) => WireError::server(
                ErrorKind::Protocol,
                format!("the frame is not a gangway frame: {error}"),
                exit::UNAVAILABLE,
            ),
        },
        Ok(Err(too_large @ FrameError::TooLarge { len, .. })) => {
            // Tell the peer, then take in (and drop) what it is still
            // sending, so it finishes writing and reads the answer instead
            // of meeting a closed socket.
            refuse(
                control,
                WireError::server(ErrorKind::FrameTooLarge, too_large.to_string(), exit::USAGE),
            );
            let _ = tokio::time::timeout(
                shared.io_timeout,
                tokio::io::copy(&mut (&mut *reader).take(len as u64), &mut tokio::io::sink()),
            )
            .await;
            return Incoming::Refused;
        }
        Ok(Err(_)) | Err(_) => return Incoming::Closed,
    };
    refuse(control, error);
    Incoming::Refused
}

/// The answer to `gangway list`: the manifest of the commands the caller's
/// scope may call, as JSON.
fn list_commands(id: u64, grant: &Grant, shared: &ServerState) -> Vec<u8> {
    let manifest = scoped_manifest(&shared.router, grant.commands());
    let response = match serde_json::to_vec(&manifest) {
        Ok(json) if json.len() + 64 > shared.max_frame => Response::failure(
            id,
            WireError::server(
                ErrorKind::ResponseTooLarge,
                format!(
                    "the list of commands is {} bytes, over the {}-byte frame limit",
                    json.len(),
                    shared.max_frame
                ),
                exit::FAILURE,
            ),
        ),
        // Nothing more may be called.
        _ if let Some(lapse) = grant.lapse() => Response::failure(id, lapse.error()),
        Ok(json) => Response {
            result: Some(ByteBuf::from(json)),
            ..Response::success(id)
        },
        Err(error) => Response::failure(
            id,
            WireError::server(ErrorKind::Encode, error.to_string(), exit::SOFTWARE),
        ),
    };
    answer_body(response)
}

/// Queues an error about the connection as a whole (id 0), ahead of the
/// calls' frames.
fn refuse(control: &mpsc::UnboundedSender<Control>, error: WireError) {
    let _ = control.send(Control::Frame(answer_body(Response::failure(0, error))));
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::ipc::authority::audit::{AuditOutcome, AuditRecord};
    use crate::ipc::authority::audit_caps::{capped, fitted};
    use crate::ipc::authority::scrub::Scrubber;

    #[test]
    fn a_token_pasted_anywhere_in_a_long_name_leaves_no_part_of_itself() {
        let short = "4e11d46ca5ae1da950f7f2f61ff49f99a7f973feff541df8027d5e3a1b2c3d4e".to_owned();
        let long: String = (0..1000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        for token in [short, long] {
            for before in [0, 100, 150, 199, 200, 250, 255, 256, 300] {
                let name = format!("{}{token}tail", "n".repeat(before));
                let mut record = AuditRecord {
                    ts: SystemTime::UNIX_EPOCH,
                    scope: None,
                    pid: None,
                    uid: None,
                    command: Some(capped(&name, AUDITED_NAME)),
                    args: None,
                    decision: None,
                    rule: None,
                    approval: None,
                    outcome: AuditOutcome::UnknownCommand,
                    exit: Some(2),
                    duration: Duration::ZERO,
                    bytes_in: 0,
                    bytes_out: 0,
                };
                Scrubber::new(Arc::new(vec![token.clone()])).scrub(&mut record);
                let written = fitted(record).command.unwrap();
                // No 16 bytes of the token in a row.
                for window in token.as_bytes().windows(16) {
                    let window = std::str::from_utf8(window).unwrap();
                    assert!(
                        !written.contains(window),
                        "{before} bytes before a {}-byte token: {written}",
                        token.len()
                    );
                }
                // A name cut before the scrub keeps its own length noted.
                if name.len() > AUDITED_NAME {
                    assert!(
                        written.ends_with(&format!("({} bytes)", name.len())),
                        "{written}"
                    );
                }
            }
        }
    }
}
