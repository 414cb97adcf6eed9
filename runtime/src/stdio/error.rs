//! What can go wrong on a JSON-RPC-over-stdio connection, and the error
//! object a peer or a request handler answers with.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a call, notification or response did not go through.
#[derive(Debug)]
#[non_exhaustive]
pub enum RpcError {
    /// No response within the call's timeout. The call's slot is freed, and
    /// a late response is dropped.
    Timeout {
        /// The method called.
        method: String,
        /// The timeout.
        after: Duration,
    },
    /// The peer is gone: it exited, closed its stdout or stdin, or the
    /// transport was shut down. Every call waiting fails with this at once,
    /// and so does every later one.
    Closed {
        /// What happened, for a person.
        reason: String,
        /// The last of the peer's standard error (up to 64 KiB by default),
        /// which usually says why it stopped.
        stderr: String,
    },
    /// The peer answered with an error object.
    Remote {
        /// The JSON-RPC error code.
        code: i64,
        /// The peer's message.
        message: String,
        /// The peer's extra data.
        data: Option<Value>,
    },
    /// The peer's answer does not follow JSON-RPC.
    Protocol(String),
    /// Starting the peer, or talking to it, failed.
    Io(std::io::Error),
    /// The message could not be encoded, or the transport misbehaved.
    Internal(String),
}

impl RpcError {
    /// The remote error object, if the peer answered with one.
    pub fn as_remote(&self) -> Option<ResponseError> {
        match self {
            RpcError::Remote {
                code,
                message,
                data,
            } => Some(ResponseError {
                code: *code,
                message: message.clone(),
                data: data.clone(),
            }),
            _ => None,
        }
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RpcError::Timeout { method, after } => {
                write!(f, "`{method}` got no response within {after:?}")
            }
            RpcError::Closed { reason, stderr } => {
                f.write_str(reason)?;
                let stderr = stderr.trim_end();
                if !stderr.is_empty() {
                    write!(f, "; the peer's last standard error:\n{stderr}")?;
                }
                Ok(())
            }
            RpcError::Remote { code, message, .. } => write!(f, "{message} (error {code})"),
            RpcError::Protocol(message) => write!(f, "the peer broke JSON-RPC: {message}"),
            RpcError::Io(error) => write!(f, "{error}"),
            RpcError::Internal(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for RpcError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RpcError::Io(error) => Some(error),
            _ => None,
        }
    }
}

/// A JSON-RPC error object: what a request handler answers a failed request
/// with, and what [`RpcError::Remote`] carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseError {
    /// The error code; see the associated constants for the reserved ones.
    pub code: i64,
    /// For a person.
    pub message: String,
    /// Anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ResponseError {
    /// The request is not valid JSON-RPC.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The parameters do not fit the method.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The handler failed.
    pub const INTERNAL_ERROR: i64 = -32603;

    /// An error with this code and message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ResponseError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// [`METHOD_NOT_FOUND`](Self::METHOD_NOT_FOUND) for `method`.
    pub fn method_not_found(method: &str) -> Self {
        ResponseError::new(
            Self::METHOD_NOT_FOUND,
            format!("method `{method}` is not handled here"),
        )
    }

    /// [`INVALID_PARAMS`](Self::INVALID_PARAMS).
    pub fn invalid_params(message: impl Into<String>) -> Self {
        ResponseError::new(Self::INVALID_PARAMS, message)
    }

    /// [`INTERNAL_ERROR`](Self::INTERNAL_ERROR).
    pub fn internal(message: impl Into<String>) -> Self {
        ResponseError::new(Self::INTERNAL_ERROR, message)
    }

    /// Adds data.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

impl fmt::Display for ResponseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (error {})", self.message, self.code)
    }
}

impl std::error::Error for ResponseError {}
