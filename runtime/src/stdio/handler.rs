//! What the peer's requests and notifications are handed to: the handler
//! types, the request they receive, and the answer to a request that finds
//! no room.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use super::error::ResponseError;

/// The code a peer's request is answered with when too many are already
/// in progress (in JSON-RPC's range for implementation errors).
pub const SERVER_BUSY: i64 = -32000;

/// The error a notification handler may return; it is logged.
pub type HandlerError = Box<dyn std::error::Error + Send + Sync>;

/// Receives every incoming message that is not a response to a call:
/// notifications, and requests when no request handler is set (answer those
/// with [`StdioTransport::respond`](super::StdioTransport::respond)). It
/// runs on the reading task, in order, so it must be quick.
pub type NotificationHandler = Arc<dyn Fn(Value) -> Result<(), HandlerError> + Send + Sync>;

/// A request handler's answer.
pub type RequestFuture = Pin<Box<dyn Future<Output = Result<Value, ResponseError>> + Send>>;

/// The async handler for the peer's requests, as the transport keeps it.
pub(super) type RequestHandler = Arc<dyn Fn(IncomingRequest) -> RequestFuture + Send + Sync>;

/// A request from the peer.
#[derive(Debug, Clone, PartialEq)]
pub struct IncomingRequest {
    /// Its id, as the peer wrote it (a number, a string, or null).
    pub id: Value,
    /// The method.
    pub method: String,
    /// The parameters (`null` when absent).
    pub params: Value,
}
