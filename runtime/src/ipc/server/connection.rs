//! One connection's pipeline, once the handshake is done: a reader task
//! that takes frames in (calls, their input and cancels; and notices the
//! peer leaving), a task per call, and one writer (`outbox`) that sends
//! output and answers whole. Calls in flight and bytes queued for writing
//! are bounded per connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_bytes::ByteBuf;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::auditor::call_record;
use super::call::answer;
use super::call_io::CallIo;
use super::grants::{Grant, Lapse};
use super::handshake::{Door, authenticate, refuse_over_quota, welcome};
use super::outbox::{Control, Held, Hold, Outgoing, RunningCall, answer_body, write_frames};
use super::{Shared, scoped_manifest};
use crate::ipc::audit::{AuditOutcome, AuditRecord};
use crate::ipc::context::{CallContext, CancelReason};
use crate::ipc::exit;
use crate::ipc::guard::{Admission, PeerCredentials};
use crate::ipc::kind::ErrorKind;
use crate::ipc::protocol::{self, ClientFrame, FrameError, Request, Response, WireError};
use crate::sync::LockUnpoisoned;

/// How much of a call's name its audit record keeps.
const AUDITED_NAME: usize = 200;

/// The calls running on a connection, by id: where their input, and a
/// cancel, go.
type Calls = Arc<CallList>;

/// The calls of a connection, and a signal for when the last one ends.
#[derive(Default)]
struct CallList {
    by_id: Mutex<HashMap<u64, CallContext>>,
    emptied: tokio::sync::Notify,
}

impl CallList {
    fn lock_unpoisoned(&self) -> std::sync::MutexGuard<'_, HashMap<u64, CallContext>> {
        self.by_id.lock_unpoisoned()
    }
}

/// Takes a call off the connection's list when it ends.
struct Registered {
    calls: Calls,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut calls = self.calls.lock_unpoisoned();
        calls.remove(&self.id);
        if calls.is_empty() {
            self.calls.emptied.notify_waiters();
        }
    }
}

/// Greets a connection, then serves its calls until it ends or the server
/// stops.
pub(super) async fn serve_connection<R, W>(
    mut reader: R,
    mut writer: W,
    peer: Option<PeerCredentials>,
    door: &Door,
    shared: &Arc<Shared>,
    total: OwnedSemaphorePermit,
    waiting: OwnedSemaphorePermit,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let Some(grant) = authenticate(&mut reader, &mut writer, peer, &door.admits, shared).await
    else {
        return;
    };
    // A burst of its scope's connections may still be closing: it waits a
    // while for one of them, still holding its room at the door, so a
    // sandbox that keeps them open holds that room, and no more.
    let Some(scope) = grant.connection_slot(shared.hello_timeout).await else {
        refuse_over_quota(&mut reader, &mut writer, &grant).await;
        return;
    };
    drop(waiting);
    // A hello that finished as shutdown began gets no calls.
    if !welcome(&mut writer, shared).await || shared.soft.is_cancelled() {
        return;
    }
    // Held by the connection and by each of its calls, so a call finishing
    // its cancel grace after its caller left still counts against both.
    let slots = Arc::new(Slots {
        _total: total,
        _scope: scope,
    });
    run_connection(reader, writer, peer, grant, shared, slots).await;
}

/// What an open connection holds: its room among every connection and
/// among its scope's.
pub(super) struct Slots {
    _total: OwnedSemaphorePermit,
    _scope: OwnedSemaphorePermit,
}

/// Serves an authenticated connection's calls until it ends or the server
/// stops.
async fn run_connection<R, W>(
    reader: R,
    writer: W,
    peer: Option<PeerCredentials>,
    grant: Arc<Grant>,
    shared: &Arc<Shared>,
    admitted: Arc<Slots>,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // One writer per connection, fed by every call on it, so responses go
    // out whole.
    let connection = shared.hard.child_token();
    let (outbox, outgoing) = mpsc::channel::<Outgoing>(shared.max_in_flight);
    let (control, control_out) = mpsc::unbounded_channel::<Control>();
    let shutdown_notices = control.clone();
    let write_task = shared.tracker.spawn(write_frames(
        writer,
        outgoing,
        control_out,
        connection.clone(),
        shared.io_timeout,
    ));
    let calls = Calls::default();
    let running = calls.clone();
    // Calls read but not yet running: up to `max_in_flight` wait here, so
    // the reader goes on passing input and cancels to running calls while a
    // client keeps up to twice the limit outstanding.
    let (requests, mut incoming) = mpsc::channel::<Admitted>(shared.max_in_flight);
    shared.tracker.spawn(read_frames(
        reader,
        requests,
        Streams {
            outbox: outbox.downgrade(),
            control,
            calls,
            caller: Caller {
                grant: grant.clone(),
                peer,
            },
        },
        shared.clone(),
        connection.clone(),
    ));
    let slots = Arc::new(Semaphore::new(shared.max_in_flight));
    let bytes = Arc::new(Semaphore::new(shared.max_queued_bytes));
    let lapsed = grant.lapsed();
    tokio::pin!(lapsed);
    loop {
        let request = tokio::select! {
            biased;
            () = shared.soft.cancelled() => break,
            () = connection.cancelled() => break,
            () = &mut lapsed => break,
            request = incoming.recv() => request,
        };
        // The reader is done: the peer left, or was refused.
        let Some(admitted_call) = request else {
            break;
        };
        let slot = tokio::select! {
            biased;
            () = shared.soft.cancelled() => {
                not_started(&shutdown_notices, admitted_call, &grant).await;
                break;
            }
            () = connection.cancelled() => break,
            () = &mut lapsed => {
                not_started(&shutdown_notices, admitted_call, &grant).await;
                break;
            }
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
        };
        shared.tracker.spawn(run_call(
            shared.clone(),
            grant.clone(),
            admitted_call,
            slot,
            bytes.clone(),
            outbox.clone(),
            connection.clone(),
            admitted.clone(),
        ));
    }
    // Calls read but not started never will be: each is told so (and its
    // registration goes with it), unless nobody is left to tell (their
    // records then say they were cancelled); those running keep the outbox
    // open until answered.
    incoming.close();
    loop {
        // `recv` after `close` ends once no call is queued and the reader
        // holds no room for one it is about to queue.
        let waiting = tokio::select! {
            biased;
            () = connection.cancelled() => break,
            waiting = incoming.recv() => waiting,
        };
        let Some(waiting) = waiting else { break };
        not_started(&shutdown_notices, waiting, &grant).await;
    }
    // Access lapsed (revoked or expired): the calls running are cancelled,
    // and the caller is told why the connection ends once they are
    // answered: a caller reading the refusal first would take it for its
    // call's answer.
    if let Some(lapse) = grant.lapse() {
        let reason = match lapse {
            Lapse::Revoked => CancelReason::Revoked,
            Lapse::Expired => CancelReason::Expired,
        };
        let told = async {
            loop {
                let emptied = running.emptied.notified();
                tokio::pin!(emptied);
                emptied.as_mut().enable();
                for context in running.lock_unpoisoned().values() {
                    context.cancel(reason);
                }
                if running.lock_unpoisoned().is_empty() {
                    break;
                }
                emptied.await;
            }
            let error = WireError::server(ErrorKind::Denied, lapse.reason(), exit::DENIED);
            let refusal = Outgoing {
                body: answer_body(Response::failure(0, error)),
                hold: Hold::Nothing,
            };
            let _ = outbox.send(refusal).await;
        };
        tokio::select! {
            biased;
            () = connection.cancelled() => {}
            () = told => {}
        }
    }
    drop(incoming);
    drop(outbox);
    let _ = write_task.await;
    // Everything is written: the reader has nothing left to serve.
    connection.cancel();
}

/// A call read from the connection, with what records it and its place in
/// the connection's list of calls.
struct Admitted {
    request: Request,
    call: CallRecorder,
    _registered: Registered,
}

/// Writes a call's audit record, once: as it ended, or, if it is dropped
/// unrecorded (its connection or the server stopped first), as cancelled.
struct CallRecorder {
    shared: Arc<Shared>,
    method: String,
    context: CallContext,
    /// When it was read.
    read_at: Instant,
    /// The size of its frame.
    frame_len: usize,
    recorded: bool,
}

impl CallRecorder {
    /// Records the call as ended with `outcome` (and `exit`, when an answer
    /// of `answer_len` bytes goes out), waiting for room in the audit queue.
    async fn record(&mut self, outcome: AuditOutcome, exit: Option<i32>, answer_len: usize) {
        if self.recorded {
            return;
        }
        if let Some(auditor) = &self.shared.auditor {
            let record = self.build(outcome, exit, answer_len);
            // Cancel-safe: dropped while waiting, the record was not queued,
            // and `drop` records it.
            auditor.record(record, &self.shared.hard).await;
        }
        self.recorded = true;
    }

    fn build(&self, outcome: AuditOutcome, exit: Option<i32>, answer_len: usize) -> AuditRecord {
        call_record(
            &self.method,
            &self.context,
            outcome,
            exit,
            self.read_at,
            self.frame_len,
            answer_len,
        )
    }

    /// How a call that ends unanswered ended: denied if its scope lapsed
    /// (revoked or expired), else cancelled.
    fn unanswered(&self) -> AuditOutcome {
        match self.context.cancel_reason() {
            Some(CancelReason::Revoked | CancelReason::Expired) => AuditOutcome::Denied,
            _ => AuditOutcome::Cancelled,
        }
    }
}

impl Drop for CallRecorder {
    fn drop(&mut self) {
        if self.recorded {
            return;
        }
        let Some(auditor) = &self.shared.auditor else {
            return;
        };
        let record = self.build(self.unanswered(), None, 0);
        // Queued at once if there is room; else by a task that waits for
        // it (counted lost where no task can run).
        let Err(record) = auditor.try_queue(record) else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(_) => {
                let shared = self.shared.clone();
                self.shared.tracker.spawn(async move {
                    if let Some(auditor) = &shared.auditor {
                        auditor.record(record, &shared.hard).await;
                    }
                });
            }
            Err(_) => auditor.try_record(record),
        }
    }
}

/// Who calls on a connection: the grant its token carries, and its
/// process.
struct Caller {
    grant: Arc<Grant>,
    peer: Option<PeerCredentials>,
}

/// What the reader hands frames to: calls' contexts (for input and
/// cancels), and the writer's queues, for new calls' output (held weakly,
/// so the writer ends once every call is answered) and for refusals.
struct Streams {
    outbox: mpsc::WeakSender<Outgoing>,
    control: mpsc::UnboundedSender<Control>,
    calls: Calls,
    caller: Caller,
}

impl Streams {
    /// The peer is gone (or broke the protocol): its calls' input will
    /// never end, so it fails.
    fn fail_inputs(&self) {
        for context in self.calls.lock_unpoisoned().values() {
            if let Some(io) = context.io() {
                io.end_input(true);
            }
        }
    }
}

/// Reads a connection's frames until the peer leaves or the connection
/// ends: calls are handed on (up to `max_in_flight` waiting to start),
/// input and cancels go straight to their calls. While the queue of calls
/// waiting is full it only watches for the peer hanging up, which cancels
/// the calls.
async fn read_frames<R>(
    mut reader: R,
    requests: mpsc::Sender<Admitted>,
    streams: Streams,
    shared: Arc<Shared>,
    connection: CancellationToken,
) where
    R: AsyncRead + Unpin,
{
    // The first byte of the next frame, when it came while waiting.
    let mut early = None;
    // Whoever would read the answers is gone: stop their calls.
    let hang_up = |streams: &Streams| {
        streams.fail_inputs();
        connection.cancel();
    };
    // Once access lapses, nothing more is read: the calls running are
    // cancelled (the connection's task sees to it) and need no input.
    let grant = streams.caller.grant.clone();
    let lapsed = grant.lapsed();
    tokio::pin!(lapsed);
    loop {
        let next = tokio::select! {
            biased;
            () = connection.cancelled() => return,
            () = &mut lapsed => {
                streams.fail_inputs();
                return;
            }
            () = idle(&streams.calls, shared.idle_timeout) => {
                let message = format!(
                    "the connection was idle for {}, and is closed; connect again",
                    super::call::human(shared.idle_timeout)
                );
                refuse(
                    &streams.control,
                    WireError::server(ErrorKind::Busy, message, exit::UNAVAILABLE),
                );
                streams.fail_inputs();
                return;
            }
            next = next_frame(&mut reader, early.take(), &streams.control, &shared) => next,
        };
        let (request, frame_len) = match next {
            Next::Frame(ClientFrame::Call(request), frame_len) => (request, frame_len),
            Next::Frame(ClientFrame::List(list), _) => {
                // Answered in the writer's bounded queue, so a flood of
                // lists waits for the peer to read.
                let Some(outbox) = streams.outbox.upgrade() else {
                    return;
                };
                let answer = Outgoing {
                    body: list_commands(list.id, &streams.caller.grant, &shared),
                    hold: Hold::Nothing,
                };
                tokio::select! {
                    biased;
                    () = connection.cancelled() => return,
                    _ = outbox.send(answer) => {}
                }
                continue;
            }
            Next::Frame(frame, _) => {
                if !deliver(frame, &streams.calls) {
                    hang_up(&streams);
                    return;
                }
                continue;
            }
            Next::Closed => {
                hang_up(&streams);
                return;
            }
            // The refusal is queued; the calls running finish and are
            // answered, but get no more input.
            Next::Refused => {
                streams.fail_inputs();
                return;
            }
        };
        if streams.calls.lock_unpoisoned().contains_key(&request.id) {
            let message = format!("call id {} is already in use", request.id);
            refuse(
                &streams.control,
                WireError::server(ErrorKind::Protocol, message, exit::UNAVAILABLE),
            );
            streams.fail_inputs();
            return;
        }
        let io = CallIo::new(
            request.id,
            streams.outbox.clone(),
            streams.control.clone(),
            shared.max_frame,
        );
        let admission = Admission::new(
            streams.caller.grant.scope().cloned(),
            streams.caller.peer,
            shared.guard.clone(),
            shared.auditor.is_some(),
        );
        let context = CallContext::for_call(Some(Arc::new(io)), Some(Arc::new(admission)));
        streams
            .calls
            .lock_unpoisoned()
            .insert(request.id, context.clone());
        let admitted = Admitted {
            call: CallRecorder {
                shared: shared.clone(),
                // What a record keeps of it, and no more (a name may be as
                // large as a frame).
                method: crate::ipc::audit_caps::capped(&request.method, AUDITED_NAME),
                context,
                read_at: Instant::now(),
                frame_len,
                recorded: false,
            },
            _registered: Registered {
                calls: streams.calls.clone(),
                id: request.id,
            },
            request,
        };
        if streams.caller.grant.lapse().is_some()
            || shared.soft.is_cancelled()
            || requests.is_closed()
        {
            // Access lapsed, or shutting down: no new call starts; running
            // ones still get their input and cancels (the connection ends
            // once they are answered).
            not_started(&streams.control, admitted, &streams.caller.grant).await;
            continue;
        }
        let room = loop {
            let mut byte = [0u8; 1];
            tokio::select! {
                biased;
                () = connection.cancelled() => return,
                room = requests.reserve() => match room {
                    Ok(room) => break Some(room),
                    // Shutting down: the call is not started.
                    Err(_) => break None,
                },
                read = reader.read(&mut byte), if early.is_none() => match read {
                    Ok(1) => early = Some(byte[0]),
                    _ => {
                        hang_up(&streams);
                        return;
                    }
                },
            }
        };
        match room {
            Some(room) => room.send(admitted),
            None => not_started(&streams.control, admitted, &streams.caller.grant).await,
        }
    }
}

/// Completes once `timeout` has passed with no call running at its end
/// (between one and two timeouts of nothing running and, as the reader
/// restarts it at each frame, nothing received).
async fn idle(calls: &Calls, timeout: std::time::Duration) {
    loop {
        tokio::time::sleep(timeout).await;
        if calls.lock_unpoisoned().is_empty() {
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
            if let Some(context) = calls.lock_unpoisoned().get(&cancel.id) {
                context.cancel(CancelReason::Interrupted);
            }
            return true;
        }
        ClientFrame::Call(_) | ClientFrame::List(_) => return true,
    };
    let Some(context) = calls.lock_unpoisoned().get(&id).cloned() else {
        return true;
    };
    let Some(io) = context.io() else { return true };
    match action {
        Some(data) => io.feed(ByteBuf::into_vec(data)),
        None => {
            io.end_input(false);
            true
        }
    }
}

/// Runs one call and queues its answer, holding its slot until written.
#[allow(clippy::too_many_arguments)]
async fn run_call(
    shared: Arc<Shared>,
    grant: Arc<Grant>,
    admitted: Admitted,
    slot: OwnedSemaphorePermit,
    bytes: Arc<Semaphore>,
    outbox: mpsc::Sender<Outgoing>,
    stop: CancellationToken,
    _connection_slots: Arc<Slots>,
) {
    let Admitted {
        request,
        call: mut recorder,
        _registered: _registration,
    } = admitted;
    let context = recorder.context.clone();
    let running = RunningCall::start(&shared.calls_running);
    let call = answer(&shared, &grant, request, context.clone());
    tokio::pin!(call);
    let answered = tokio::select! {
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
            let outcome = recorder.unanswered();
            recorder.record(outcome, None, 0).await;
            return;
        }
        answered = &mut call => answered,
    };
    let body = answered.body;
    // A full audit queue holds the answer back: no record is dropped. (An
    // answer asking for standard input is half a call: no record.)
    match answered.ended {
        Some((outcome, exit)) => recorder.record(outcome, exit, body.len()).await,
        None => recorder.recorded = true,
    }
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
    if let Some(io) = context.io() {
        io.answered();
    }
    // Where the call ended, before its answer (a caller stops reading at
    // the answer).
    if let Some(progress) = context.io().and_then(|io| io.flush_progress()) {
        let _ = outbox
            .send(Outgoing {
                body: progress,
                hold: Hold::Nothing,
            })
            .await;
    }
    let _ = outbox
        .send(Outgoing {
            body,
            hold: Hold::Answer(held),
        })
        .await;
}

/// What came in on a connection.
enum Next {
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
        // Input, the bulk of a streamed call, becomes its chunk in place.
        Ok(Ok(mut body)) if let Some((id, data)) = protocol::decode_input(&body) => {
            let len = body.len();
            body.truncate(data.end);
            body.drain(..data.start);
            let chunk = protocol::InputChunk {
                id,
                data: ByteBuf::from(body),
            };
            return Next::Frame(ClientFrame::Input(chunk), len);
        }
        Ok(Ok(body)) => match protocol::decode::<ClientFrame>(&body) {
            Ok(ClientFrame::Call(request)) if request.id == 0 => WireError::server(
                ErrorKind::Protocol,
                "request ids start at 1",
                exit::UNAVAILABLE,
            ),
            Ok(frame) => return Next::Frame(frame, body.len()),
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
            return Next::Refused;
        }
        Ok(Err(_)) | Err(_) => return Next::Closed,
    };
    refuse(control, error);
    Next::Refused
}

/// Why a call read as the server began shutting down was not started.
const SHUTTING_DOWN: &str = "the host is shutting down; the call was not started";

/// Answers a call read but not started, as the server began shutting down
/// or the caller's access lapsed, that it did not start, and records it.
async fn not_started(control: &mpsc::UnboundedSender<Control>, mut call: Admitted, grant: &Grant) {
    let (error, outcome) = match grant.lapse() {
        Some(lapse) => (
            WireError::server(ErrorKind::Denied, lapse.reason(), exit::DENIED),
            AuditOutcome::Denied,
        ),
        None => (
            WireError::server(ErrorKind::Busy, SHUTTING_DOWN, exit::UNAVAILABLE),
            AuditOutcome::Error,
        ),
    };
    let exit = error.exit;
    let body = answer_body(Response::failure(call.request.id, error));
    call.call.record(outcome, Some(exit), body.len()).await;
    let _ = control.send(Control::Frame(body));
}

/// The answer to `gangway list`: the manifest of the commands the caller's
/// scope may call, as JSON.
fn list_commands(id: u64, grant: &Grant, shared: &Shared) -> Vec<u8> {
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
        _ if let Some(lapse) = grant.lapse() => Response::failure(
            id,
            WireError::server(ErrorKind::Denied, lapse.reason(), exit::DENIED),
        ),
        Ok(json) => Response {
            id,
            ok: true,
            result: Some(ByteBuf::from(json)),
            help: None,
            needs_stdin: false,
            error: None,
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
