//! Binding a JSON object of arguments, as an LLM tool call gives it.

use super::value::{json_type_name, json_value, value_to_json};
use super::{BindError, BindErrorKind, describe_names, excerpt, invalid};
use crate::args::{ToolArgs, Value};
use crate::schema::{ParamSchema, ToolSchema, closest};

impl ToolSchema {
    /// Binds a JSON object of arguments (an LLM tool call) to this schema.
    ///
    /// Keys are parameter names, aliases or long flag names (with `-` or
    /// `_`). Each value is checked against its type: integers for `int`,
    /// non-negative integers for `uint` and `count`, numbers for `float`,
    /// `true`/`false` for `bool`, strings for text, paths and enums (an
    /// enum's value must be one of its names), anything for `json`, and an
    /// array (or a single value) for a list. `null` counts as absent. Bytes
    /// take a string (its UTF-8 bytes) or `{"base64": "..."}` (standard
    /// base64 with padding) for bytes that are not text.
    ///
    /// ```
    /// use gangway_codegen::args::Value;
    /// use gangway_codegen::schema::{ParamSchema, ToolSchema, ValueKind};
    /// use serde_json::json;
    ///
    /// let schema = ToolSchema::new("checksum")
    ///     .with_param(ParamSchema::new("data", ValueKind::Bytes).stdin());
    /// let args = schema.parse_json(&json!({"data": "hi"})).unwrap();
    /// assert_eq!(args.named["data"], Value::Bytes(b"hi".to_vec()));
    /// let args = schema.parse_json(&json!({"data": {"base64": "/wA="}})).unwrap();
    /// assert_eq!(args.named["data"], Value::Bytes(vec![0xff, 0x00]));
    /// ```
    ///
    /// # Errors
    ///
    /// A [`BindError`] naming the argument, as for
    /// [`parse_words`](ToolSchema::parse_words).
    pub fn parse_json(&self, value: &serde_json::Value) -> Result<ToolArgs, BindError> {
        let serde_json::Value::Object(object) = value else {
            return Err(BindError::new(
                BindErrorKind::NotAnObject,
                format!(
                    "arguments must be a JSON object of named values, not {}",
                    json_type_name(value)
                ),
            ));
        };
        let mut args = ToolArgs::new();
        for (key, value) in object {
            let Some(param) = self.param_by_any_name(key) else {
                let names = self.params.iter().map(|p| &*p.name);
                let near = closest(key, names.clone());
                let shown = excerpt(key);
                let message = match near {
                    Some(near) => format!("unknown argument `{shown}`; did you mean `{near}`?"),
                    None => format!(
                        "unknown argument `{shown}`; {} takes {}",
                        self.name,
                        describe_names(names)
                    ),
                };
                return Err(BindError::new(BindErrorKind::UnknownFlag, message)
                    .argument(key.clone())
                    .suggest(near.map(str::to_owned)));
            };
            if value.is_null() {
                continue;
            }
            if args.named.contains_key(&*param.name) {
                return Err(BindError::new(
                    BindErrorKind::Duplicate,
                    format!(
                        "argument `{}` is given more than once (as `{key}`)",
                        param.name
                    ),
                )
                .argument(key.clone()));
            }
            let bound = if param.is_list() {
                let items: Vec<&serde_json::Value> = match value {
                    serde_json::Value::Array(items) => items.iter().collect(),
                    single => vec![single],
                };
                check_value_count(param, key, value, items.len())?;
                let mut list = Vec::with_capacity(items.len());
                for item in items {
                    list.push(value_to_json(json_value(param, key, item)?));
                }
                Value::Json(serde_json::Value::Array(list))
            } else {
                json_value(param, key, value)?
            };
            args.named.insert(param.name.to_string(), bound);
        }
        self.place_positionals(&[], None, &mut args)?;
        Ok(args)
    }
}

/// For a JSON list of `len` values: whether it fits the parameter's value
/// count (per occurrence, for a repeatable one).
fn check_value_count(
    param: &ParamSchema,
    key: &str,
    value: &serde_json::Value,
    len: usize,
) -> Result<(), BindError> {
    let Some(count) = param.consumes else {
        return Ok(());
    };
    let (min, max) = (usize::from(count.min), count.max.map(usize::from));
    let fits = if param.repeatable {
        match max {
            Some(k) if k == min && k > 0 => len.is_multiple_of(k),
            _ => true,
        }
    } else {
        len >= min && max.is_none_or(|max| len <= max)
    };
    if fits {
        return Ok(());
    }
    let values = |n: usize| format!("{n} value{}", if n == 1 { "" } else { "s" });
    let wanted = match (max, param.repeatable) {
        (Some(k), true) => format!("a list of values in groups of {k}"),
        (Some(max), false) if max == min => format!("a list of {}", values(min)),
        (Some(max), false) => format!("a list of {min} to {max} values"),
        (None, _) => format!("a list of at least {}", values(min)),
    };
    Err(invalid(
        param,
        key,
        &value.to_string(),
        &format!("{wanted}, not {len}"),
    ))
}
