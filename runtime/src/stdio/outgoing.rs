//! Sending to the peer: requests and notifications through the queue
//! (waiting for room), responses and cancel notices through the lane that
//! never waits, and closing the queue so the writer closes the peer's
//! stdin.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;

use super::builder::CancelNotice;
use super::error::{ResponseError, RpcError};
use super::outbox::{CallState, Outbox, Queued};
use super::state::TransportState;
#[cfg(any(test, feature = "test-util"))]
use super::wire::testing_text;
use super::wire::{OutgoingRequest, OutgoingResponse, encode};
use crate::sync::LockUnpoisoned;

impl TransportState {
    /// Queues a request or notification, waiting for room.
    pub(super) async fn send(
        &self,
        line: Vec<u8>,
        call: Option<Arc<CallState>>,
    ) -> Result<(), RpcError> {
        match &self.outbox {
            Outbox::Pipe { queue, .. } => {
                let queue = queue.lock_unpoisoned().clone();
                let Some(queue) = queue else {
                    return Err(self.closed_error("the transport is shutting down"));
                };
                queue
                    .send(Queued { line, call })
                    .await
                    .map_err(|_| self.writer_gone())
            }
            #[cfg(any(test, feature = "test-util"))]
            Outbox::Testing(sink) => {
                if let Some(call) = call {
                    call.mark_written();
                }
                sink.send(testing_text(line))
                    .map_err(|_| self.writer_gone())
            }
        }
    }

    /// Queues a response or cancel notice without waiting. A peer that
    /// sends requests but does not read the answers is cut off once they
    /// pass the frame limit in bytes.
    fn send_now(&self, line: Vec<u8>) -> Result<(), RpcError> {
        let sent = match &self.outbox {
            Outbox::Pipe { urgent, .. } => {
                let waiting =
                    self.urgent_bytes.fetch_add(line.len(), Ordering::AcqRel) + line.len();
                if waiting > self.options.max_frame {
                    self.close(format!(
                        "the peer sends requests but does not read the answers ({waiting} bytes of \
                         them waiting)"
                    ));
                    return Err(self.writer_gone());
                }
                urgent.send(line).is_ok()
            }
            #[cfg(any(test, feature = "test-util"))]
            Outbox::Testing(sink) => sink.send(testing_text(line)).is_ok(),
        };
        if sent {
            Ok(())
        } else {
            Err(self.writer_gone())
        }
    }

    /// Closes the queue: the writer closes the peer's stdin once it has
    /// written what is queued. A test transport has nothing to close.
    pub(super) fn close_queue(&self) {
        match &self.outbox {
            Outbox::Pipe { queue, .. } => {
                queue.lock_unpoisoned().take();
            }
            #[cfg(any(test, feature = "test-util"))]
            Outbox::Testing(_) => {}
        }
    }

    fn version(&self) -> Option<&'static str> {
        self.options.jsonrpc_field.then_some("2.0")
    }

    /// A request (with `id`) or a notification (without) as a line.
    pub(super) fn request_line(
        &self,
        id: Option<i64>,
        method: &str,
        params: &Value,
    ) -> Result<Vec<u8>, RpcError> {
        encode(&OutgoingRequest {
            jsonrpc: self.version(),
            id,
            method,
            params,
        })
    }

    fn response_line(
        &self,
        id: Value,
        outcome: Result<Value, ResponseError>,
    ) -> Result<Vec<u8>, RpcError> {
        let (result, error) = match outcome {
            Ok(result) => (Some(result), None),
            Err(error) => (None, Some(error)),
        };
        encode(&OutgoingResponse {
            jsonrpc: self.version(),
            id,
            result,
            error,
        })
    }

    /// Answers the peer's request `id`, without waiting.
    pub(super) fn respond(
        &self,
        id: Value,
        outcome: Result<Value, ResponseError>,
    ) -> Result<(), RpcError> {
        let line = self.response_line(id, outcome)?;
        self.send_now(line)
    }

    /// Tells the peer a call was given up on, if so configured.
    pub(super) fn send_cancel_notice(&self, id: i64, method: &str, timed_out: bool) {
        let reason = if timed_out {
            format!("`{method}` timed out")
        } else {
            format!("the caller gave up on `{method}`")
        };
        let (name, params) = match self.options.cancel_notice {
            CancelNotice::None => return,
            CancelNotice::CancelRequest => ("$/cancelRequest", serde_json::json!({ "id": id })),
            CancelNotice::Cancelled => (
                "notifications/cancelled",
                serde_json::json!({ "requestId": id, "reason": reason }),
            ),
        };
        if let Ok(line) = self.request_line(None, name, &params) {
            let _ = self.send_now(line);
        }
    }
}
