//! [`ToolArgs`] rendered back as argv for a clap parser: by the shape of
//! each name ([`ToolArgs::to_argv`], the "clap builtin pattern"), or by the
//! schema ([`ToolArgs::to_clap_argv`], what `#[tool]` binds with).

use std::fmt;

use super::{ToolArgs, Value};
use crate::schema::{ParamSchema, ToolSchema, ValueKind};

/// Why [`ToolArgs`] could not be rendered as argv.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolArgvError {
    /// A named argument holds raw bytes, which cannot cross the argv/text
    /// boundary.
    BinaryNamedValue {
        /// The argument's key.
        key: String,
        /// How many bytes it holds.
        byte_len: usize,
    },
    /// A text argument holds bytes that are not UTF-8.
    NotText {
        /// The argument's name.
        key: String,
        /// How many bytes it holds.
        byte_len: usize,
    },
    /// A positional argument is given while an earlier one is not, which a
    /// parser that fills positionals in order cannot take.
    PositionalGap {
        /// The earlier positional, missing.
        missing: String,
        /// The later positional, given.
        given: String,
    },
}

impl fmt::Display for ToolArgvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolArgvError::BinaryNamedValue { key, byte_len } => write!(
                f,
                "argument `{key}` holds {byte_len} bytes of binary data, which cannot be passed as a \
                 command-line word; read it raw from `ToolArgs::named` and leave it out of the argv \
                 with `to_argv_excluding(&[\"{key}\"])`"
            ),
            ToolArgvError::NotText { key, byte_len } => write!(
                f,
                "argument `{key}` takes text, but holds {byte_len} bytes that are not UTF-8"
            ),
            ToolArgvError::PositionalGap { missing, given } => write!(
                f,
                "`<{given}>` is given but `<{missing}>` before it is not; positionals fill in order, \
                 so give `<{missing}>` too"
            ),
        }
    }
}

impl std::error::Error for ToolArgvError {}

impl ToolArgs {
    /// The words of a verbatim tool as argv tokens for its own parser; empty
    /// for any other tool. A `Bytes` word becomes an inert placeholder, as
    /// [`to_argv`](ToolArgs::to_argv) does for a binary positional; the bytes
    /// stay at the same index in `words`.
    pub fn words_argv(&self) -> Vec<String> {
        self.words.iter().flatten().map(render_positional).collect()
    }

    /// Rebuilds a clap-friendly argv from parsed arguments, for
    /// `Parser::try_parse_from(once(tool_name).chain(args.to_argv()?))`.
    ///
    /// Layout: flags first (`-x` for a one-character name, `--name`
    /// otherwise, sorted), then named values as `--key=value` / `-k=value` in
    /// key order (a JSON array as the key repeated per element, which is how
    /// clap's `Vec` options bind), then, only when there are positionals,
    /// `--` and the positionals, so a value that begins with `-` stays a
    /// positional.
    ///
    /// Values render as: strings as they are, `Float` by Rust's `Display`,
    /// `Json` as compact JSON, `Null` as an empty string, and a positional
    /// `Bytes` as an inert `[binary: N bytes]` placeholder.
    ///
    /// # Errors
    ///
    /// [`ToolArgvError::BinaryNamedValue`] when a named value is `Bytes`:
    /// binary cannot cross the argv boundary. Exclude such keys with
    /// [`to_argv_excluding`](ToolArgs::to_argv_excluding) and read them raw.
    pub fn to_argv(&self) -> Result<Vec<String>, ToolArgvError> {
        self.to_argv_excluding(&[])
    }

    /// [`to_argv`](ToolArgs::to_argv) without the given named keys: neither
    /// their flag nor their value is rendered, so a `Bytes` value under an
    /// excluded key never errors. For a tool that reads some of its own
    /// parameters raw from `named` (to keep binary values binary) while
    /// binding the rest through clap. Only named keys (and flags of the same
    /// name) are excluded, never positionals.
    ///
    /// # Errors
    ///
    /// As [`to_argv`](ToolArgs::to_argv), for keys not excluded.
    pub fn to_argv_excluding(&self, exclude: &[&str]) -> Result<Vec<String>, ToolArgvError> {
        let mut argv =
            Vec::with_capacity(self.flags.len() + self.named.len() + self.positional.len() + 1);
        let mut flags: Vec<&String> = self
            .flags
            .iter()
            .filter(|flag| !exclude.contains(&flag.as_str()))
            .collect();
        flags.sort();
        for flag in flags {
            argv.push(flag_token(flag));
        }
        for (key, value) in &self.named {
            if exclude.contains(&key.as_str()) {
                continue;
            }
            match value {
                Value::Bytes(bytes) => {
                    return Err(ToolArgvError::BinaryNamedValue {
                        key: key.clone(),
                        byte_len: bytes.len(),
                    });
                }
                Value::Json(serde_json::Value::Array(items)) => {
                    for item in items {
                        argv.push(format!("{}={}", flag_token(key), render_json_item(item)));
                    }
                }
                other => argv.push(format!("{}={}", flag_token(key), render_scalar(other))),
            }
        }
        if !self.positional.is_empty() {
            argv.push("--".to_owned());
            argv.extend(self.positional.iter().map(render_positional));
        }
        Ok(argv)
    }
}

impl ToolArgs {
    /// Renders the arguments as argv for a clap parser that `schema`
    /// describes: what [`Tool::bind`](https://docs.rs/gangway-runtime) hands to
    /// `try_parse_from`. Like [`to_argv_excluding`](ToolArgs::to_argv_excluding),
    /// but the schema says how each argument is written, so nothing depends
    /// on the shape of a name:
    ///
    /// - every option as `--long=value` (a one-character long stays
    ///   `--x`), a set flag as `--long`, a count as `--long` repeated;
    /// - a list option once per element, and an option taking several words
    ///   per occurrence as `--long v1 v2` (the parser must allow hyphen
    ///   values there, as `#[tool]` arranges);
    /// - a JSON value as compact JSON, whole, even when it is an array;
    /// - positionals after `--`, in slot order, whether they were given by
    ///   position or by name; bytes for a text argument as their UTF-8 text.
    ///
    /// Keys in `exclude` are left out, positional or not.
    ///
    /// # Errors
    ///
    /// [`ToolArgvError::BinaryNamedValue`] for bytes under a non-bytes option
    /// that are not UTF-8 ([`ToolArgvError::NotText`] for a positional), and
    /// [`ToolArgvError::PositionalGap`] for a positional given after a
    /// missing one.
    pub fn to_clap_argv(
        &self,
        schema: &ToolSchema,
        exclude: &[&str],
    ) -> Result<Vec<String>, ToolArgvError> {
        let mut argv =
            Vec::with_capacity(self.flags.len() + self.named.len() + self.positional.len() + 1);
        for param in schema.params.iter().filter(|p| p.positional.is_none()) {
            let name = &*param.name;
            if exclude.contains(&name) {
                continue;
            }
            self.push_clap_option(param, &mut argv)?;
        }
        let positionals = self.clap_positionals(schema, exclude)?;
        if !positionals.is_empty() {
            argv.push("--".to_owned());
            argv.extend(positionals);
        }
        Ok(argv)
    }

    /// Pushes the words of one option (`param`, not positional) onto `argv`,
    /// as [`to_clap_argv`](ToolArgs::to_clap_argv) writes it.
    fn push_clap_option(
        &self,
        param: &ParamSchema,
        argv: &mut Vec<String>,
    ) -> Result<(), ToolArgvError> {
        let name = &*param.name;
        let flag = format!("--{}", param.long);
        if self.flags.contains(name) {
            argv.push(flag.clone());
        }
        let Some(value) = self.named.get(name) else {
            return Ok(());
        };
        if param.kind == ValueKind::Count {
            let times = match value {
                Value::Int(n) => usize::try_from(*n).unwrap_or(0).min(255),
                Value::Bool(true) => 1,
                _ => 0,
            };
            argv.extend(std::iter::repeat_n(flag, times));
            return Ok(());
        }
        if param.is_flag() {
            match value {
                Value::Bool(true) => argv.push(flag),
                Value::Bool(false) | Value::Null => {}
                other => argv.push(format!("{flag}={}", text_of(name, other)?)),
            }
            return Ok(());
        }
        let items: Vec<String> = match value {
            Value::Json(serde_json::Value::Array(items)) if param.is_list() => {
                items.iter().map(render_json_item).collect()
            }
            single => vec![text_of(name, single)?],
        };
        if param.takes_several() {
            let per = match param.consumes {
                Some(count) if count.max == Some(count.min) && count.min > 0 => {
                    usize::from(count.min)
                }
                _ => items.len().max(1),
            };
            for chunk in items.chunks(per) {
                argv.push(flag.clone());
                argv.extend(chunk.iter().cloned());
            }
        } else {
            argv.extend(items.into_iter().map(|item| format!("{flag}={item}")));
        }
        Ok(())
    }

    /// The positional words of [`to_clap_argv`](ToolArgs::to_clap_argv), in
    /// slot order, whether given by position or by name.
    fn clap_positionals(
        &self,
        schema: &ToolSchema,
        exclude: &[&str],
    ) -> Result<Vec<String>, ToolArgvError> {
        let mut positionals = Vec::new();
        let mut missing: Option<&str> = None;
        for param in schema.positionals() {
            let name = &*param.name;
            if exclude.contains(&name) {
                continue;
            }
            let Some(index) = param.positional.map(usize::from) else {
                continue;
            };
            let values: Vec<&Value> = if param.repeatable {
                let rest: Vec<&Value> = self.positional.iter().skip(index).collect();
                match (rest.is_empty(), self.named.get(name)) {
                    (true, Some(Value::Json(serde_json::Value::Array(items)))) => {
                        for item in items {
                            positionals.push(render_json_item(item));
                        }
                        if let (Some(missing), false) = (missing, items.is_empty()) {
                            return Err(gap(missing, name));
                        }
                        continue;
                    }
                    (true, Some(single)) => vec![single],
                    _ => rest,
                }
            } else {
                self.positional
                    .get(index)
                    .or_else(|| self.named.get(name))
                    .into_iter()
                    .collect()
            };
            if values.is_empty() {
                missing.get_or_insert(name);
                continue;
            }
            if let Some(missing) = missing {
                return Err(gap(missing, name));
            }
            for value in values {
                positionals.push(positional_text(name, value)?);
            }
        }
        Ok(positionals)
    }
}

fn gap(missing: &str, given: &str) -> ToolArgvError {
    ToolArgvError::PositionalGap {
        missing: missing.to_owned(),
        given: given.to_owned(),
    }
}

/// A positional value as one word: bytes must be UTF-8 text here.
fn positional_text(key: &str, value: &Value) -> Result<String, ToolArgvError> {
    match value {
        Value::Bytes(bytes) => match String::from_utf8(bytes.clone()) {
            Ok(text) => Ok(text),
            Err(_) => Err(ToolArgvError::NotText {
                key: key.to_owned(),
                byte_len: bytes.len(),
            }),
        },
        other => Ok(render_scalar(other)),
    }
}

/// A named value as one word: bytes must be UTF-8 text here.
fn text_of(key: &str, value: &Value) -> Result<String, ToolArgvError> {
    match value {
        Value::Bytes(bytes) => {
            String::from_utf8(bytes.clone()).map_err(|_| ToolArgvError::BinaryNamedValue {
                key: key.to_owned(),
                byte_len: bytes.len(),
            })
        }
        other => Ok(render_scalar(other)),
    }
}

/// `-x` for a one-character name, `--name` otherwise.
fn flag_token(name: &str) -> String {
    if name.chars().count() == 1 {
        format!("-{name}")
    } else {
        format!("--{name}")
    }
}

/// A positional or verbatim word: bytes become an inert placeholder.
fn render_positional(value: &Value) -> String {
    match value {
        Value::Bytes(bytes) => format!("[binary: {} bytes]", bytes.len()),
        other => render_scalar(other),
    }
}

fn render_scalar(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Int(n) => n.to_string(),
        Value::Float(x) => x.to_string(),
        Value::String(text) => text.clone(),
        Value::Json(json) => json.to_string(),
        Value::Bytes(bytes) => format!("[binary: {} bytes]", bytes.len()),
    }
}

/// One element of a JSON array under a named key: a string as its text,
/// anything else as compact JSON.
fn render_json_item(item: &serde_json::Value) -> String {
    match item {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::tests::args;
    use crate::schema::ParamSchema;

    #[test]
    fn flags_come_first_sorted_short_and_long() {
        let mut a = args();
        a.flags.insert("verbose".into());
        a.flags.insert("l".into());
        a.named.insert("limit".into(), Value::Int(3));
        assert_eq!(a.to_argv().unwrap(), ["-l", "--verbose", "--limit=3"]);
    }

    #[test]
    fn named_values_in_key_order_then_positionals_after_double_dash() {
        let mut a = args();
        a.named.insert("z".into(), Value::String("last".into()));
        a.named.insert("alpha".into(), Value::Float(1.5));
        a.named
            .insert("json".into(), Value::Json(serde_json::json!({"k": [1, 2]})));
        a.named.insert("none".into(), Value::Null);
        a.positional.push(Value::String("-x".into()));
        a.positional.push(Value::Int(-3));
        assert_eq!(
            a.to_argv().unwrap(),
            [
                "--alpha=1.5",
                r#"--json={"k":[1,2]}"#,
                "--none=",
                "-z=last",
                "--",
                "-x",
                "-3"
            ]
        );
    }

    #[test]
    fn no_double_dash_without_positionals() {
        let mut a = args();
        a.named.insert("limit".into(), Value::Int(1));
        assert_eq!(a.to_argv().unwrap(), ["--limit=1"]);
        assert!(args().to_argv().unwrap().is_empty());
    }

    #[test]
    fn floats_render_with_display() {
        let mut a = args();
        a.named.insert("x".into(), Value::Float(1.0));
        a.named.insert("y".into(), Value::Float(1e21));
        a.named.insert("w".into(), Value::Float(0.1 + 0.2));
        assert_eq!(
            a.to_argv().unwrap(),
            [
                "-w=0.30000000000000004",
                "-x=1",
                "-y=1000000000000000000000"
            ]
        );
    }

    #[test]
    fn arrays_repeat_the_key() {
        let mut a = args();
        a.named.insert(
            "tag".into(),
            Value::Json(serde_json::json!(["a", 2, null, {"b": true}])),
        );
        assert_eq!(
            a.to_argv().unwrap(),
            ["--tag=a", "--tag=2", "--tag=", r#"--tag={"b":true}"#]
        );
    }

    #[test]
    fn binary_named_is_an_error_naming_the_fix() {
        let mut a = args();
        a.named
            .insert("content".into(), Value::Bytes(vec![0, 1, 2]));
        let err = a.to_argv().unwrap_err();
        assert_eq!(
            err,
            ToolArgvError::BinaryNamedValue {
                key: "content".into(),
                byte_len: 3
            }
        );
        assert!(
            err.to_string()
                .contains("to_argv_excluding(&[\"content\"])"),
            "{err}"
        );
        a.named.insert("limit".into(), Value::Int(2));
        assert_eq!(a.to_argv_excluding(&["content"]).unwrap(), ["--limit=2"]);
    }

    #[test]
    fn binary_positional_is_a_placeholder() {
        let mut a = args();
        a.positional.push(Value::Bytes(vec![0; 10]));
        assert_eq!(a.to_argv().unwrap(), ["--", "[binary: 10 bytes]"]);
    }

    #[test]
    fn excluding_removes_flag_and_value_but_never_positionals() {
        let mut a = args();
        a.flags.insert("force".into());
        a.named.insert("data".into(), Value::Bytes(vec![9]));
        a.positional.push(Value::String("data".into()));
        assert_eq!(
            a.to_argv_excluding(&["data", "force"]).unwrap(),
            ["--", "data"]
        );
    }

    #[test]
    fn flagify_moves_bools_but_keeps_option_values() {
        let schema = ToolSchema::new("spawn")
            .with_param(ParamSchema::new("force", ValueKind::Bool))
            .with_param(ParamSchema::new("dry-run", ValueKind::Bool))
            .with_param(ParamSchema::new("command", ValueKind::String));
        let mut a = args();
        a.named.insert("force".into(), Value::Bool(true));
        a.named.insert("dry-run".into(), Value::Bool(false));
        a.named.insert("command".into(), Value::Bool(true));
        a.named.insert("undeclared".into(), Value::Bool(true));
        a.named.insert("limit".into(), Value::Int(1));
        a.flagify_bool_named(&schema);
        let once = a.clone();
        a.flagify_bool_named(&schema);
        assert_eq!(a, once, "idempotent");
        assert!(a.flags.contains("force") && a.flags.contains("undeclared"));
        assert!(!a.flags.contains("dry-run") && !a.named.contains_key("dry-run"));
        assert_eq!(a.named.get("command"), Some(&Value::Bool(true)));
        assert_eq!(
            a.to_argv().unwrap(),
            ["--force", "--undeclared", "--command=true", "--limit=1"]
        );
    }

    #[test]
    fn words_render_for_a_verbatim_parser() {
        let mut a = args();
        assert!(a.words_argv().is_empty(), "not verbatim");
        a.words = Some(vec![
            Value::String("-la".into()),
            Value::Bytes(vec![1, 2]),
            Value::Int(3),
        ]);
        assert_eq!(a.words_argv(), ["-la", "[binary: 2 bytes]", "3"]);
    }
}
