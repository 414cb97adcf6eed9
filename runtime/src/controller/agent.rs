//! An agent that speaks ACP (the Agent Client Protocol) over its stdio.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::{Value, json};
use tokio::runtime::Handle;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::input::{InputSequencer, no_room};
use super::lifecycle::{Lifecycle, RunInfo};
use super::output::{ExitInfo, OutputEvent, OutputHub, OutputSource};
use super::{
    Controller, ControllerError, ControllerInput, LaunchSpec, RuntimeStatus, ShutdownFuture,
    Status, StopOutcome, TurnActivityTracker, TurnProvenance,
};
use crate::stdio::{ExitOutcome, IncomingRequest, RequestFuture, StdioTransport};
use crate::sync::LockUnpoisoned;

/// Answers the agent's requests to its client (`session/request_permission`,
/// `fs/read_text_file`...): the value is the result, the error the JSON-RPC
/// error.
pub type AgentRequestHandler = Arc<dyn Fn(IncomingRequest) -> RequestFuture + Send + Sync>;

/// How long one prompt may run.
const TURN_LIMIT: Duration = Duration::from_secs(24 * 60 * 60);
/// How many prompts may wait for the turn before them.
const PROMPT_BACKLOG: usize = 64;

/// The ACP version spoken.
const ACP_VERSION: u64 = 1;

/// The agent's session, once set up (or why it could not be).
type SessionSlot = watch::Receiver<Option<Result<String, String>>>;

struct AgentRun {
    transport: Arc<StdioTransport>,
    session: SessionSlot,
    prompts: mpsc::Sender<(String, TurnProvenance)>,
    /// Set once the agent is being stopped: prompts still queued are not
    /// started.
    closing: CancellationToken,
    sequencer: InputSequencer,
    exited: watch::Receiver<Option<ExitInfo>>,
}

impl AgentRun {
    /// No new turns; the one in progress is asked to end. (The run is
    /// marked stopping in the state first.)
    fn wind_down(&self, agent: &AgentInner) {
        self.closing.cancel();
        agent.cancel_turn(&self.transport, &self.session);
    }
}

impl RunInfo for AgentRun {
    fn pid(&self) -> Option<u32> {
        self.transport.pid()
    }
}

struct AgentInner {
    id: String,
    spec: LaunchSpec,
    handler: AgentRequestHandler,
    runtime: Option<Handle>,
    hub: OutputHub,
    tracker: Arc<TurnActivityTracker>,
    state: Mutex<Lifecycle<AgentRun>>,
    agent_id: Mutex<Option<String>>,
    /// The last turn cancelled: a permission request of that turn, waiting
    /// on the handler or arriving later, is answered `cancelled` (as ACP
    /// asks of a client that cancels).
    cancelled_turn: Arc<watch::Sender<u64>>,
}

/// Runs an agent that speaks ACP over its stdio, through a
/// [`StdioTransport`]: it sets up a session (`initialize` at protocol
/// version 1, then `session/new` in the spec's working directory), makes
/// each input's data a prompt (`session/prompt`, one turn at a time, in
/// order), publishes every `session/update` notification and each
/// prompt's answer as a JSON line on [`OutputSource::Agent`], and answers
/// the agent's requests with the handler. `SIGINT` cancels the turn in
/// progress (`session/cancel`, and a permission request still waiting on
/// the handler is answered `cancelled`, as ACP asks); other signals go to
/// the agent's session.
pub struct AgentController {
    inner: Arc<AgentInner>,
}

impl std::fmt::Debug for AgentController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentController")
            .field("id", &self.inner.id)
            .finish_non_exhaustive()
    }
}

impl AgentController {
    /// A controller for the agent `spec` runs, whose requests `handler`
    /// answers; not started. A handler that needs the controller should
    /// hold it weakly ([`Weak`](std::sync::Weak)): a strong one makes a
    /// cycle, and the agent is then only ended by a stop or shutdown.
    pub fn new<F, Fut>(id: impl Into<String>, spec: LaunchSpec, handler: F) -> Self
    where
        F: Fn(IncomingRequest) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, crate::stdio::ResponseError>>
            + Send
            + 'static,
    {
        let handler: AgentRequestHandler = Arc::new(move |request| Box::pin(handler(request)));
        let tail = spec.tail_bytes();
        AgentController {
            inner: Arc::new(AgentInner {
                id: id.into(),
                spec,
                handler,
                runtime: Handle::try_current().ok(),
                hub: OutputHub::new(tail),
                tracker: Arc::new(TurnActivityTracker::new()),
                state: Mutex::new(Lifecycle::new()),
                agent_id: Mutex::new(None),
                cancelled_turn: Arc::new(watch::Sender::new(0)),
            }),
        }
    }

    /// Every output event from now on.
    pub fn subscribe(&self) -> mpsc::Receiver<OutputEvent> {
        self.inner.hub.subscribe()
    }

    /// The most recent output lines.
    pub fn output_tail(&self) -> Vec<u8> {
        self.inner.hub.tail()
    }

    /// Prompts the agent on the host's behalf (a turn whose provenance is
    /// [`TurnProvenance::Host`]).
    ///
    /// # Errors
    ///
    /// [`ControllerError::NotRunning`],
    /// [`ControllerError::InputBacklogFull`].
    pub fn prompt(&self, text: impl Into<String>) -> Result<(), ControllerError> {
        let state = self.inner.lock();
        let run = state.run.as_ref().ok_or_else(|| self.inner.not_running())?;
        self.inner
            .queue_prompt(run, text.into(), TurnProvenance::Host)
    }

    /// The ACP session id, once the session is set up.
    pub fn session_id(&self) -> Option<String> {
        let state = self.inner.lock();
        let run = state.run.as_ref()?;
        let session = run.session.borrow();
        session.as_ref().and_then(|s| s.as_ref().ok().cloned())
    }
}

impl AgentInner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Lifecycle<AgentRun>> {
        self.state.lock_unpoisoned()
    }

    fn not_running(&self) -> ControllerError {
        ControllerError::NotRunning {
            id: self.id.clone(),
        }
    }

    fn queue_prompt(
        &self,
        run: &AgentRun,
        text: String,
        provenance: TurnProvenance,
    ) -> Result<(), ControllerError> {
        run.prompts
            .try_send((text, provenance))
            .map_err(|error| no_room(&self.id, error))
    }

    fn start(
        self: &Arc<Self>,
        block_meta: HashMap<String, Value>,
        force: bool,
    ) -> Result<(), ControllerError> {
        let handle = self
            .runtime
            .clone()
            .or_else(|| Handle::try_current().ok())
            .ok_or(ControllerError::NoRuntime)?;
        let _entered = handle.enter();
        let mut state = self.lock();
        let stopping = state.stopping();
        if let Some(run) = &mut state.run {
            if !force && !stopping {
                return Ok(());
            }
            run.closing.cancel();
            run.transport.signal_peer(Signal::SIGKILL);
            state.run = None;
        }
        let transport = self.spawn_transport()?;
        let events = self.wire(&transport);
        let generation = state.generation + 1;
        let (session_tx, session_rx) = watch::channel(None);
        let (prompt_tx, prompt_rx) = mpsc::channel(PROMPT_BACKLOG);
        let (exit_tx, exit_rx) = watch::channel(None);
        let closing = CancellationToken::new();
        tokio::spawn(set_up_session(self.clone(), transport.clone(), session_tx));
        tokio::spawn(run_turns(
            self.clone(),
            transport.clone(),
            session_rx.clone(),
            prompt_rx,
            events.clone(),
            closing.clone(),
        ));
        tokio::spawn(watch_agent_exit(
            self.clone(),
            generation,
            transport.clone(),
            events,
            exit_tx,
        ));
        let run = AgentRun {
            transport,
            session: session_rx,
            prompts: prompt_tx,
            closing,
            sequencer: InputSequencer::new(),
            exited: exit_rx,
        };
        state.begin(generation, run, block_meta);
        Ok(())
    }

    /// Starts the agent's process and its JSON-RPC transport.
    fn spawn_transport(&self) -> Result<Arc<StdioTransport>, ControllerError> {
        let transport = StdioTransport::builder()
            .rpc_timeout(Duration::from_secs(60))
            .spawn(self.spec.command())
            .map_err(|error| match error {
                crate::stdio::RpcError::Io(source) => ControllerError::Spawn {
                    program: self.spec.shown_program(),
                    source,
                },
                other => ControllerError::Agent(other),
            })?;
        Ok(Arc::new(transport))
    }

    /// Routes the agent's notifications and requests: notifications to the
    /// output hub in order, through one lane (whose sender is returned, for
    /// the exit event to follow them), and requests to the handler, a
    /// permission request answered `cancelled` once its turn is cancelled.
    fn wire(
        self: &Arc<Self>,
        transport: &Arc<StdioTransport>,
    ) -> mpsc::UnboundedSender<OutputEvent> {
        // One ordered lane for the agent's messages and the exit event.
        let (events, mut lane) = mpsc::unbounded_channel::<OutputEvent>();
        let notes = events.clone();
        transport.set_notification_handler(Arc::new(move |message| {
            let mut line = message.to_string().into_bytes();
            line.push(b'\n');
            notes.send(OutputEvent::Output {
                stream: OutputSource::Agent,
                data: line,
            })?;
            Ok(())
        }));
        let handler = self.handler.clone();
        let cancelled_turn = self.cancelled_turn.clone();
        let tracker = self.tracker.clone();
        transport.set_request_handler(move |request| {
            let asking = request.method == "session/request_permission";
            let turn = tracker.current_turn();
            let mut cancelled = cancelled_turn.subscribe();
            let answer = handler(request);
            async move {
                if !asking {
                    return answer.await;
                }
                let cancelled = cancelled.wait_for(|cancelled| *cancelled >= turn && turn > 0);
                tokio::select! {
                    answer = answer => answer,
                    Ok(_) = cancelled => Ok(json!({"outcome": {"outcome": "cancelled"}})),
                }
            }
        });
        let forwarder = self.clone();
        tokio::spawn(async move {
            while let Some(event) = lane.recv().await {
                forwarder.hub.publish(event).await;
            }
        });
        events
    }

    /// Asks the agent to end the turn in progress.
    fn cancel_turn(&self, transport: &Arc<StdioTransport>, session: &SessionSlot) {
        let Some(Ok(session)) = session.borrow().clone() else {
            return;
        };
        if !self.tracker.is_active() {
            return;
        }
        self.cancelled_turn
            .send_replace(self.tracker.current_turn());
        let Some(handle) = self.runtime.clone().or_else(|| Handle::try_current().ok()) else {
            return;
        };
        let transport = transport.clone();
        handle.spawn(async move {
            let _ = transport
                .notify("session/cancel", json!({ "sessionId": session }))
                .await;
        });
    }
}

/// `initialize`, then `session/new`.
async fn set_up_session(
    agent: Arc<AgentInner>,
    transport: Arc<StdioTransport>,
    session: watch::Sender<Option<Result<String, String>>>,
) {
    let cwd = agent
        .spec
        .working_dir()
        .cloned()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let set_up = async {
        let init = transport
            .call(
                "initialize",
                json!({
                    "protocolVersion": ACP_VERSION,
                    "clientCapabilities": {
                        "fs": {"readTextFile": false, "writeTextFile": false},
                        "terminal": false
                    },
                    "clientInfo": {"name": "gangway", "version": env!("CARGO_PKG_VERSION")}
                }),
            )
            .await
            .map_err(|e| format!("initialize failed: {e}"))?;
        let version = init["protocolVersion"].as_u64();
        if version != Some(ACP_VERSION) {
            return Err(format!(
                "the agent speaks ACP version {}, not {ACP_VERSION}",
                init["protocolVersion"]
            ));
        }
        let created = transport
            .call("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await
            .map_err(|e| format!("session/new failed: {e}"))?;
        created["sessionId"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("session/new answered without a sessionId: {created}"))
    };
    let outcome = set_up.await;
    if let Err(error) = &outcome {
        let line = json!({"error": error}).to_string();
        agent
            .hub
            .publish(OutputEvent::Output {
                stream: OutputSource::Agent,
                data: format!("{line}\n").into_bytes(),
            })
            .await;
    }
    session.send_replace(Some(outcome));
}

/// Runs prompts one turn at a time, in the order they came.
async fn run_turns(
    agent: Arc<AgentInner>,
    transport: Arc<StdioTransport>,
    mut session: SessionSlot,
    mut prompts: mpsc::Receiver<(String, TurnProvenance)>,
    events: mpsc::UnboundedSender<OutputEvent>,
    closing: CancellationToken,
) {
    loop {
        let next = tokio::select! {
            biased;
            () = closing.cancelled() => return,
            next = prompts.recv() => next,
        };
        let Some((text, provenance)) = next else {
            return;
        };
        let ready = session
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|s| s.clone());
        let Some(Ok(session_id)) = ready else {
            // No session: nothing to prompt; the error was published.
            continue;
        };
        if closing.is_cancelled() {
            return;
        }
        let turn = agent.tracker.begin(provenance);
        if closing.is_cancelled() {
            // Stopped between the check and the start: nobody would cancel
            // this turn, so it does not begin.
            agent.tracker.end(turn, None);
            return;
        }
        let answer = transport
            .call_with_timeout(
                "session/prompt",
                json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}),
                TURN_LIMIT,
            )
            .await;
        let (line, stop_reason) = match answer {
            Ok(result) => {
                let reason = result["stopReason"].as_str().map(str::to_owned);
                (json!({"result": result}), reason)
            }
            Err(error) => {
                let shown = match error.as_remote() {
                    Some(remote) => json!({"error": remote}),
                    None => json!({"error": {"message": error.to_string()}}),
                };
                (shown, Some(format!("error: {error}")))
            }
        };
        let _ = events.send(OutputEvent::Output {
            stream: OutputSource::Agent,
            data: format!("{line}\n").into_bytes(),
        });
        agent.tracker.end(turn, stop_reason);
    }
}

/// Records the agent's exit and sends the exit event after its last
/// message.
async fn watch_agent_exit(
    agent: Arc<AgentInner>,
    generation: u64,
    transport: Arc<StdioTransport>,
    events: mpsc::UnboundedSender<OutputEvent>,
    exit_tx: watch::Sender<Option<ExitInfo>>,
) {
    let info = match transport.exited().await {
        ExitOutcome::Exited(code) => ExitInfo {
            code: Some(code),
            signal: None,
        },
        ExitOutcome::Signaled(signal) => ExitInfo {
            code: None,
            signal: Some(signal),
        },
        _ => ExitInfo {
            code: None,
            signal: Some(Signal::SIGKILL as i32),
        },
    };
    let current = agent.lock().end(generation, info);
    exit_tx.send_replace(Some(info));
    // A replaced agent's end is not news to the new one's subscribers.
    if current {
        let _ = events.send(OutputEvent::Exit(info));
    }
}

impl Controller for AgentController {
    fn start(
        &self,
        block_meta: HashMap<String, Value>,
        _rt_opts: Option<Value>,
        force: bool,
    ) -> Result<(), ControllerError> {
        self.inner.start(block_meta, force)
    }

    fn stop(&self, graceful: bool, new_status: &str) -> Result<(), ControllerError> {
        self.stop_to(graceful, new_status.parse()?)
    }

    fn stop_to(&self, graceful: bool, new_status: Status) -> Result<(), ControllerError> {
        let mut state = self.inner.lock();
        let Some(run) = state.begin_stop(new_status)? else {
            return Ok(());
        };
        run.wind_down(&self.inner);
        let transport = run.transport.clone();
        let grace = if graceful {
            self.inner.spec.grace()
        } else {
            Duration::ZERO
        };
        let handle = self
            .inner
            .runtime
            .clone()
            .or_else(|| Handle::try_current().ok());
        match handle {
            Some(handle) => {
                handle.spawn(async move {
                    transport.shutdown(grace).await;
                });
            }
            None => transport.signal_peer(Signal::SIGKILL),
        }
        Ok(())
    }

    fn get_runtime_status(&self) -> RuntimeStatus {
        self.inner.lock().runtime_status(&self.inner.id, "agent")
    }

    fn send_input(&self, input: ControllerInput, seq: Option<u64>) -> Result<(), ControllerError> {
        input.parsed_signal()?;
        let mut state = self.inner.lock();
        let Some(run) = state.run.as_mut() else {
            return Err(self.inner.not_running());
        };
        let first = run.sequencer.next();
        let ready = run.sequencer.accept(input, seq, &self.inner.id)?;
        // Room for every prompt first, so none is lost half way. (Signals
        // need none: they still act while the agent is stopping.)
        let prompts = ready.iter().filter(|input| input.data.is_some()).count();
        let reserved = if prompts == 0 {
            None
        } else {
            Some(run.prompts.try_reserve_many(prompts))
        };
        let mut room = match reserved.transpose() {
            Ok(room) => room,
            Err(error) => {
                if seq.is_some() {
                    run.sequencer.rewind(first, ready);
                }
                return Err(no_room(&self.inner.id, error));
            }
        };
        for input in ready {
            if let Some(signal) = input.parsed_signal()? {
                if signal == Signal::SIGINT {
                    self.inner.cancel_turn(&run.transport, &run.session);
                } else {
                    run.transport.signal_peer(signal);
                }
            }
            if let (Some(data), Some(permit)) = (input.data, room.as_mut().and_then(Iterator::next))
            {
                let text = String::from_utf8_lossy(&data).into_owned();
                permit.send((text, TurnProvenance::User));
            }
        }
        Ok(())
    }

    fn controller_type(&self) -> &str {
        "agent"
    }

    fn block_id(&self) -> &str {
        &self.inner.id
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    /// Ends the turn in progress (`session/cancel`, waiting for it until
    /// the deadline), closes the agent's stdin, waits for it to exit, and
    /// kills it at the deadline.
    fn shutdown(&self, deadline: Instant) -> ShutdownFuture {
        let inner = self.inner.clone();
        // No new turn starts from now; the one in progress is asked to end.
        let started = {
            let mut state = inner.lock();
            state.mark_stopping(Status::Done).map(|run| {
                run.wind_down(&inner);
                (run.transport.clone(), run.exited.clone())
            })
        };
        Box::pin(async move {
            let Some((transport, mut exited)) = started else {
                return StopOutcome::NotRunning;
            };
            let until = tokio::time::Instant::from_std(deadline);
            let _ = tokio::time::timeout_at(until, inner.tracker.wait_idle()).await;
            let left = deadline.saturating_duration_since(Instant::now());
            let outcome = transport.shutdown(left).await;
            // The status is recorded by the exit watcher.
            let _ = tokio::time::timeout(Duration::from_secs(5), exited.wait_for(Option::is_some))
                .await;
            match outcome {
                ExitOutcome::Exited(code) => StopOutcome::Exited(code),
                ExitOutcome::Signaled(_) => StopOutcome::Stopped,
                ExitOutcome::Killed => StopOutcome::Killed,
                _ => StopOutcome::NotRunning,
            }
        })
    }

    fn agent_id(&self) -> Option<String> {
        self.inner.agent_id.lock_unpoisoned().clone()
    }

    fn set_agent_id(&self, id: Option<String>) {
        *self.inner.agent_id.lock_unpoisoned() = id;
    }

    fn turn_provenance(&self) -> Option<TurnProvenance> {
        self.inner
            .tracker
            .is_active()
            .then(|| self.inner.tracker.provenance())
            .flatten()
    }

    fn turn_tracker(&self) -> Option<Arc<TurnActivityTracker>> {
        Some(self.inner.tracker.clone())
    }
}

impl Drop for AgentController {
    fn drop(&mut self) {
        let state = self.inner.lock();
        if let Some(run) = &state.run {
            run.transport.signal_peer(Signal::SIGKILL);
        }
    }
}
