//! One connection once its hello is taken: its room among the scope's
//! connections and the server's, then its pipeline: a reader taking frames
//! in (`reader`) and one writer (`outbox`) that sends output and answers
//! whole, both on the connection's task, and a task per call. Calls in
//! flight and bytes queued for writing are bounded per connection.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::call::answer;
use super::call_io::CallIo;
use super::calls::{Admitted, Calls, not_started};
use super::grants::{Grant, Lapse};
use super::handshake::{Admits, Door, authenticate, refuse_busy, refuse_over_quota, welcome};
use super::outbox::{Control, Held, Hold, Outgoing, RunningCall, answer_body, write_frames};
use super::reader::{Caller, FrameReader, Routes};
use super::state::ServerState;
use crate::ipc::authority::guard::PeerCredentials;
use crate::ipc::call::cancel::CancelReason;
use crate::ipc::call::context::CallContext;
use crate::ipc::protocol::Response;

/// What a connection turned away for the server's backstop is told.
const HOST_FULL: &str = "the host has too many connections open; try again";

/// Greets a connection, then serves its calls until it ends or the server
/// stops.
pub(super) async fn serve_connection<R, W>(
    mut reader: R,
    mut writer: W,
    peer: Option<PeerCredentials>,
    door: &Door,
    shared: &Arc<ServerState>,
    waiting: OwnedSemaphorePermit,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let Some(grant) = authenticate(&mut reader, &mut writer, peer, &door.admits, shared).await
    else {
        return;
    };
    let mut waiting = Some(waiting);
    let scope = match door.admits {
        // A burst of its scope's connections may still be closing: it waits
        // a while for one of them, still holding its room at the door, so a
        // sandbox that keeps them open holds that room, and no more.
        Admits::Only(_) => grant.connection_slot(shared.hello_timeout).await,
        // The door every scope shares (TCP) is held by no scope's waiting,
        // nor by its refusal.
        Admits::Any => {
            waiting = None;
            grant.try_connection_slot()
        }
    };
    let Some(scope) = scope else {
        refuse_over_quota(&mut reader, &mut writer, &grant).await;
        return;
    };
    drop(waiting);
    // The backstop over every scope, past which a scope still has its
    // guaranteed few.
    let total = match shared.connections.clone().try_acquire_owned() {
        Ok(total) => total,
        Err(_) => match grant.guaranteed_slot() {
            Some(guaranteed) => guaranteed,
            None => {
                refuse_busy(&mut reader, &mut writer, HOST_FULL).await;
                return;
            }
        },
    };
    // A hello that finished as shutdown began gets no calls.
    if !welcome(&mut writer, shared).await || shared.soft.is_cancelled() {
        return;
    }
    let slots = Arc::new(Slots {
        _total: total,
        _scope: scope,
    });
    run_connection(reader, writer, peer, grant, shared, slots).await;
}

/// What an open connection holds: its room among every connection (or
/// among its scope's guaranteed few) and among its scope's.
pub(super) struct Slots {
    _total: OwnedSemaphorePermit,
    _scope: OwnedSemaphorePermit,
}

/// An authenticated connection: what each of its calls needs, shared by
/// the connection's task and its calls' tasks.
struct Connection {
    shared: Arc<ServerState>,
    grant: Arc<Grant>,
    /// Cancelled when the connection ends: the peer left, broke the
    /// protocol, or everything it had to say is written.
    ended: CancellationToken,
    /// The writer's queue of output and answers (bounded).
    outbox: mpsc::Sender<Outgoing>,
    /// The writer's queue of small frames that never wait.
    control: mpsc::UnboundedSender<Control>,
    calls: Calls,
    /// Room for the calls in flight (`max_in_flight`).
    in_flight: Arc<Semaphore>,
    /// Room in the writer's queue, in bytes (`max_queued_bytes`).
    queued_bytes: Arc<Semaphore>,
    /// Its room among every connection and its scope's: held by the
    /// connection's task until all it had to say is written, and by each
    /// call until it ends, so a call finishing its cancel grace after its
    /// caller left still counts.
    _slots: Arc<Slots>,
}

/// Serves an authenticated connection's calls until it ends or the server
/// stops.
async fn run_connection<R, W>(
    reader: R,
    writer: W,
    peer: Option<PeerCredentials>,
    grant: Arc<Grant>,
    shared: &Arc<ServerState>,
    slots: Arc<Slots>,
) where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // One writer per connection, fed by every call on it, so responses go
    // out whole.
    let ended = shared.hard.child_token();
    // However this task ends (a panic too), the connection's calls are
    // told it ended.
    let _ended = ended.clone().drop_guard();
    let (outbox, outgoing) = mpsc::channel::<Outgoing>(shared.max_in_flight);
    let (control, control_out) = mpsc::unbounded_channel::<Control>();
    // Calls read but not yet running: up to `max_in_flight` wait here, so
    // the reader goes on passing input and cancels to running calls while a
    // client keeps up to twice the limit outstanding.
    let (requests, mut incoming) = mpsc::channel::<Admitted>(shared.max_in_flight);
    let connection = Arc::new(Connection {
        shared: shared.clone(),
        grant: grant.clone(),
        ended: ended.clone(),
        outbox,
        control,
        calls: Calls::default(),
        in_flight: Arc::new(Semaphore::new(shared.max_in_flight)),
        queued_bytes: Arc::new(Semaphore::new(shared.max_queued_bytes)),
        _slots: slots.clone(),
    });
    let reading = FrameReader {
        reader,
        early: None,
        routes: Routes {
            requests,
            outbox: connection.outbox.downgrade(),
            control: connection.control.clone(),
            calls: connection.calls.clone(),
            caller: Caller { grant, peer },
            shared: shared.clone(),
            connection: ended.clone(),
        },
    }
    .run();
    let serving = async move {
        connection.start_calls(&mut incoming).await;
        connection.refuse_waiting(&mut incoming).await;
        if let Some(lapse) = connection.grant.lapse() {
            connection.end_lapsed(lapse).await;
        }
        drop(incoming);
        // The writer ends once every call holding the connection is
        // answered.
        drop(connection);
    };
    let writing = async {
        write_frames(
            writer,
            outgoing,
            control_out,
            ended.clone(),
            shared.io_timeout,
        )
        .await;
        // Everything is written: the reader has nothing left to serve, and
        // the connection's room is free once its last call ends.
        ended.cancel();
    };
    // The reader, the writer and the loop starting calls share this task:
    // what one hands the next needs no other task, and a connection costs
    // one task (and one per call) rather than three.
    tokio::join!(reading, serving, writing);
    drop(slots);
}

impl Connection {
    /// Starts the calls the reader hands on, each once it has room among
    /// the calls in flight, until the connection ends, the server begins
    /// shutting down, or the scope lapses.
    async fn start_calls(self: &Arc<Self>, incoming: &mut mpsc::Receiver<Admitted>) {
        let shared = &self.shared;
        let lapsed = self.grant.lapsed();
        tokio::pin!(lapsed);
        loop {
            let request = tokio::select! {
                biased;
                () = shared.soft.cancelled() => return,
                () = self.ended.cancelled() => return,
                () = &mut lapsed => return,
                request = incoming.recv() => request,
            };
            // The reader is done: the peer left, or was refused.
            let Some(call) = request else { return };
            let slot = tokio::select! {
                biased;
                () = shared.soft.cancelled() => {
                    return not_started(&self.control, call, &self.grant).await;
                }
                () = self.ended.cancelled() => return,
                () = &mut lapsed => {
                    return not_started(&self.control, call, &self.grant).await;
                }
                slot = self.in_flight.clone().acquire_owned() => match slot {
                    Ok(slot) => slot,
                    Err(_) => return,
                },
            };
            // Each call on a task of its own: a handler that blocks before
            // its first await (or bridges to blocking code) holds up neither
            // the connection's reading and writing nor its other calls.
            shared.tracker.spawn(self.clone().run_call(call, slot));
        }
    }

    /// Calls read but not started never will be: each is told so (and its
    /// registration goes with it), unless nobody is left to tell (their
    /// records then say they were cancelled); those running keep the
    /// outbox open until answered.
    async fn refuse_waiting(&self, incoming: &mut mpsc::Receiver<Admitted>) {
        incoming.close();
        loop {
            // `recv` after `close` ends once no call is queued and the
            // reader holds no room for one it is about to queue.
            let waiting = tokio::select! {
                biased;
                () = self.ended.cancelled() => return,
                waiting = incoming.recv() => waiting,
            };
            let Some(waiting) = waiting else { return };
            not_started(&self.control, waiting, &self.grant).await;
        }
    }

    /// Access lapsed (revoked or expired): the calls running are
    /// cancelled, and the caller is told why the connection ends once they
    /// are answered: a caller reading the refusal first would take it for
    /// its call's answer.
    async fn end_lapsed(&self, lapse: Lapse) {
        let running = &self.calls;
        let told = async {
            loop {
                let emptied = running.emptied.notified();
                tokio::pin!(emptied);
                emptied.as_mut().enable();
                for call in running.lock_unpoisoned().values() {
                    call.context.cancel(lapse.cancel_reason());
                }
                if running.lock_unpoisoned().is_empty() {
                    break;
                }
                emptied.await;
            }
            let refusal = Outgoing {
                body: answer_body(Response::failure(0, lapse.error())),
                hold: Hold::Nothing,
            };
            let _ = self.outbox.send(refusal).await;
        };
        tokio::select! {
            biased;
            () = self.ended.cancelled() => {}
            () = told => {}
        }
    }

    /// Runs one call and queues its answer, holding its slot until written.
    async fn run_call(self: Arc<Self>, admitted: Admitted, slot: OwnedSemaphorePermit) {
        let Admitted {
            request,
            call: mut recorder,
            _registered: registration,
        } = admitted;
        let shared = &self.shared;
        let context = recorder.served.context.clone();
        let io = recorder.served.io.clone();
        let running = RunningCall::start(&shared.calls_running);
        let call = answer(shared, &self.grant, request, context.clone());
        tokio::pin!(call);
        let answered = tokio::select! {
            biased;
            () = self.ended.cancelled() => {
                self.caller_gone(&context, call).await;
                let outcome = recorder.unanswered();
                recorder.record(outcome, None, 0).await;
                return;
            }
            answered = &mut call => answered,
        };
        let body = answered.body;
        // A full audit queue holds the answer back: no record is dropped.
        // (An answer asking for standard input is half a call: no record;
        // its caller is reading its input, and the connection not idle.)
        match answered.ended {
            Some((outcome, exit)) => recorder.record(outcome, exit, body.len()).await,
            None => {
                recorder.recorded = true;
                registration
                    .calls
                    .awaiting_stdin
                    .store(true, Ordering::SeqCst);
            }
        }
        // `max_queued_bytes` fits in a u32 (the builder clamps it).
        let wanted =
            u32::try_from(body.len().clamp(1, shared.max_queued_bytes)).unwrap_or(u32::MAX);
        let queued = tokio::select! {
            biased;
            () = self.ended.cancelled() => return,
            permit = self.queued_bytes.clone().acquire_many_owned(wanted) => permit,
        };
        let Ok(queued) = queued else { return };
        let held = Held {
            _queued: queued,
            _slot: slot,
            _running: running,
        };
        self.send_answer(&io, body, held).await;
    }

    /// The call's caller left (or the server stops now): the handler is
    /// told, and given the grace to finish, unless the server is stopping
    /// everything; then it is dropped.
    async fn caller_gone(&self, context: &CallContext, call: Pin<&mut impl Future>) {
        let shared = &self.shared;
        if !shared.hard.is_cancelled() {
            context.cancel(CancelReason::CallerGone);
            tokio::select! {
                biased;
                () = shared.hard.cancelled() => {}
                _ = tokio::time::timeout(shared.cancel_grace, call) => {}
            }
        }
        context.cancel(CancelReason::Shutdown);
    }

    /// Queues a call's answer, after where it ended (a caller stops reading
    /// at the answer).
    async fn send_answer(&self, io: &CallIo, body: Vec<u8>, held: Held) {
        io.answered();
        if let Some(progress) = io.flush_progress() {
            let _ = self
                .outbox
                .send(Outgoing {
                    body: progress,
                    hold: Hold::Nothing,
                })
                .await;
        }
        let _ = self
            .outbox
            .send(Outgoing {
                body,
                hold: Hold::Answer(held),
            })
            .await;
    }
}
