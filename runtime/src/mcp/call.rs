//! One `tools/call`: the arguments bound and dispatched as the router does
//! for any caller, within a call context that the client's cancellation
//! cancels and whose output and progress go back to it; the outcome as a
//! tool result (an error too, as `isError`).

use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RequestContext};
use tokio::sync::mpsc;

use super::McpServer;
use crate::ipc::CallSink;
use crate::ipc::protocol::OutputStream;
use crate::ipc::{CallContext, CancelReason, IpcError};
use crate::sync::LockUnpoisoned;

/// Runs one tool call to its result.
pub(super) async fn call(
    server: &McpServer,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> CallToolResult {
    let name = request.name.to_string();
    let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
    let (progress, forwarder) = match context.meta.get_progress_token() {
        Some(token) => {
            let (sender, receiver) = mpsc::unbounded_channel();
            let forwarder = tokio::spawn(forward_progress(token, context.peer.clone(), receiver));
            (Some(sender), Some(forwarder))
        }
        None => (None, None),
    };
    let sink = Arc::new(McpSink {
        output: Mutex::new(Some(Vec::new())),
        progress: Mutex::new(progress),
    });
    let call_context = CallContext::for_sink(sink.clone());
    let limit = server
        .router
        .command(&name)
        .and_then(|info| info.timeout)
        .or(server.call_timeout);
    // In a block of its own, so the handler's future is dropped (and what it
    // holds released) before the result is sent.
    let outcome = {
        let router = server.router.clone();
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
                            "timed out after {:?}; the call was cancelled",
                            limit.unwrap_or_default()
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
    // Every progress notification goes out before the result.
    sink.progress.lock_unpoisoned().take();
    if let Some(forwarder) = forwarder {
        let abort = forwarder.abort_handle();
        if tokio::time::timeout(std::time::Duration::from_secs(5), forwarder)
            .await
            .is_err()
        {
            abort.abort();
        }
    }
    result(outcome, streamed)
}

/// The tool result of a call's outcome, after what it streamed.
fn result(outcome: Result<Vec<u8>, IpcError>, streamed: Vec<u8>) -> CallToolResult {
    let mut text = String::from_utf8_lossy(&streamed).into_owned();
    match outcome {
        Ok(reply) => {
            text.push_str(&reply_text(&reply));
            CallToolResult::success(vec![ContentBlock::text(text)])
        }
        Err(error) => {
            text.push_str(&error.to_string());
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

/// One progress report: done, total, message.
type Progress = (u64, Option<u64>, Option<String>);

/// Where a tool call's output and progress go.
struct McpSink {
    /// What the handler wrote (at most [`MAX_OUTPUT`]); `None` once the call
    /// is over.
    output: Mutex<Option<Vec<u8>>>,
    /// Closed once the call ends: the handler may keep its context.
    progress: Mutex<Option<mpsc::UnboundedSender<Progress>>>,
}

impl CallSink for McpSink {
    fn output(&self, _stream: OutputStream, bytes: &[u8]) -> bool {
        let mut output = self.output.lock_unpoisoned();
        let Some(output) = output.as_mut() else {
            return false;
        };
        let room = MAX_OUTPUT.saturating_sub(output.len());
        if bytes.len() > room {
            output.extend_from_slice(&bytes[..room]);
            output.extend_from_slice(b"\n(output cut at 1 MiB)\n");
            return false;
        }
        output.extend_from_slice(bytes);
        true
    }

    fn progress(&self, done: u64, total: Option<u64>, message: Option<String>) {
        if let Some(progress) = &*self.progress.lock_unpoisoned() {
            let _ = progress.send((done, total, message));
        }
    }
}

/// Sends a call's progress to the client, in order, until the call ends.
async fn forward_progress(
    token: ProgressToken,
    peer: Peer<RoleServer>,
    mut updates: mpsc::UnboundedReceiver<Progress>,
) {
    while let Some((done, total, message)) = updates.recv().await {
        #[allow(clippy::cast_precision_loss)]
        let mut param = ProgressNotificationParam::new(token.clone(), done as f64);
        if let Some(total) = total {
            #[allow(clippy::cast_precision_loss)]
            let total = total as f64;
            param = param.with_total(total);
        }
        if let Some(message) = message {
            param = param.with_message(message);
        }
        if peer.notify_progress(param).await.is_err() {
            return;
        }
    }
}
