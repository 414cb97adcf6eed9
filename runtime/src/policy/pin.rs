//! What a person's answer covers: the command, the values of the
//! arguments the asking rules test (every argument the call gives, when
//! the default asked), and the questions it answers. A "session" answer
//! lets through later calls asked the same questions with the same values;
//! an "always" answer writes them into a rule.

use std::collections::BTreeMap;

use serde_json::Value;

use super::condition::is_unseen;
use super::model::Rule;
use crate::ipc::{CallInfo, REDACTED};

/// The value an answer holds an argument to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Pinned {
    /// This text, number or boolean.
    Equals(Value),
    /// A list of these (each element one of them, for a rule).
    List(Vec<Value>),
    /// Not given.
    Absent,
    /// A secret: shown to no one, so held to nothing.
    Secret,
}

/// The command and argument values an answer covers, and the questions
/// it answers (so that a question added later is asked).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Covered {
    pub(crate) command: String,
    /// The ids of the rules that asked; empty when the default did.
    pub(crate) asked_by: Vec<String>,
    pub(crate) args: BTreeMap<String, Pinned>,
}

impl Covered {
    /// What a person's answer to `call` covers, asked by the rules
    /// `asking` (none: the default asked). `Err` says why it cannot be held
    /// to values: one of them is not shown whole (text cut short, a size in
    /// place of bytes or a large list, a number that is not finite, a map).
    pub(crate) fn of(call: &CallInfo, asking: &[&Rule]) -> Result<Covered, String> {
        let names: Vec<&str> = if asking.is_empty() {
            call.args()
                .as_object()
                .map(|args| args.keys().map(String::as_str).collect())
                .unwrap_or_default()
        } else {
            asking
                .iter()
                .flat_map(|rule| rule.when.iter().map(|condition| condition.arg.as_str()))
                .collect()
        };
        let mut args = BTreeMap::new();
        for name in names {
            let pinned = pin(name, call.args().get(name))?;
            args.insert(name.to_owned(), pinned);
        }
        Ok(Covered {
            command: call.command().to_owned(),
            asked_by: asking.iter().map(|rule| rule.id.clone()).collect(),
            args,
        })
    }

    /// Whether a later `call` has the command and the values this covers.
    pub(crate) fn covers(&self, later: &Covered) -> bool {
        self == later
    }
}

/// The value `name` is held to, given `value`.
fn pin(name: &str, value: Option<&Value>) -> Result<Pinned, String> {
    let not_whole =
        || format!("the value of `{name}` is not shown whole, so an answer cannot be held to it");
    match value {
        None | Some(Value::Null) => Ok(Pinned::Absent),
        Some(Value::Array(items)) if items.is_empty() => Ok(Pinned::Absent),
        Some(Value::String(text)) if text == REDACTED => Ok(Pinned::Secret),
        Some(value) if is_unseen(value) => Err(not_whole()),
        Some(Value::Array(items)) => {
            if items.iter().all(|item| is_scalar(item) && !is_unseen(item)) {
                Ok(Pinned::List(items.clone()))
            } else {
                Err(not_whole())
            }
        }
        Some(value) if is_scalar(value) => Ok(Pinned::Equals(value.clone())),
        Some(_) => Err(not_whole()),
    }
}

/// Text, a number or a boolean.
fn is_scalar(value: &Value) -> bool {
    matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_))
}
