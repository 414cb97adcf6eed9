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
use tokio::time::Instant;

use super::call::{gather, result};
use super::progress::ProgressRelay;
use super::session::Session;
use crate::ipc::{ArgvOutcome, AsyncIpcClient, CallEvent, human};

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
    let deadline = tokio::time::sleep(limit.unwrap_or(Duration::MAX / 4));
    tokio::pin!(deadline);
    let timed_out = || {
        result(
            Err(format!(
                "{name}: timed out after {}; the call was cancelled",
                human(limit.unwrap_or_default())
            )),
            Vec::new(),
            None,
        )
    };
    // Sending waits for room while the host holds as many calls of this
    // connection as it runs at once: the client's cancel and the deadline
    // apply to that wait too.
    let started = tokio::select! {
        started = client.call_json_streaming(&name, &args) => started,
        () = cancelled(&context, session) => {
            return result(
                Err(format!("{name}: cancelled before it started")),
                Vec::new(),
                None,
            );
        }
        () = &mut deadline, if limit.is_some() => return timed_out(),
    };
    let mut call = match started {
        Ok(call) => call,
        Err(error) => return result(Err(error.to_string()), Vec::new(), None),
    };
    let progress = ProgressRelay::for_request(&context);
    // Once cancelled, the host answers within its grace; past it (and a
    // margin) the call is given up on rather than waited for.
    let answer_within =
        client.cancel_grace().unwrap_or(session.server.cancel_grace) + ANSWER_MARGIN;
    let give_up = tokio::time::sleep(Duration::MAX / 4);
    tokio::pin!(give_up);
    let mut streamed = Vec::new();
    let mut taking = true;
    let mut stop = None;
    let mut abandoned = false;
    loop {
        let stopping = tokio::select! {
            event = call.next_event() => match event {
                Some(CallEvent::Output { data, .. }) if taking => {
                    taking = gather(&mut streamed, &data);
                    (!taking).then_some(Stop::OutputFull)
                }
                // Past the cap: dropped.
                Some(CallEvent::Output { .. }) => None,
                Some(CallEvent::Progress { done, total, message }) => {
                    if let Some(progress) = &progress {
                        progress.report((done, total, message));
                    }
                    None
                }
                None => break,
            },
            () = context.ct.cancelled(), if stop.is_none() => Some(Stop::Client),
            () = session.gone.cancelled(), if stop.is_none() => Some(Stop::Client),
            () = &mut deadline, if stop.is_none() && limit.is_some() => Some(Stop::Deadline),
            () = &mut give_up, if stop.is_some() => {
                abandoned = true;
                break;
            }
        };
        if let (Some(why), None) = (stopping, stop) {
            stop = Some(why);
            // Never waits: this loop must go on reading the call's events,
            // which keeps the shared connection moving.
            call.cancel_soon();
            give_up.as_mut().reset(Instant::now() + answer_within);
        }
    }
    if let Some(progress) = progress {
        progress.finish().await;
    }
    if stop == Some(Stop::Deadline) {
        return timed_out();
    }
    if abandoned {
        return result(
            Err(format!(
                "{name}: cancelled; the host did not answer within {}",
                human(answer_within)
            )),
            streamed,
            None,
        );
    }
    let outcome = match call.finish().await {
        Ok(ArgvOutcome::Response(reply)) => Ok(reply),
        // A JSON call is never answered with help; a host that did is
        // shown as it answered.
        Ok(ArgvOutcome::Help(text)) => Ok(crate::rmp_serde::to_vec(&text).unwrap_or_default()),
        Err(error) => Err(error.to_string()),
    };
    let output = match &outcome {
        // Asked of the host when this session has not listed the tool: not
        // for longer than a call's own wait, nor past the client's cancel.
        Ok(_) => tokio::select! {
            output = tokio::time::timeout(answer_within, session.host_outputs.of(client, &name)) => {
                output.ok().flatten()
            }
            () = cancelled(&context, session) => None,
        },
        Err(_) => None,
    };
    result(outcome, streamed, output.as_ref())
}

/// Completes when the client cancelled the request, or went away.
async fn cancelled(context: &RequestContext<RoleServer>, session: &Session) {
    tokio::select! {
        () = context.ct.cancelled() => {}
        () = session.gone.cancelled() => {}
    }
}
