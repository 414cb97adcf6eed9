//! Parsed tool arguments ([`ToolArgs`]) and their clap-compatible argv
//! rendering.
//!
//! | module | what it holds |
//! | --- | --- |
//! | this one | [`Value`], [`ToolArgs`] and its getters |
//! | `argv` | [`ToolArgs`] rendered back as argv for a clap parser, and [`ToolArgvError`] |
//!
//! The binder ([`ToolSchema::parse_words`](crate::schema::ToolSchema::parse_words),
//! [`parse_json`](crate::schema::ToolSchema::parse_json)) produces a
//! `ToolArgs`; a clap-based tool turns it back into argv with
//! [`ToolArgs::to_argv`] and parses that, the "clap builtin pattern".
//!
//! ```
//! use gangway_codegen::args::{ToolArgs, Value};
//!
//! let mut args = ToolArgs::new();
//! args.flags.insert("v".to_owned());
//! args.named.insert("limit".to_owned(), Value::Int(5));
//! args.positional.push(Value::String("-rust-".to_owned()));
//! assert_eq!(args.to_argv().unwrap(), ["-v", "--limit=5", "--", "-rust-"]);
//! ```

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::schema::{ParamSchema, ToolSchema};

mod argv;

pub use argv::ToolArgvError;

/// One argument value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    /// No value.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// Text.
    String(String),
    /// Any JSON value (also how a list of values is held).
    Json(serde_json::Value),
    /// Raw bytes, for piped or binary input.
    Bytes(Vec<u8>),
}

/// Parsed arguments ready for tool execution.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolArgs {
    /// Positional arguments in order.
    pub positional: Vec<Value>,
    /// Named arguments by key (the parameter's name).
    pub named: BTreeMap<String, Value>,
    /// Boolean flags that are set (`-l`, `--force`), by parameter name.
    pub flags: HashSet<String>,
    /// Every word after the tool name, in source order: `Some` only for a
    /// verbatim tool ([`ArgBinding::Verbatim`](crate::schema::ArgBinding)),
    /// whose `positional` and `named` then stay empty.
    pub words: Option<Vec<Value>>,
}

impl ToolArgs {
    /// Empty arguments.
    pub fn new() -> ToolArgs {
        ToolArgs::default()
    }

    /// The positional argument at `index`.
    pub fn get_positional(&self, index: usize) -> Option<&Value> {
        self.positional.get(index)
    }

    /// The named argument `key`.
    pub fn get_named(&self, key: &str) -> Option<&Value> {
        self.named.get(key)
    }

    /// The named argument `name`, or else the positional at
    /// `positional_index`: for tools that accept both `cat file.txt` and
    /// `cat path=file.txt`.
    pub fn get(&self, name: &str, positional_index: usize) -> Option<&Value> {
        self.get_named(name)
            .or_else(|| self.get_positional(positional_index))
    }

    /// [`get`](ToolArgs::get) as text: strings as they are, numbers and bools
    /// as written, a JSON string's content, UTF-8 bytes; `None` for null,
    /// other JSON and bytes that are not UTF-8.
    pub fn get_string(&self, name: &str, positional_index: usize) -> Option<String> {
        match self.get(name, positional_index)? {
            Value::String(text) => Some(text.clone()),
            Value::Int(n) => Some(n.to_string()),
            Value::Float(x) => Some(x.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Json(serde_json::Value::String(text)) => Some(text.clone()),
            Value::Bytes(bytes) => String::from_utf8(bytes.clone()).ok(),
            Value::Null | Value::Json(_) => None,
        }
    }

    /// [`get`](ToolArgs::get) as a bool, read the way shell users and
    /// models write one: a set flag is `true`; a `Bool` is itself; an `Int`
    /// is `!= 0`; the text `true`/`yes`/`1` is `true` and `false`/`no`/`0`
    /// is `false` (ASCII case ignored, as in a JSON string); anything else,
    /// `None`.
    ///
    /// ```
    /// use gangway_codegen::args::{ToolArgs, Value};
    ///
    /// let mut args = ToolArgs::new();
    /// args.named.insert("force".into(), Value::String("yes".into()));
    /// args.named.insert("dry_run".into(), Value::Int(0));
    /// assert_eq!(args.get_bool("force", 0), Some(true));
    /// assert_eq!(args.get_bool("dry_run", 0), Some(false));
    /// assert_eq!(args.get_bool("missing", 9), None);
    /// ```
    pub fn get_bool(&self, name: &str, positional_index: usize) -> Option<bool> {
        if self.flags.contains(name) {
            return Some(true);
        }
        match self.get(name, positional_index)? {
            Value::Bool(b) | Value::Json(serde_json::Value::Bool(b)) => Some(*b),
            Value::Int(n) => Some(*n != 0),
            Value::Json(serde_json::Value::Number(n)) => n.as_i64().map(|n| n != 0),
            Value::String(text) | Value::Json(serde_json::Value::String(text)) => bool_text(text),
            _ => None,
        }
    }

    /// Whether the flag `name` is set, as kaish reads one: in `flags`; or
    /// a named value that is a `Bool(true)`, a non-empty string other than
    /// `"false"` and `"0"` (so `--color=auto` counts), or any other value
    /// (a number included: it was given).
    pub fn has_flag(&self, name: &str) -> bool {
        if self.flags.contains(name) {
            return true;
        }
        match self.named.get(name) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b) | Value::Json(serde_json::Value::Bool(b))) => *b,
            Some(Value::String(text) | Value::Json(serde_json::Value::String(text))) => {
                !text.is_empty() && text != "false" && text != "0"
            }
            Some(_) => true,
        }
    }

    /// Moves `Bool` entries of `named` into `flags`, so a clap parser with
    /// `bool` fields accepts them: `Bool(true)` becomes a set flag (clap sees
    /// `--key`), `Bool(false)` is dropped (an absent flag is false; keeping it
    /// would render `--key=false`, which clap refuses for a bool field).
    ///
    /// A `Bool` under a key the schema declares as taking a value is that
    /// option's literal value (`--command true`), so it stays in `named` and
    /// renders as `--command=true`.
    ///
    /// Idempotent; other named entries are left alone.
    pub fn flagify_bool_named(&mut self, schema: &ToolSchema) {
        let bool_keys: Vec<String> = self
            .named
            .iter()
            .filter(|(_, value)| matches!(value, Value::Bool(_)))
            .map(|(key, _)| key.clone())
            .filter(|key| schema.param(key).is_none_or(ParamSchema::is_flag))
            .collect();
        for key in bool_keys {
            if let Some(Value::Bool(true)) = self.named.remove(&key) {
                self.flags.insert(key);
            }
        }
    }
}

impl From<String> for Value {
    fn from(text: String) -> Self {
        Value::String(text)
    }
}

impl From<&str> for Value {
    fn from(text: &str) -> Self {
        Value::String(text.to_owned())
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::Int(n)
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Self {
        Value::Float(x)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<Vec<u8>> for Value {
    fn from(bytes: Vec<u8>) -> Self {
        Value::Bytes(bytes)
    }
}

/// A word that spells a bool: `true`/`yes`/`1` or `false`/`no`/`0`, ASCII
/// case ignored.
fn bool_text(text: &str) -> Option<bool> {
    const TRUE: [&str; 3] = ["true", "yes", "1"];
    const FALSE: [&str; 3] = ["false", "no", "0"];
    if TRUE.iter().any(|word| text.eq_ignore_ascii_case(word)) {
        Some(true)
    } else if FALSE.iter().any(|word| text.eq_ignore_ascii_case(word)) {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Empty arguments to fill in a test.
    pub(super) fn args() -> ToolArgs {
        ToolArgs::new()
    }

    #[test]
    fn getters() {
        let mut a = args();
        a.positional.push(Value::String("file.txt".into()));
        a.named.insert("n".into(), Value::Int(4));
        a.named.insert("b".into(), Value::String("false".into()));
        a.named.insert("raw".into(), Value::Bytes(vec![0xff]));
        a.flags.insert("all".into());
        assert_eq!(a.get("path", 0), Some(&Value::String("file.txt".into())));
        assert_eq!(a.get_string("n", 9).as_deref(), Some("4"));
        assert_eq!(a.get_string("raw", 9), None, "invalid UTF-8 is not text");
        assert_eq!(a.get_bool("b", 9), Some(false));
        assert_eq!(a.get_bool("all", 9), Some(true));
        assert!(a.has_flag("all"));
        assert!(a.has_flag("n"), "a non-zero Int is set");
        assert_eq!(a.get_positional(1), None);
    }

    #[test]
    fn bools_read_as_shell_users_and_models_write_them() {
        let mut a = args();
        let cases: [(Value, Option<bool>, bool); 16] = [
            (Value::String("true".into()), Some(true), true),
            (Value::String("yes".into()), Some(true), true),
            (Value::String("1".into()), Some(true), true),
            (Value::String("YES".into()), Some(true), true),
            (Value::String("false".into()), Some(false), false),
            (Value::String("no".into()), Some(false), true),
            (Value::String("0".into()), Some(false), false),
            (Value::String("False".into()), Some(false), true),
            (Value::String("auto".into()), None, true),
            (Value::String(String::new()), None, false),
            (Value::Int(0), Some(false), true),
            (Value::Int(-3), Some(true), true),
            (Value::Bool(false), Some(false), false),
            (Value::Json(serde_json::json!(true)), Some(true), true),
            (Value::Json(serde_json::json!("no")), Some(false), true),
            (Value::Float(1.0), None, true),
        ];
        for (value, as_bool, as_flag) in cases {
            a.named.insert("x".into(), value.clone());
            assert_eq!(a.get_bool("x", 9), as_bool, "get_bool of {value:?}");
            assert_eq!(a.has_flag("x"), as_flag, "has_flag of {value:?}");
        }
        assert_eq!(a.get_bool("missing", 9), None);
        assert!(!a.has_flag("missing"));
    }
}
