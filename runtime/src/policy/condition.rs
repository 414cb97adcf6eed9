//! Conditions on a call's arguments (a rule's `when`), and how they are
//! decided on the arguments a guard sees.
//!
//! Decisions are three-valued ([`Truth`]): besides holding or failing, a
//! condition may be undecidable, when the value it looks at is not shown
//! whole (a secret reads `"<redacted>"`, long text is cut, bytes and large
//! lists show their size). A rule that hinges on an unknown counts as
//! matching when it denies or asks, and as not matching when it allows, so
//! what cannot be seen is never let through by it.

use std::cell::OnceCell;
use std::cmp::Ordering;

use regex::Regex;
use serde_json::{Number, Value};

use super::glob::ValueGlob;
use super::path::{is_under_normal, normalize};
use crate::ipc::{NOT_FINITE, REDACTED};

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

    /// Either: a hold wins over an unknown, an unknown over a failure.
    pub(crate) fn or(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::Holds, _) | (_, Truth::Holds) => Truth::Holds,
            (Truth::Unknown, _) | (_, Truth::Unknown) => Truth::Unknown,
            _ => Truth::Fails,
        }
    }

    fn not(self) -> Truth {
        match self {
            Truth::Holds => Truth::Fails,
            Truth::Fails => Truth::Holds,
            Truth::Unknown => Truth::Unknown,
        }
    }

    /// `and` over `truths`, stopping at the first failure.
    pub(crate) fn all(truths: impl IntoIterator<Item = Truth>) -> Truth {
        let mut all = Truth::Holds;
        for truth in truths {
            all = all.and(truth);
            if all == Truth::Fails {
                break;
            }
        }
        all
    }

    /// `or` over `truths`, stopping at the first hold.
    fn any(truths: impl IntoIterator<Item = Truth>) -> Truth {
        let mut any = Truth::Fails;
        for truth in truths {
            any = any.or(truth);
            if any == Truth::Holds {
                break;
            }
        }
        any
    }
}

/// How the elements of a list argument combine, from the rule's decision:
/// an allow rule lets a list through only when every element passes (so
/// no element slips through), a deny or ask rule stops it when any
/// element does (so no element hides among others).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Elements {
    /// Every element must pass: for allow rules.
    Every,
    /// One element passing is enough: for deny and ask rules.
    Any,
}

/// One test on an argument's value: a key of its condition table.
#[derive(Debug, Clone)]
pub(crate) enum Test {
    /// `equals`: this string, number or boolean.
    Equals(Value),
    /// `one_of`: any of these.
    OneOf(Vec<Value>),
    /// `glob`: text matching the glob; an absolute path is matched
    /// normalized, and a relative one is unknown to a glob of absolute
    /// paths (and to any glob, when it has a `.` or `..` component).
    Glob(ValueGlob),
    /// `regex`: text the regular expression matches whole.
    Regex {
        /// As written, for messages.
        source: String,
        /// Anchored at both ends.
        regex: Regex,
    },
    /// `under`: an absolute path inside this (normalized) folder; unknown
    /// for a relative path.
    Under(String),
    /// `not_under`: an absolute path outside this folder, or a value that
    /// is not text; unknown for a relative path.
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
    /// Whether every test holds on the call's `args`, the elements of a
    /// list combined as `elements` says.
    pub(crate) fn check(&self, args: &Value, elements: Elements) -> Truth {
        check_tests(&self.tests, args.get(&self.arg), elements)
    }

    /// The first test that does not hold, for saying why a rule missed.
    pub(crate) fn first_unmet(&self, args: &Value, elements: Elements) -> Option<&Test> {
        let value = args.get(&self.arg);
        self.tests
            .iter()
            .find(|test| check_tests(std::slice::from_ref(*test), value, elements) != Truth::Holds)
    }
}

/// Whether all of `tests` hold on an argument's value (`None` when the call
/// does not give it): `present` on the whole value, the others on each
/// element of a list (all of them on the same element), combined as
/// `elements` says.
fn check_tests(tests: &[Test], value: Option<&Value>, elements: Elements) -> Truth {
    // An explicit null and an empty list give nothing, as an argument left
    // out does: no value test holds on them, `absent` does.
    let given = value.filter(|value| match value {
        Value::Null => false,
        Value::Array(items) => !items.is_empty(),
        _ => true,
    });
    let mut value_tests = false;
    for test in tests {
        match test {
            Test::Present(wanted) if given.is_some() != *wanted => return Truth::Fails,
            Test::Present(_) => {}
            _ => value_tests = true,
        }
    }
    let Some(value) = given.filter(|_| value_tests) else {
        return Truth::from_bool(!value_tests);
    };
    let one = |item: &Value| check_element(tests, item);
    match (value, elements) {
        (Value::Array(items), Elements::Every) => Truth::all(items.iter().map(one)),
        (Value::Array(items), Elements::Any) => Truth::any(items.iter().map(one)),
        (other, _) => one(other),
    }
}

/// Whether every value test holds on one element (or a value that is not
/// a list); unknown for an element not shown whole.
fn check_element(tests: &[Test], value: &Value) -> Truth {
    if is_unseen(value) {
        return Truth::Unknown;
    }
    let element = Element {
        value,
        normal: OnceCell::new(),
    };
    Truth::all(tests.iter().map(|test| test.holds_on(&element)))
}

/// One value tested, with its path normalized once for all the tests.
struct Element<'a> {
    value: &'a Value,
    /// The value normalized, when it is text that is an absolute path.
    normal: OnceCell<Option<String>>,
}

impl Element<'_> {
    /// The value as a path: `Ok` with it normalized when it is absolute,
    /// `Err(true)` when it is a relative path, `Err(false)` when it is not
    /// text.
    fn path(&self) -> Result<&str, bool> {
        let text = self.value.as_str().ok_or(false)?;
        self.normal
            .get_or_init(|| normalize(text))
            .as_deref()
            .ok_or(true)
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
            Test::Glob(glob) => format!("{:?}", glob.as_str()),
            Test::Regex { source, .. } => format!("{source:?}"),
            Test::Under(folder) | Test::NotUnder(folder) => format!("{folder:?}"),
            Test::Min(bound) | Test::Max(bound) => bound.to_string(),
            Test::Present(present) => present.to_string(),
        };
        format!("{} = {operand}", self.key())
    }

    /// Whether a value test holds on one element (or a value that is not
    /// a list). A relative path is unknown to the path tests: where it
    /// points depends on a working directory the rule cannot see.
    fn holds_on(&self, element: &Element<'_>) -> Truth {
        let value = element.value;
        let under = |folder: &str| match element.path() {
            Ok(path) => Truth::from_bool(is_under_normal(path, folder)),
            Err(true) => Truth::Unknown,
            Err(false) => Truth::Fails,
        };
        match self {
            Test::Equals(expected) => Truth::from_bool(same_value(value, expected)),
            Test::OneOf(expected) => {
                Truth::from_bool(expected.iter().any(|one| same_value(value, one)))
            }
            Test::Glob(glob) => match (element.path(), value.as_str()) {
                (Ok(path), _) => Truth::from_bool(glob.matches(path)),
                (_, None) => Truth::Fails,
                (_, Some(_)) if glob.is_rooted() => Truth::Unknown,
                (_, Some(text)) if has_dot_component(text) => Truth::Unknown,
                (_, Some(text)) => Truth::from_bool(glob.matches(text)),
            },
            Test::Regex { regex, .. } => {
                Truth::from_bool(value.as_str().is_some_and(|text| regex.is_match(text)))
            }
            Test::Under(folder) => under(folder),
            Test::NotUnder(folder) => under(folder).not(),
            Test::Min(bound) => {
                Truth::from_bool(compare(value, bound).is_some_and(Ordering::is_ge))
            }
            Test::Max(bound) => {
                Truth::from_bool(compare(value, bound).is_some_and(Ordering::is_le))
            }
            // Decided on the whole value, in `check_tests`.
            Test::Present(_) => Truth::Holds,
        }
    }
}

/// Whether relative `text` has a `.` or `..` component, so that what it
/// names cannot be told from its text.
fn has_dot_component(text: &str) -> bool {
    text.split('/').any(|part| part == "." || part == "..")
}

/// Whether a value is a stand-in for one not shown whole: a secret, bytes
/// or a large value shown as its size, or text cut short. (A caller who
/// sends such text on purpose only makes its own call undecidable.)
pub(crate) fn is_unseen(value: &Value) -> bool {
    let Value::String(text) = value else {
        return false;
    };
    text == REDACTED
        || text == NOT_FINITE
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

/// A number against a bound, exactly (an integer against a float too);
/// `None` for a value that is not a number.
fn compare(value: &Value, bound: &Number) -> Option<Ordering> {
    compare_numbers(value.as_number()?, bound)
}

/// Two numbers, compared exactly: integers as integers, an integer and a
/// float without rounding the integer to a float.
pub(crate) fn compare_numbers(value: &Number, bound: &Number) -> Option<Ordering> {
    match (integer(value), integer(bound)) {
        (Some(value), Some(bound)) => Some(value.cmp(&bound)),
        (Some(value), None) => integer_against_float(value, bound.as_f64()?),
        (None, Some(bound)) => integer_against_float(bound, value.as_f64()?).map(Ordering::reverse),
        (None, None) => value.as_f64()?.partial_cmp(&bound.as_f64()?),
    }
}

/// A number that is an integer, as one.
fn integer(number: &Number) -> Option<i128> {
    number
        .as_i64()
        .map(i128::from)
        .or_else(|| number.as_u64().map(i128::from))
}

/// An integer against a float, exactly.
fn integer_against_float(value: i128, float: f64) -> Option<Ordering> {
    // 2^127: every float below it (and at or above -2^127) floors to an i128.
    const LIMIT: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if float.is_nan() {
        return None;
    }
    if float >= LIMIT {
        return Some(Ordering::Less);
    }
    if float < -LIMIT {
        return Some(Ordering::Greater);
    }
    let floor = float.floor();
    // Exact: `floor` is integral and within range.
    #[allow(clippy::cast_possible_truncation)]
    let whole = floor as i128;
    if floor == float {
        Some(value.cmp(&whole))
    } else if value <= whole {
        Some(Ordering::Less)
    } else {
        Some(Ordering::Greater)
    }
}

#[cfg(test)]
#[path = "condition_tests.rs"]
mod tests;
