//! One `tools/call` forwarded to a gangway host (what `gangway mcp` does in
//! a sandbox): the JSON arguments sent as they are, for the host to bind;
//! the host's streamed output gathered and its progress relayed; the
//! client's cancellation passed on as the host's cancel; the answer as a
//! tool result, structured when the host's list gave the tool an output
//! schema.

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RequestContext;

use super::Handler;
use super::call::{gather, result};
use super::progress::ProgressRelay;
use crate::ipc::{ArgvOutcome, AsyncIpcClient, CallEvent};
use crate::sync::LockUnpoisoned;
use crate::tool::{Manifest, OutputSchema};

/// Runs one tool call on the host to its result.
pub(super) async fn call(
    session: &Handler,
    client: &AsyncIpcClient,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> CallToolResult {
    let name = request.name.to_string();
    let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
    let mut call = match client.call_json_streaming(&name, &args).await {
        Ok(call) => call,
        Err(error) => return result(Err(error.to_string()), Vec::new(), None),
    };
    let progress = ProgressRelay::for_request(&context);
    let limit = session.server.call_timeout;
    let deadline = async {
        match limit {
            Some(limit) => tokio::time::sleep(limit).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    let mut streamed = Vec::new();
    let mut taking = true;
    let mut cancelled = false;
    let mut timed_out = false;
    loop {
        tokio::select! {
            event = call.next_event() => match event {
                Some(CallEvent::Output { data, .. }) if taking => {
                    taking = gather(&mut streamed, &data);
                }
                Some(CallEvent::Progress { done, total, message }) => {
                    if let Some(progress) = &progress {
                        progress.report((done, total, message));
                    }
                }
                Some(_) => {}
                None => break,
            },
            // The client cancelled, or went away: so does the host's call,
            // whose answer (after the handler's grace) ends this loop.
            () = context.ct.cancelled(), if !cancelled => {
                cancelled = true;
                let _ = call.cancel().await;
            }
            () = session.gone.cancelled(), if !cancelled => {
                cancelled = true;
                let _ = call.cancel().await;
            }
            () = &mut deadline, if !cancelled => {
                cancelled = true;
                timed_out = true;
                let _ = call.cancel().await;
            }
        }
    }
    let outcome = match call.finish().await {
        Ok(ArgvOutcome::Response(reply)) => Ok(reply),
        // A JSON call is never answered with help; a host that did is
        // shown as it answered.
        Ok(ArgvOutcome::Help(text)) => Ok(crate::rmp_serde::to_vec(&text).unwrap_or_default()),
        Err(error) => Err(error.to_string()),
    };
    let outcome = if timed_out {
        Err(format!(
            "{name}: timed out after {:?}; the call was cancelled",
            limit.unwrap_or_default()
        ))
    } else {
        outcome
    };
    if let Some(progress) = progress {
        progress.finish().await;
    }
    let output = match &outcome {
        Ok(_) => session.host_outputs.of(client, &name).await,
        Err(_) => None,
    };
    result(outcome, streamed, output.as_ref())
}

/// The output schemas of the host's commands, as its last list gave them
/// (what `tools/list` answered), so a forwarded call's answer is structured
/// as its tool said it would be.
#[derive(Debug, Default)]
pub(super) struct HostOutputs(Mutex<Option<HashMap<String, Option<OutputSchema>>>>);

impl HostOutputs {
    /// Remembers the output schemas of `manifest`'s commands.
    pub(super) fn remember(&self, manifest: &Manifest) {
        let outputs = manifest
            .commands
            .iter()
            .map(|command| (command.name.to_string(), command.output_schema.clone()))
            .collect();
        *self.0.lock_unpoisoned() = Some(outputs);
    }

    /// The output schema of the host's command `name`; the host's list is
    /// asked for when the client called a tool it has not listed.
    async fn of(&self, client: &AsyncIpcClient, name: &str) -> Option<OutputSchema> {
        if let Some(outputs) = &*self.0.lock_unpoisoned()
            && let Some(output) = outputs.get(name)
        {
            return output.clone();
        }
        // A host that cannot list answers as an unstructured tool would.
        let manifest = client.list().await.ok()?;
        self.remember(&manifest);
        manifest.command(name)?.output_schema.clone()
    }
}
