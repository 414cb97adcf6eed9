//! One `tools/call` served from a router in this process: the arguments
//! bound and dispatched as the router does for any caller, within a call
//! context that the client's cancellation cancels and whose output and
//! progress go back to it; the outcome as a tool result (an error too, as
//! `isError`).

use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::RequestContext;

use super::Handler;
use super::progress::ProgressRelay;
use crate::ipc::protocol::OutputStream;
use crate::ipc::{CallContext, CallSink, CancelReason, IpcError, IpcRouter, human};
use crate::sync::LockUnpoisoned;
use crate::tool::OutputSchema;

/// Runs one tool call to its result.
pub(super) async fn call(
    session: &Handler,
    router: &Arc<IpcRouter>,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> CallToolResult {
    let server = &session.server;
    let name = request.name.to_string();
    let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
    let sink = Arc::new(McpSink {
        output: Mutex::new(Some(Vec::new())),
        progress: Mutex::new(ProgressRelay::for_request(&context)),
    });
    let call_context = CallContext::for_sink(sink.clone());
    let limit = router
        .command(&name)
        .and_then(|info| info.timeout)
        .or(server.call_timeout);
    // In a block of its own, so the handler's future is dropped (and what it
    // holds released) before the result is sent.
    let outcome = {
        let router = router.clone();
        let dispatch = {
            let name = name.clone();
            call_context
                .clone()
                .scope(async move { router.dispatch_json(&name, &args).await })
        };
        tokio::pin!(dispatch);
        let deadline = async {
            match limit {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        let stopped = tokio::select! {
            outcome = &mut dispatch => Ok(outcome),
            // The client cancelled.
            () = context.ct.cancelled() => Err(CancelReason::Interrupted),
            // The client went away (its HTTP session closed).
            () = session.gone.cancelled() => Err(CancelReason::CallerGone),
            () = deadline => Err(CancelReason::TimedOut),
        };
        match stopped {
            Ok(outcome) => outcome,
            // The handler is told, and given the grace to finish; a call
            // past its time fails whatever it finishes with.
            Err(reason) => {
                call_context.cancel(reason);
                let finished = tokio::time::timeout(server.cancel_grace, &mut dispatch).await;
                match (reason, finished) {
                    (CancelReason::TimedOut, _) => Err(IpcError::Handler {
                        method: name.clone(),
                        message: format!(
                            "timed out after {}; the call was cancelled",
                            human(limit.unwrap_or_default())
                        ),
                        data: Vec::new(),
                    }),
                    (_, Ok(outcome)) => outcome,
                    (_, Err(_)) => Err(IpcError::Cancelled {
                        method: name.clone(),
                    }),
                }
            }
        }
    };
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
    let outcome = outcome
        .map(|reply| router.structured_reply(&name, reply))
        .map_err(|error| error.to_string());
    result(outcome, streamed, output)
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

impl CallSink for McpSink {
    fn output(&self, _stream: OutputStream, bytes: &[u8]) -> bool {
        let mut output = self.output.lock_unpoisoned();
        match output.as_mut() {
            Some(output) => gather(output, bytes),
            None => false,
        }
    }

    fn progress(&self, done: u64, total: Option<u64>, message: Option<String>) {
        if let Some(progress) = &*self.progress.lock_unpoisoned() {
            progress.report((done, total, message));
        }
    }
}
