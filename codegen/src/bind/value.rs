//! One value typed by its parameter's kind: a shell word, or a JSON value,
//! checked against the type and turned into a [`Value`]; and the moves
//! between a list's values and JSON.

use std::borrow::Cow;

use super::bytes::{BYTES_FORMS, bytes_value};
use super::{BindError, describe_names, invalid, suggest_nearest};
use crate::args::Value;
use crate::schema::{ParamSchema, ValueKind};

/// The most a counted flag counts (clap counts into a `u8`).
pub(super) const MAX_COUNT: i64 = 255;

/// A word that spells a bool on the command line.
pub(super) fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// What a kind accepts, as the messages say it, for words and JSON alike.
pub(super) fn expectation(kind: &ValueKind) -> Cow<'static, str> {
    match kind {
        ValueKind::Int => "a whole number".into(),
        ValueKind::UInt => "a whole number, 0 or more".into(),
        ValueKind::Count => format!("a whole number from 0 to {MAX_COUNT}").into(),
        ValueKind::Float => "a number".into(),
        ValueKind::Bool => "`true` or `false`".into(),
        ValueKind::Json => "JSON".into(),
        ValueKind::Enum(values) => {
            format!("one of {}", describe_names(values.iter().map(|v| &**v))).into()
        }
        ValueKind::Path => "a path, as a string".into(),
        ValueKind::String => "a string".into(),
        ValueKind::Bytes => BYTES_FORMS.into(),
        #[allow(unreachable_patterns)]
        _ => "a string".into(),
    }
}

/// For a whole number too large (or too small) for its kind, the range the
/// kind takes, which says more than "a whole number" would.
fn whole_number_range(kind: &ValueKind, negative: bool) -> Option<String> {
    match kind {
        ValueKind::Int => Some(format!("a whole number from {} to {}", i64::MIN, i64::MAX)),
        ValueKind::UInt if !negative => Some(format!("a whole number from 0 to {}", u64::MAX)),
        _ => None,
    }
}

/// Whether a word spells a whole number, however large: digits after an
/// optional sign.
fn spells_whole_number(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A word typed by its parameter.
pub(super) fn word_value(
    param: &ParamSchema,
    spelled: &str,
    text: &str,
) -> Result<Value, BindError> {
    let refuse = |expected: &str| invalid(param, spelled, text, expected);
    let refuse_number = || match whole_number_range(&param.kind, text.starts_with('-')) {
        Some(range) if spells_whole_number(text) => refuse(&range),
        _ => refuse(&expectation(&param.kind)),
    };
    Ok(match &param.kind {
        ValueKind::String | ValueKind::Path => Value::String(text.to_owned()),
        ValueKind::Bytes => Value::Bytes(text.as_bytes().to_vec()),
        ValueKind::Int => Value::Int(text.parse().map_err(|_| refuse_number())?),
        ValueKind::Count => Value::Int(i64::from(text.parse::<u8>().map_err(|_| refuse_number())?)),
        ValueKind::UInt => {
            let n: u64 = text.parse().map_err(|_| refuse_number())?;
            match i64::try_from(n) {
                Ok(n) => Value::Int(n),
                Err(_) => Value::Json(serde_json::Value::from(n)),
            }
        }
        ValueKind::Float => {
            let x: f64 = text.parse().map_err(|_| refuse_number())?;
            if !x.is_finite() {
                return Err(refuse("a finite number"));
            }
            Value::Float(x)
        }
        ValueKind::Bool => {
            Value::Bool(parse_bool(text).ok_or_else(|| refuse(&expectation(&param.kind)))?)
        }
        ValueKind::Json => Value::Json(
            serde_json::from_str(text).map_err(|error| refuse(&format!("JSON ({error})")))?,
        ),
        ValueKind::Enum(values) => {
            if !values.iter().any(|v| v == text) {
                let error = refuse(&expectation(&param.kind));
                return Err(suggest_nearest(error, param, text, values));
            }
            Value::String(text.to_owned())
        }
        // Unknown future kinds bind as text.
        #[allow(unreachable_patterns)]
        _ => Value::String(text.to_owned()),
    })
}

/// A JSON argument checked against its parameter's type.
pub(super) fn json_value(
    param: &ParamSchema,
    key: &str,
    value: &serde_json::Value,
) -> Result<Value, BindError> {
    if param.kind == ValueKind::Bytes {
        return bytes_value(param, key, value)
            .unwrap_or_else(|| Err(refuse_json(param, key, value)));
    }
    typed_json(&param.kind, value).ok_or_else(|| refuse_json(param, key, value))
}

/// A JSON value as a value of `kind`, if it is one (for bytes, the string
/// form only: [`bytes_value`] takes the base64 one too).
fn typed_json(kind: &ValueKind, value: &serde_json::Value) -> Option<Value> {
    Some(match kind {
        ValueKind::String | ValueKind::Path => Value::String(value.as_str()?.to_owned()),
        ValueKind::Bytes => Value::Bytes(value.as_str()?.as_bytes().to_vec()),
        ValueKind::Int => Value::Int(value.as_i64()?),
        ValueKind::Count => match value.as_u64() {
            Some(n) if n <= MAX_COUNT as u64 => Value::Int(n as i64),
            _ => return None,
        },
        ValueKind::UInt => {
            let n = value.as_u64()?;
            i64::try_from(n).map_or_else(|_| Value::Json(value.clone()), Value::Int)
        }
        ValueKind::Float => Value::Float(value.as_f64()?),
        ValueKind::Bool => Value::Bool(value.as_bool()?),
        ValueKind::Json => Value::Json(value.clone()),
        ValueKind::Enum(values) => {
            let text = value.as_str()?;
            if !values.iter().any(|v| v == text) {
                return None;
            }
            Value::String(text.to_owned())
        }
        #[allow(unreachable_patterns)]
        _ => Value::Json(value.clone()),
    })
}

/// The error for a JSON value that is not of `param`'s kind: the value as
/// JSON, what the kind takes, and the fix when the value only has the wrong
/// JSON type (`"3"` for a number, `3.0` for a whole number, `1` for a
/// string). For a secret, neither the value nor a fix that would spell it.
fn refuse_json(param: &ParamSchema, key: &str, value: &serde_json::Value) -> BindError {
    let kind = &param.kind;
    let shown = value.to_string();
    let expected = match whole_number_range(kind, false) {
        Some(range) if value.is_u64() => range.into(),
        _ => expectation(kind),
    };
    let error = invalid(param, key, &shown, &expected);
    if let (ValueKind::Enum(values), Some(text)) = (kind, value.as_str()) {
        return suggest_nearest(error, param, text, values);
    }
    match json_fix(kind, value) {
        Some((fix, how)) => {
            let fix = if param.secret {
                match how {
                    "" => "write it as a whole number".to_owned(),
                    how => format!("write it{how}"),
                }
            } else {
                format!("write `{fix}`{how}")
            };
            let message = format!("{}; {fix}", error.message);
            BindError { message, ..error }
        }
        None => error,
    }
}

/// How to write `value` so that it is a `kind`, when only its JSON type is
/// wrong: the value rewritten, and how it differs (`", in quotes"`,
/// `", without quotes"`, or `""` for a whole number without its fraction).
fn json_fix(
    kind: &ValueKind,
    value: &serde_json::Value,
) -> Option<(serde_json::Value, &'static str)> {
    use serde_json::Value as Json;
    let (candidate, how) = match (kind, value) {
        (
            ValueKind::String | ValueKind::Path | ValueKind::Bytes | ValueKind::Enum(_),
            Json::Number(_) | Json::Bool(_),
        ) => (Json::String(value.to_string()), ", in quotes"),
        (_, Json::String(text)) => match serde_json::from_str(text.trim()) {
            Ok(parsed @ (Json::Number(_) | Json::Bool(_))) => (parsed, ", without quotes"),
            _ => return None,
        },
        // `3.0` for a whole number.
        (ValueKind::Int | ValueKind::UInt | ValueKind::Count, Json::Number(n)) => {
            let x = n.as_f64().filter(|x| x.fract() == 0.0)?;
            let whole = if (0.0..u64::MAX as f64).contains(&x) {
                Json::from(x as u64)
            } else if (i64::MIN as f64..0.0).contains(&x) {
                Json::from(x as i64)
            } else {
                return None;
            };
            (whole, "")
        }
        _ => return None,
    };
    typed_json(kind, &candidate)?;
    Some((candidate, how))
}

/// A value as an element of a JSON list.
pub(super) fn value_to_json(value: Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(b),
        Value::Int(n) => serde_json::Value::from(n),
        Value::Float(x) => serde_json::Value::from(x),
        Value::String(text) => serde_json::Value::String(text),
        Value::Json(json) => json,
        Value::Bytes(bytes) => match String::from_utf8(bytes) {
            Ok(text) => serde_json::Value::String(text),
            Err(error) => serde_json::Value::from(error.into_bytes()),
        },
    }
}

/// A JSON list element back as a value.
pub(super) fn json_to_value(json: serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::String(text) => Value::String(text),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::Int(i),
            (None, Some(x)) if !n.is_u64() => Value::Float(x),
            _ => Value::Json(serde_json::Value::Number(n)),
        },
        other => Value::Json(other),
    }
}

/// How messages name a JSON value's type.
pub(super) fn json_type_name(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
