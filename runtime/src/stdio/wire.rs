//! The JSON-RPC 2.0 wire, one message a line: the outgoing messages as
//! serde writes them, the call ids and error objects read back, and
//! excerpts of lines for the log.

use serde::Serialize;
use serde_json::Value;

use super::error::{ResponseError, RpcError};

/// A request (with an id) or a notification (without).
#[derive(Serialize)]
pub(super) struct OutgoingRequest<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) jsonrpc: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) id: Option<i64>,
    pub(super) method: &'a str,
    #[serde(skip_serializing_if = "Value::is_null")]
    pub(super) params: &'a Value,
}

/// An answer to one of the peer's requests.
#[derive(Serialize)]
pub(super) struct OutgoingResponse {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) jsonrpc: Option<&'static str>,
    pub(super) id: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) error: Option<ResponseError>,
}

/// One message as a line.
pub(super) fn encode(message: &impl Serialize) -> Result<Vec<u8>, RpcError> {
    let mut line = serde_json::to_vec(message)
        .map_err(|error| RpcError::Internal(format!("the message does not encode: {error}")))?;
    line.push(b'\n');
    Ok(line)
}

/// Our call id from the id a response carries: a number, or a string of
/// one.
pub(super) fn call_id(id: &Value) -> Option<i64> {
    match id {
        Value::Number(number) => number.as_i64().or_else(|| {
            number
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        }),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

/// The error a response carries, as the caller gets it.
pub(super) fn remote_error(error: Value) -> RpcError {
    match serde_json::from_value::<ResponseError>(error.clone()) {
        Ok(ResponseError {
            code,
            message,
            data,
        }) => RpcError::Remote {
            code,
            message,
            data,
        },
        Err(_) => RpcError::Protocol(format!(
            "an error response whose error is not a JSON-RPC error object: {}",
            excerpt(error.to_string().as_bytes())
        )),
    }
}

/// The start of a line, for a log.
pub(super) fn excerpt(bytes: &[u8]) -> String {
    const SHOWN: usize = 200;
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(SHOWN)]);
    if bytes.len() > SHOWN {
        format!("{text}... ({} bytes)", bytes.len())
    } else {
        text.into_owned()
    }
}

/// A line as a test transport hands it over: text, without the newline.
#[cfg(any(test, feature = "test-util"))]
pub(super) fn testing_text(mut line: Vec<u8>) -> String {
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    String::from_utf8(line).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn ids_match_as_numbers_or_strings_of_numbers() {
        assert_eq!(call_id(&json!(7)), Some(7));
        assert_eq!(call_id(&json!(7.0)), Some(7));
        assert_eq!(call_id(&json!("7")), Some(7));
        assert_eq!(call_id(&json!(" 7 ")), Some(7));
        assert_eq!(call_id(&json!(7.5)), None);
        assert_eq!(call_id(&json!("seven")), None);
        assert_eq!(call_id(&Value::Null), None);
    }
}
