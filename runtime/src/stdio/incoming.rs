//! What the peer sends, message by message: a response goes to the call
//! waiting for it, a request to the async request handler (bounded, or
//! answered busy) or the notification handler, a notification to the
//! notification handler; anything else is logged and skipped.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::error::{ResponseError, RpcError};
use super::handler::{IncomingRequest, NotificationHandler, SERVER_BUSY};
use super::state::TransportState;
use super::wire::{call_id, excerpt, remote_error};
use crate::sync::LockUnpoisoned;

impl TransportState {
    /// Handles one line from the peer.
    pub(super) async fn receive(self: &Arc<Self>, line: &[u8]) {
        let line = line.trim_ascii();
        if line.is_empty() {
            return;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Array(batch)) => {
                for message in batch {
                    self.receive_message(message).await;
                }
            }
            Ok(message) => self.receive_message(message).await,
            Err(error) => tracing::warn!(
                target: "gangway::stdio",
                pid = self.pid,
                "skipped a line that is not JSON ({error}): {}",
                excerpt(line)
            ),
        }
    }

    async fn receive_message(self: &Arc<Self>, message: Value) {
        let Value::Object(mut fields) = message else {
            tracing::warn!(target: "gangway::stdio", pid = self.pid, "skipped a message that is not an object: {}", excerpt(message.to_string().as_bytes()));
            return;
        };
        if fields.get("method").is_some_and(Value::is_string) {
            if fields.contains_key("id") {
                self.receive_request(fields).await;
            } else {
                self.receive_notification(Value::Object(fields));
            }
        } else if fields.contains_key("result") || fields.contains_key("error") {
            self.receive_response(&mut fields);
        } else {
            let shown = excerpt(Value::Object(fields).to_string().as_bytes());
            tracing::warn!(target: "gangway::stdio", pid = self.pid, "skipped a message that is neither a request, a notification nor a response: {shown}");
        }
    }

    fn receive_response(&self, fields: &mut Map<String, Value>) {
        let id = fields.get("id").and_then(call_id);
        let waiter = id.and_then(|id| self.lock_pending().calls.remove(&id));
        let Some(waiter) = waiter else {
            let shown = fields
                .get("id")
                .map_or_else(|| "none".to_owned(), ToString::to_string);
            tracing::warn!(
                target: "gangway::stdio",
                pid = self.pid,
                "dropped a response to an id no call is waiting for: {shown}"
            );
            return;
        };
        let outcome = match (fields.remove("error"), fields.remove("result")) {
            (Some(Value::Null) | None, Some(result)) => Ok(result),
            (Some(error), _) => Err(remote_error(error)),
            (None, None) => Err(RpcError::Protocol(
                "a response with neither result nor error".to_owned(),
            )),
        };
        let _ = waiter.send(outcome);
    }

    fn receive_notification(&self, message: Value) {
        let handler = self.notification_handler.lock_unpoisoned().clone();
        match handler {
            Some(handler) => self.run_notification_handler(&handler, message),
            None => {
                tracing::debug!(target: "gangway::stdio", pid = self.pid, "no notification handler; dropped: {}", excerpt(message.to_string().as_bytes()))
            }
        }
    }

    fn run_notification_handler(&self, handler: &NotificationHandler, message: Value) {
        match std::panic::catch_unwind(AssertUnwindSafe(|| handler(message))) {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::warn!(target: "gangway::stdio", pid = self.pid, "the notification handler failed: {error}");
            }
            Err(_) => {
                tracing::error!(target: "gangway::stdio", pid = self.pid, "the notification handler panicked; the message is dropped");
            }
        }
    }

    async fn receive_request(self: &Arc<Self>, mut fields: Map<String, Value>) {
        let handler = self.request_handler.lock_unpoisoned().clone();
        if let Some(handler) = handler {
            let request = IncomingRequest {
                id: fields.remove("id").unwrap_or(Value::Null),
                method: match fields.remove("method") {
                    Some(Value::String(method)) => method,
                    _ => String::new(),
                },
                params: fields.remove("params").unwrap_or(Value::Null),
            };
            // Reading never waits on handlers (they may be waiting on a
            // response only reading brings); past the admission limit the
            // peer is told to slow down instead.
            let Ok(admitted) = self.requests_admitted.clone().try_acquire_owned() else {
                let busy = ResponseError::new(
                    SERVER_BUSY,
                    format!(
                        "too many requests in progress; `{}` was not run",
                        request.method
                    ),
                );
                let _ = self.respond(request.id, Err(busy));
                return;
            };
            let shared = self.clone();
            tokio::spawn(async move {
                let id = request.id.clone();
                let method = request.method.clone();
                let run = async {
                    let _running = shared.requests_running.acquire().await;
                    // Called inside the task, so a panic before the future
                    // exists is caught as well.
                    match tokio::spawn(async move { handler(request).await }).await {
                        Ok(outcome) => outcome,
                        Err(_) => Err(ResponseError::internal(format!(
                            "the handler of `{method}` panicked"
                        ))),
                    }
                };
                let outcome = tokio::select! {
                    biased;
                    () = shared.closed.cancelled() => return,
                    outcome = run => outcome,
                };
                if let Err(error) = shared.respond(id, outcome) {
                    tracing::debug!(target: "gangway::stdio", pid = shared.pid, "a response was not sent: {error}");
                }
                drop(admitted);
            });
            return;
        }
        let notification_handler = self.notification_handler.lock_unpoisoned().clone();
        match notification_handler {
            Some(handler) => self.run_notification_handler(&handler, Value::Object(fields)),
            None => {
                // Nobody will answer: say so rather than leave the peer waiting.
                let method = fields
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let id = fields.remove("id").unwrap_or(Value::Null);
                let _ = self.respond(id, Err(ResponseError::method_not_found(&method)));
            }
        }
    }
}
