//! One `tools/call` forwarded to a gangway host (what `gangway mcp` does in
//! a sandbox): the JSON arguments sent as they are, for the host to bind;
//! the host's streamed output gathered and its progress relayed; the
//! client's cancellation (or this side's deadline, or output past the cap)
//! passed on as the host's cancel; the answer as a tool result, structured
//! when the host's list gave the tool an output schema.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RequestContext;

use super::call::{gather, result};
use super::progress::ProgressRelay;
use super::session::Session;
use crate::ipc::call::bounded::Deadline;
use crate::ipc::error::duration_text::shown_duration;
use crate::ipc::{ArgvOutcome, AsyncIpcClient, CallEvent, CallStream, IpcError};

/// How much longer than the host's cancel grace a cancelled call waits for
/// the host's answer before it gives up on it.
const ANSWER_MARGIN: Duration = Duration::from_secs(1);

/// Why this side cancelled the host's call.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The client cancelled the tool call, or went away.
    Client,
    /// This side's deadline ([`McpServer::with_call_timeout`](super::McpServer::with_call_timeout)).
    Deadline,
    /// The output reached the cap: nobody reads the rest.
    OutputFull,
}

/// Runs one tool call on the host to its result.
pub(super) async fn call(
    session: &Session,
    client: &AsyncIpcClient,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> CallToolResult {
    let name = request.name.to_string();
    let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
    let limit = session.server.call_timeout;
    let mut deadline = Deadline::after(limit);
    // Sending waits for room while the host holds as many calls of this
    // connection as it runs at once: the client's cancel and the deadline
    // apply to that wait too.
    let started = tokio::select! {
        started = client.call_json_streaming(&name, &args) => started,
        () = cancelled(&context, session) => {
            return failed(format!("{name}: cancelled before it started"), Vec::new());
        }
        () = deadline.passed() => return timed_out(&name, limit),
    };
    let mut call = match started {
        Ok(call) => call,
        Err(error) => return failed(error.to_string(), Vec::new()),
    };
    // Once cancelled, the host answers within its grace; past it (and a
    // margin) the call is given up on rather than waited for.
    let answer_within =
        client.cancel_grace().unwrap_or(session.server.cancel_grace) + ANSWER_MARGIN;
    let watch = Watch {
        session,
        context: &context,
        answer_within,
    };
    let progress = ProgressRelay::for_request(&context);
    let followed = watch.follow(&mut call, deadline, progress.as_ref()).await;
    if let Some(progress) = progress {
        progress.finish().await;
    }
    match followed.stop {
        Some(Stop::Deadline) => timed_out(&name, limit),
        _ if followed.abandoned => failed(
            format!(
                "{name}: cancelled; the host did not answer within {}",
                shown_duration(answer_within)
            ),
            followed.streamed,
        ),
        _ => watch.answer(call, client, &name, followed.streamed).await,
    }
}

/// What a forwarded call is watched with: the client's cancel, the
/// session's end, this side's deadline, and how long a cancelled call's
/// answer is waited for.
struct Watch<'a> {
    session: &'a Session,
    context: &'a RequestContext<RoleServer>,
    answer_within: Duration,
}

/// How following a call's events ended.
struct Followed {
    /// What the host's handler wrote (at most the cap).
    streamed: Vec<u8>,
    /// Why this side cancelled the host's call, if it did.
    stop: Option<Stop>,
    /// The host did not answer a cancelled call in time.
    abandoned: bool,
}

impl Watch<'_> {
    /// Gathers the call's output and relays its progress until it ends;
    /// the client's cancel, the deadline or a full output cancels it on
    /// the host, whose answer is then waited for only so long.
    async fn follow(
        &self,
        call: &mut CallStream,
        mut deadline: Deadline,
        progress: Option<&ProgressRelay>,
    ) -> Followed {
        // Set once this side stops the call: how long its answer is awaited.
        let mut give_up = Deadline::default();
        let mut followed = Followed {
            streamed: Vec::new(),
            stop: None,
            abandoned: false,
        };
        let mut taking = true;
        loop {
            let stop = followed.stop;
            let stopping = tokio::select! {
                event = call.next_event() => match event {
                    Some(CallEvent::Output { data, .. }) if taking => {
                        taking = gather(&mut followed.streamed, &data);
                        (!taking).then_some(Stop::OutputFull)
                    }
                    // Past the cap: dropped.
                    Some(CallEvent::Output { .. }) => None,
                    Some(CallEvent::Progress { done, total, message }) => {
                        if let Some(progress) = progress {
                            progress.report((done, total, message));
                        }
                        None
                    }
                    None => return followed,
                },
                () = self.context.ct.cancelled(), if stop.is_none() => Some(Stop::Client),
                () = self.session.gone.cancelled(), if stop.is_none() => Some(Stop::Client),
                () = deadline.passed(), if stop.is_none() => Some(Stop::Deadline),
                () = give_up.passed() => {
                    followed.abandoned = true;
                    return followed;
                }
            };
            if let (Some(why), None) = (stopping, stop) {
                followed.stop = Some(why);
                // Never waits: this loop must go on reading the call's
                // events, which keeps the shared connection moving.
                call.cancel_soon();
                give_up.set(self.answer_within);
            }
        }
    }

    /// The host's answer as a tool result, structured when the host's
    /// list gave the tool an output schema.
    async fn answer(
        &self,
        call: CallStream,
        client: &AsyncIpcClient,
        name: &str,
        streamed: Vec<u8>,
    ) -> CallToolResult {
        let outcome = match call.finish().await {
            Ok(ArgvOutcome::Response(reply)) => Ok(reply),
            // A JSON call is never answered with help; a host that did is
            // shown as it answered.
            Ok(ArgvOutcome::Help(text)) => Ok(crate::rmp_serde::to_vec(&text).unwrap_or_default()),
            Err(error) => Err(error.to_string()),
        };
        let output = match &outcome {
            // Asked of the host when this session has not listed the tool:
            // not for longer than a call's own wait, nor past the client's
            // cancel.
            Ok(_) => tokio::select! {
                output = tokio::time::timeout(
                    self.answer_within,
                    self.session.host_outputs.of(client, name),
                ) => output.ok().flatten(),
                () = cancelled(self.context, self.session) => None,
            },
            Err(_) => None,
        };
        result(outcome, streamed, output.as_ref())
    }
}

/// The error result of a call that failed with `message`, after what it
/// streamed.
fn failed(message: String, streamed: Vec<u8>) -> CallToolResult {
    result(Err(message), streamed, None)
}

/// The result of a call past this side's deadline: the host's words for
/// a timeout.
fn timed_out(name: &str, limit: Option<Duration>) -> CallToolResult {
    let error = IpcError::TimedOut {
        method: name.to_owned(),
        after: limit.unwrap_or_default(),
    };
    failed(error.to_string(), Vec::new())
}

/// Completes when the client cancelled the request, or went away.
async fn cancelled(context: &RequestContext<RoleServer>, session: &Session) {
    tokio::select! {
        () = context.ct.cancelled() => {}
        () = session.gone.cancelled() => {}
    }
}
