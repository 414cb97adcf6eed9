//! One `tools/call` served from a router in this process: the arguments
//! bound and dispatched as the router does for any caller, within a call
//! context that the client's cancellation cancels and whose output and
//! progress go back to it; the outcome as a tool result (an error too, as
//! `isError`).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::RequestContext;

use super::authority::Ended;
use super::progress::ProgressRelay;
use super::session::Session;
use tokio_util::sync::CancellationToken;

use crate::ipc::call::bounded::{Bounds, Ran};
use crate::ipc::call::line::{CallLine, Written};
use crate::ipc::protocol::OutputStream;
use crate::ipc::{AuditOutcome, CallContext, CancelReason, IpcError, IpcRouter, exit};
use crate::sync::LockUnpoisoned;
use crate::tool::OutputSchema;

/// Runs one tool call to its result: decided by the server's guard and
/// recorded in its audit log, when it has them.
pub(super) async fn call(
    session: &Session,
    router: &Arc<IpcRouter>,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> CallToolResult {
    let started = Instant::now();
    let name = request.name.to_string();
    let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
    let bytes_in = serde_json::to_vec(&args).map_or(0, |json| json.len() as u64);
    let sink = Arc::new(McpSink {
        output: Mutex::new(Some(Vec::new())),
        progress: Mutex::new(ProgressRelay::for_request(&context)),
    });
    let admission = session.server.authority.admission();
    let line: Arc<dyn CallLine> = sink.clone();
    let call_context = CallContext::served(Some(line), admission.clone());
    let (outcome, stopped) = run(session, router, &name, args, &call_context, &context).await;
    // The call is over: a handler that kept its context writes to nothing.
    let streamed = sink.output.lock_unpoisoned().take().unwrap_or_default();
    // Every progress report goes out before the result.
    let progress = sink.progress.lock_unpoisoned().take();
    if let Some(progress) = progress {
        progress.finish().await;
    }
    let output = router
        .command(&name)
        .and_then(|info| info.schema.output_schema.as_ref());
    let (audited, exit) = match (&outcome, stopped) {
        (_, Some(CancelReason::TimedOut)) => (AuditOutcome::Timeout, Some(exit::TIMEOUT)),
        (Err(IpcError::Cancelled { .. }), _) => (AuditOutcome::Cancelled, None),
        // A handler that honours its client's cancel still answers: the call
        // was cancelled all the same. (A panic stays a panic.)
        (
            Ok(_) | Err(IpcError::Handler { .. }),
            Some(CancelReason::Interrupted | CancelReason::CallerGone),
        ) => (AuditOutcome::Cancelled, None),
        (Ok(_), _) => (AuditOutcome::Ok, Some(exit::OK)),
        (Err(error), _) => (
            AuditOutcome::of_error(&error.kind()),
            Some(error.exit_code()),
        ),
    };
    let outcome = outcome
        .map(|reply| router.structured_reply(&name, reply))
        .map_err(|error| error.to_string());
    let result = result(outcome, streamed, output);
    let bytes_out = serde_json::to_vec(&result).map_or(0, |json| json.len() as u64);
    session
        .server
        .authority
        .record(Ended {
            command: &name,
            admission: admission.as_deref(),
            outcome: audited,
            exit,
            started,
            bytes_in,
            bytes_out,
        })
        .await;
    result
}

/// Dispatches the call in `call_context` within its timeout and until the
/// client cancels it or goes away; its outcome, and what stopped it early.
async fn run(
    session: &Session,
    router: &Arc<IpcRouter>,
    name: &str,
    args: serde_json::Value,
    call_context: &CallContext,
    context: &RequestContext<RoleServer>,
) -> (Result<Vec<u8>, IpcError>, Option<CancelReason>) {
    let server = &session.server;
    let limit = router
        .command(name)
        .and_then(|info| info.timeout)
        .or(server.call_timeout);
    // In a block of its own, so the handler's future is dropped (and what it
    // holds released) before the result is sent.
    let router = router.clone();
    let dispatch = {
        let name = name.to_owned();
        call_context
            .clone()
            .scope(async move { router.dispatch_json(&name, &args).await })
    };
    let bounds = Bounds {
        method: name,
        limit,
        grace: server.cancel_grace,
    };
    let stop = async {
        tokio::select! {
            // The client cancelled.
            () = context.ct.cancelled() => CancelReason::Interrupted,
            // The client went away (its HTTP session closed).
            () = session.gone.cancelled() => CancelReason::CallerGone,
        }
    };
    // A tool call has no hard stop of its own: the session's end is `stop`.
    let hard_stop = std::future::pending();
    match bounds.run(call_context, dispatch, stop, hard_stop).await {
        Ran::Finished { outcome, stopped } => (outcome, stopped),
        Ran::TimedOut(error) => (Err(error), Some(CancelReason::TimedOut)),
        Ran::Dropped(reason) => (
            Err(IpcError::Cancelled {
                method: name.to_owned(),
            }),
            Some(reason),
        ),
    }
}

/// The tool result of a call's outcome (its MessagePack response, or the
/// error's message), after what it streamed; a success of a tool with an
/// `output` schema is structured (an error never is).
pub(super) fn result(
    outcome: Result<Vec<u8>, String>,
    streamed: Vec<u8>,
    output: Option<&OutputSchema>,
) -> CallToolResult {
    if let (Ok(reply), Some(output)) = (&outcome, output) {
        return super::structured::result(reply, streamed, output);
    }
    let mut text = String::from_utf8_lossy(&streamed).into_owned();
    match outcome {
        Ok(reply) => {
            text.push_str(&reply_text(&reply));
            CallToolResult::success(vec![ContentBlock::text(text)])
        }
        Err(message) => {
            text.push_str(&message);
            CallToolResult::error(vec![ContentBlock::text(text)])
        }
    }
}

/// A handler's MessagePack response as text: a string as it is, anything
/// else as JSON; bytes as their length.
fn reply_text(reply: &[u8]) -> String {
    match rmp_serde::from_slice::<serde_json::Value>(reply) {
        Ok(serde_json::Value::String(text)) => text,
        Ok(serde_json::Value::Null) => String::new(),
        Ok(value) => value.to_string(),
        Err(_) => format!("({} bytes of binary output)", reply.len()),
    }
}

/// The most output a tool call gathers into its result: past it the
/// handler's writes fail, as they would to a caller that stopped reading.
const MAX_OUTPUT: usize = 1024 * 1024;

/// Adds `bytes` to a call's gathered `output`, up to [`MAX_OUTPUT`] (then a
/// note that the rest was cut); `false` once the limit is reached.
pub(super) fn gather(output: &mut Vec<u8>, bytes: &[u8]) -> bool {
    let room = MAX_OUTPUT.saturating_sub(output.len());
    if bytes.len() > room {
        output.extend_from_slice(&bytes[..room]);
        output.extend_from_slice(b"\n(output cut at 1 MiB)\n");
        return false;
    }
    output.extend_from_slice(bytes);
    true
}

/// Where a tool call's output and progress go.
struct McpSink {
    /// What the handler wrote (at most [`MAX_OUTPUT`]); `None` once the call
    /// is over.
    output: Mutex<Option<Vec<u8>>>,
    /// Taken once the call ends: the handler may keep its context.
    progress: Mutex<Option<ProgressRelay>>,
}

impl CallLine for McpSink {
    fn write<'a>(
        &'a self,
        _stream: OutputStream,
        bytes: &'a [u8],
        cancelled: &'a CancellationToken,
    ) -> Written<'a> {
        let taken = !cancelled.is_cancelled()
            && match self.output.lock_unpoisoned().as_mut() {
                Some(output) => gather(output, bytes),
                None => false,
            };
        Box::pin(std::future::ready(taken))
    }

    fn progress(&self, done: u64, total: Option<u64>, message: Option<String>) {
        if let Some(progress) = &*self.progress.lock_unpoisoned() {
            progress.report((done, total, message));
        }
    }
}
