//! A bytes argument in JSON, which has no bytes type: a string (its UTF-8
//! bytes), or `{"base64": "..."}` (standard base64, padded) for bytes that
//! are not text.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::{BindError, BindErrorKind};
use crate::args::Value;
use crate::schema::ParamSchema;

/// The two forms a bytes argument takes in JSON, as messages name them.
pub(super) const BYTES_FORMS: &str = r#"a string, or {"base64": "<standard base64>"}"#;

/// The key of the object form.
const BASE64_KEY: &str = "base64";

/// A JSON value for a bytes parameter: a string's UTF-8 bytes, or the
/// decoded `{"base64": "..."}`; `None` for any other shape (the caller
/// refuses it as it refuses every wrong type).
///
/// # Errors
///
/// Base64 that does not decode, saying where and why.
pub(super) fn bytes_value(
    param: &ParamSchema,
    key: &str,
    value: &serde_json::Value,
) -> Option<Result<Value, BindError>> {
    let encoded = match value {
        serde_json::Value::String(text) => return Some(Ok(Value::Bytes(text.as_bytes().to_vec()))),
        serde_json::Value::Object(object) if object.len() == 1 => object.get(BASE64_KEY),
        _ => None,
    };
    let Some(serde_json::Value::String(encoded)) = encoded else {
        return None;
    };
    // Line breaks and spaces (as `base64` wraps its output) are no data.
    let compact: String;
    let encoded = if encoded.bytes().any(|b| b.is_ascii_whitespace()) {
        compact = encoded
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        &compact
    } else {
        encoded
    };
    Some(
        STANDARD
            .decode(encoded)
            .map(Value::Bytes)
            .map_err(|error| not_base64(param, key, &error)),
    )
}

/// ``argument `data`: not valid base64 (invalid byte `!` at 3); give a
/// string, or {"base64": "<standard base64>"}``. A secret's bytes are not
/// shown, only where the fault is.
fn not_base64(param: &ParamSchema, key: &str, error: &base64::DecodeError) -> BindError {
    use base64::DecodeError;
    let byte = |byte: u8| {
        if param.secret {
            String::new()
        } else if byte.is_ascii_graphic() || byte == b' ' {
            format!(" `{}`", char::from(byte))
        } else {
            format!(" `{}`", byte.escape_ascii())
        }
    };
    let what = match *error {
        DecodeError::InvalidByte(at, b'=') => format!("padding `=` at {at} where none belongs"),
        DecodeError::InvalidByte(at, b @ (b'-' | b'_')) => format!(
            "invalid byte{} at {at}: URL-safe base64? use the standard alphabet, `+` and `/`",
            byte(b)
        ),
        DecodeError::InvalidByte(at, b) => format!("invalid byte{} at {at}", byte(b)),
        DecodeError::InvalidLength(symbols) => {
            format!("{symbols} characters end in a lone one; it comes in groups of 4")
        }
        DecodeError::InvalidLastSymbol(at, b) => format!(
            "the last symbol{} at {at} has bits no byte uses: cut short?",
            byte(b)
        ),
        DecodeError::InvalidPadding => {
            "missing `=` padding; it comes in groups of 4 characters".to_owned()
        }
    };
    BindError::new(
        BindErrorKind::InvalidValue,
        format!("argument `{key}`: not valid base64 ({what}); give {BYTES_FORMS}"),
    )
    .argument(key.to_owned())
}
