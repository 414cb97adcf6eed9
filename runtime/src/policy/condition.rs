//! Conditions on a call's arguments (a rule's `when`), and how they are
//! decided on the arguments a guard sees.
//!
//! Decisions are three-valued ([`Truth`]): besides holding or failing, a
//! condition may be undecidable, when the value it looks at is not shown
//! whole (a secret reads `"<redacted>"`, long text is cut, bytes and large
//! lists show their size). A rule that hinges on an unknown counts as
//! matching when it denies or asks, and as not matching when it allows, so
//! what cannot be seen is never let through by it.

use std::cmp::Ordering;

use globset::GlobMatcher;
use regex::Regex;
use serde_json::{Number, Value};

use super::glob::glob_matches;
use super::path::{is_under, normalize};
use crate::ipc::REDACTED;

/// Whether a condition holds, fails, or cannot be told from what is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Truth {
    /// It holds.
    Holds,
    /// It does not hold.
    Fails,
    /// The value is not shown whole, so nobody can say.
    Unknown,
}

impl Truth {
    fn from_bool(holds: bool) -> Self {
        if holds { Truth::Holds } else { Truth::Fails }
    }

    /// Both: a failure wins over an unknown, an unknown over a hold.
    pub(crate) fn and(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::Fails, _) | (_, Truth::Fails) => Truth::Fails,
            (Truth::Unknown, _) | (_, Truth::Unknown) => Truth::Unknown,
            _ => Truth::Holds,
        }
    }

    fn not(self) -> Truth {
        match self {
            Truth::Holds => Truth::Fails,
            Truth::Fails => Truth::Holds,
            Truth::Unknown => Truth::Unknown,
        }
    }
}

/// One test on an argument's value: a key of its condition table.
#[derive(Debug, Clone)]
pub(crate) enum Test {
    /// `equals`: this string, number or boolean.
    Equals(Value),
    /// `one_of`: any of these.
    OneOf(Vec<Value>),
    /// `glob`: text matching the glob; a glob that begins with `/` is
    /// matched against the path normalized (a relative path never matches).
    Glob(GlobMatcher),
    /// `regex`: text the regular expression matches whole.
    Regex {
        /// As written, for messages.
        source: String,
        /// Anchored at both ends.
        regex: Regex,
    },
    /// `under`: an absolute path inside this (normalized) folder.
    Under(String),
    /// `not_under`: anything `under` would refuse.
    NotUnder(String),
    /// `min`: a number at least this.
    Min(Number),
    /// `max`: a number at most this.
    Max(Number),
    /// `present = true` (or `absent = false`): the call gives the argument;
    /// `false` for the reverse.
    Present(bool),
}

/// Every test a rule makes of one argument, as `when = { path = { ... } }`
/// writes them.
#[derive(Debug, Clone)]
pub(crate) struct ArgCondition {
    /// The argument's wire name.
    pub(crate) arg: String,
    /// The line of its key in the rules file.
    pub(crate) line: usize,
    /// All must hold.
    pub(crate) tests: Vec<Test>,
}

impl ArgCondition {
    /// Whether every test holds on the call's `args`.
    pub(crate) fn check(&self, args: &Value) -> Truth {
        let value = args.get(&self.arg);
        self.tests
            .iter()
            .fold(Truth::Holds, |truth, test| truth.and(test.check(value)))
    }

    /// The first test that does not hold, for saying why a rule missed.
    pub(crate) fn first_unmet(&self, args: &Value) -> Option<&Test> {
        let value = args.get(&self.arg);
        self.tests
            .iter()
            .find(|test| test.check(value) != Truth::Holds)
    }
}

impl Test {
    /// The key that writes this test in a condition table.
    pub(crate) fn key(&self) -> &'static str {
        match self {
            Test::Equals(_) => "equals",
            Test::OneOf(_) => "one_of",
            Test::Glob(_) => "glob",
            Test::Regex { .. } => "regex",
            Test::Under(_) => "under",
            Test::NotUnder(_) => "not_under",
            Test::Min(_) => "min",
            Test::Max(_) => "max",
            Test::Present(_) => "present",
        }
    }

    /// The test as the rules file writes it (`not_under = "/workspace"`).
    pub(crate) fn describe(&self) -> String {
        let operand = match self {
            Test::Equals(value) => value.to_string(),
            Test::OneOf(values) => Value::Array(values.clone()).to_string(),
            Test::Glob(matcher) => format!("{:?}", matcher.glob().glob()),
            Test::Regex { source, .. } => format!("{source:?}"),
            Test::Under(folder) | Test::NotUnder(folder) => format!("{folder:?}"),
            Test::Min(bound) | Test::Max(bound) => bound.to_string(),
            Test::Present(present) => present.to_string(),
        };
        format!("{} = {operand}", self.key())
    }

    /// Whether the test holds on an argument's value (`None` when the call
    /// does not give it).
    fn check(&self, value: Option<&Value>) -> Truth {
        // An explicit null and an empty list give nothing, as an argument
        // left out does: no value test holds on them, `absent` does.
        let given = value.filter(|value| match value {
            Value::Null => false,
            Value::Array(items) => !items.is_empty(),
            _ => true,
        });
        match (self, given) {
            (Test::Present(wanted), _) => Truth::from_bool(given.is_some() == *wanted),
            (_, None) => Truth::Fails,
            // The negation of `under` over the whole list: one path outside
            // is enough, so a list cannot hide a path among others.
            (Test::NotUnder(folder), Some(value)) => every_element(value, |text| {
                text.as_str().is_some_and(|path| is_under(path, folder))
            })
            .not(),
            (_, Some(value)) => every_element(value, |scalar| self.holds_on(scalar)),
        }
    }

    /// Whether a value test holds on one value (not a list).
    fn holds_on(&self, value: &Value) -> bool {
        match self {
            Test::Equals(expected) => same_value(value, expected),
            Test::OneOf(expected) => expected.iter().any(|one| same_value(value, one)),
            Test::Glob(matcher) => value.as_str().is_some_and(|text| {
                if matcher.glob().glob().starts_with('/') {
                    normalize(text).is_some_and(|path| glob_matches(matcher, &path))
                } else {
                    glob_matches(matcher, text)
                }
            }),
            Test::Regex { regex, .. } => value.as_str().is_some_and(|text| regex.is_match(text)),
            Test::Under(folder) => value.as_str().is_some_and(|path| is_under(path, folder)),
            Test::Min(bound) => compare(value, bound).is_some_and(Ordering::is_ge),
            Test::Max(bound) => compare(value, bound).is_some_and(Ordering::is_le),
            // Decided in `check`, on the whole value: `not_under` negates
            // `under` over a list, `present` asks whether there is a value.
            Test::NotUnder(_) | Test::Present(_) => false,
        }
    }
}

/// A list holds when every element does; anything else when it does.
/// An element not shown whole is unknown.
fn every_element(value: &Value, holds: impl Fn(&Value) -> bool) -> Truth {
    let one = |value: &Value| {
        if is_unseen(value) {
            Truth::Unknown
        } else {
            Truth::from_bool(holds(value))
        }
    };
    match value {
        Value::Array(items) => items
            .iter()
            .fold(Truth::Holds, |truth, item| truth.and(one(item))),
        other => one(other),
    }
}

/// Whether a value is a stand-in for one not shown whole: a secret, bytes
/// or a large value shown as its size, or text cut short. (A caller who
/// sends such text on purpose only makes its own call undecidable.)
fn is_unseen(value: &Value) -> bool {
    let Value::String(text) = value else {
        return false;
    };
    text == REDACTED
        || (text.starts_with('<') && text.ends_with(" bytes>"))
        || (text.ends_with(" bytes)") && text.contains("… ("))
}

/// Whether two scalars are equal; numbers by value (`1` equals `1.0`).
fn same_value(value: &Value, expected: &Value) -> bool {
    match (value, expected) {
        (Value::Number(_), Value::Number(bound)) => compare(value, bound) == Some(Ordering::Equal),
        _ => value == expected,
    }
}

/// A number against a bound: exactly for integers, as floats otherwise;
/// `None` for a value that is not a number.
fn compare(value: &Value, bound: &Number) -> Option<Ordering> {
    let value = value.as_number()?;
    let integer = |number: &Number| {
        number
            .as_i64()
            .map(i128::from)
            .or_else(|| number.as_u64().map(i128::from))
    };
    match (integer(value), integer(bound)) {
        (Some(value), Some(bound)) => Some(value.cmp(&bound)),
        _ => value.as_f64()?.partial_cmp(&bound.as_f64()?),
    }
}

#[cfg(test)]
#[path = "condition_tests.rs"]
mod tests;
