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
        output: Mutex::new(Vec::new()),
        progress: Mutex::new(progress),
    });
    let call_context = CallContext::for_sink(sink.clone());
    let router = server.router.clone();
    let dispatch = {
        let name = name.clone();
        call_context
            .clone()
            .scope(async move { router.dispatch_json(&name, &args).await })
    };
    tokio::pin!(dispatch);
    let outcome = tokio::select! {
        outcome = &mut dispatch => outcome,
        () = context.ct.cancelled() => {
            // The client cancelled: the handler is told, and given the
            // grace to finish.
            call_context.cancel(CancelReason::Interrupted);
            match tokio::time::timeout(server.cancel_grace, &mut dispatch).await {
                Ok(outcome) => outcome,
                Err(_) => Err(IpcError::Cancelled { method: name.clone() }),
            }
        }
    };
    let streamed = std::mem::take(&mut *sink.output.lock_unpoisoned());
    // Every progress notification goes out before the result.
    sink.progress.lock_unpoisoned().take();
    if let Some(forwarder) = forwarder {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), forwarder).await;
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

/// One progress report: done, total, message.
type Progress = (u64, Option<u64>, Option<String>);

/// Where a tool call's output and progress go.
struct McpSink {
    output: Mutex<Vec<u8>>,
    /// Closed once the call ends: the handler may keep its context.
    progress: Mutex<Option<mpsc::UnboundedSender<Progress>>>,
}

impl CallSink for McpSink {
    fn output(&self, _stream: OutputStream, bytes: &[u8]) {
        self.output.lock_unpoisoned().extend_from_slice(bytes);
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
