//! Reading a rule's `when`: a table of arguments, each with a table of
//! tests (`when = { path = { not_under = "/workspace" } }`), into
//! [`ArgCondition`]s, with a problem reported for each key or value that
//! is wrong.

use regex::RegexBuilder;
use serde_json::{Number, Value as Json};
use toml_edit::Item;

use super::condition::{ArgCondition, Test, compare_numbers};
use super::error::did_you_mean;
use super::glob::ValueGlob;
use super::path::normalize;
use super::toml_read::{Reader, kind_of, value_to_json};

/// Every key a condition table may have.
pub(crate) const TEST_KEYS: [&str; 10] = [
    "equals",
    "one_of",
    "glob",
    "regex",
    "under",
    "not_under",
    "min",
    "max",
    "present",
    "absent",
];

/// The conditions of a rule's `when` (`rule` labels the rule in problems,
/// `line` is the line of its `when` key).
pub(crate) fn read_when(
    reader: &mut Reader,
    item: &Item,
    rule: &str,
    line: usize,
) -> Vec<ArgCondition> {
    let Some(table) = item.as_table_like() else {
        reader.problem(
            line,
            Some(rule),
            format!(
                "`when` must be a table of arguments and their tests, e.g. \
                 when = {{ path = {{ under = \"/workspace\" }} }}, not {}",
                kind_of(item)
            ),
        );
        return Vec::new();
    };
    let mut conditions = Vec::new();
    for (arg, tests) in table.iter() {
        let arg_line = reader.key_line(table, arg, line);
        if let Some(condition) = read_condition(reader, arg, tests, rule, arg_line) {
            conditions.push(condition);
        }
    }
    conditions
}

/// The tests on one argument, or `None` when any of them is wrong.
fn read_condition(
    reader: &mut Reader,
    arg: &str,
    item: &Item,
    rule: &str,
    line: usize,
) -> Option<ArgCondition> {
    let Some(table) = item.as_table_like() else {
        reader.problem(
            line,
            Some(rule),
            format!(
                "the condition on {arg:?} must be a table of tests, e.g. {arg} = {{ equals = ... }}, not {}",
                kind_of(item)
            ),
        );
        return None;
    };
    if table.is_empty() {
        reader.problem(
            line,
            Some(rule),
            format!(
                "the condition on {arg:?} has no test; give one of {}",
                TEST_KEYS.join(", ")
            ),
        );
        return None;
    }
    let mut tests = Vec::new();
    let mut wrong = false;
    for (key, value) in table.iter() {
        let key_line = reader.key_line(table, key, line);
        match read_test(key, value) {
            Ok(test) => tests.push(test),
            Err(message) => {
                reader.problem(
                    key_line,
                    Some(rule),
                    format!("the condition on {arg:?}: {message}"),
                );
                wrong = true;
            }
        }
    }
    if let Some(message) = bounds_cross(&tests) {
        reader.problem(
            line,
            Some(rule),
            format!("the condition on {arg:?}: {message}"),
        );
        wrong = true;
    }
    (!wrong).then(|| ArgCondition {
        arg: arg.to_owned(),
        line,
        tests,
    })
}

/// One test, from its key and value.
fn read_test(key: &str, item: &Item) -> Result<Test, String> {
    match key {
        "equals" => scalar(key, item).map(Test::Equals),
        "one_of" => {
            let values = item.as_array().ok_or_else(|| {
                format!("`one_of` takes an array of values, not {}", kind_of(item))
            })?;
            if values.is_empty() {
                return Err(
                    "`one_of` is empty, so it would never hold; list the values it allows".into(),
                );
            }
            values
                .iter()
                .map(|value| scalar(key, &Item::Value(value.clone())))
                .collect::<Result<_, _>>()
                .map(Test::OneOf)
        }
        "glob" => ValueGlob::new(text(key, item)?).map(Test::Glob),
        "regex" => regex(text(key, item)?),
        "under" | "not_under" => {
            let path = text(key, item)?;
            let folder = normalize(path).ok_or_else(|| {
                format!("`{key}` takes an absolute path (starting with /), not {path:?}")
            })?;
            Ok(if key == "under" {
                Test::Under(folder)
            } else {
                Test::NotUnder(folder)
            })
        }
        "min" => number(key, item).map(Test::Min),
        "max" => number(key, item).map(Test::Max),
        "present" => flag(key, item).map(Test::Present),
        "absent" => flag(key, item).map(|absent| Test::Present(!absent)),
        unknown => Err(format!(
            "unknown test {unknown:?}{}; a condition's tests are {}",
            did_you_mean(unknown, TEST_KEYS),
            TEST_KEYS.join(", ")
        )),
    }
}

/// A test's value that must be a string.
fn text<'a>(key: &str, item: &'a Item) -> Result<&'a str, String> {
    item.as_str()
        .ok_or_else(|| format!("`{key}` takes a string, not {}", kind_of(item)))
}

/// A test's value that must be a boolean.
fn flag(key: &str, item: &Item) -> Result<bool, String> {
    item.as_bool()
        .ok_or_else(|| format!("`{key}` takes true or false, not {}", kind_of(item)))
}

/// A test's value that must be a finite number.
fn number(key: &str, item: &Item) -> Result<Number, String> {
    match item.as_value().map(value_to_json) {
        Some(Ok(Json::Number(number))) => Ok(number),
        Some(Err(message)) if item.is_float() => Err(format!("`{key}`: {message}")),
        _ => Err(format!("`{key}` takes a number, not {}", kind_of(item))),
    }
}

/// A test's value that must be a string, number or boolean.
fn scalar(key: &str, item: &Item) -> Result<Json, String> {
    let json = match item.as_value().map(value_to_json) {
        Some(Ok(json)) => json,
        Some(Err(message)) => return Err(format!("`{key}`: {message}")),
        None => Json::Null,
    };
    match json {
        Json::String(_) | Json::Number(_) | Json::Bool(_) => Ok(json),
        _ => Err(format!(
            "`{key}` takes a string, number or boolean, not {} (a list argument is tested element by element)",
            kind_of(item)
        )),
    }
}

/// A `regex` test, anchored so that it must match the whole value, with
/// `.` matching any character, a newline too.
fn regex(source: &str) -> Result<Test, String> {
    let build = |pattern: &str| {
        RegexBuilder::new(pattern)
            .dot_matches_new_line(true)
            .build()
            .map_err(|error| format!("bad regex {source:?}: {}", regex_error(&error)))
    };
    // Compiled alone first, so that an error points into what was written.
    build(source)?;
    // A pattern in `(?x)` mode that ends in a `#` comment would swallow the
    // closing anchor; a newline ends the comment (and is blank in that
    // mode), so it is tried when the plain wrapping does not compile.
    let regex = build(&format!("^(?:{source})$"))
        .or_else(|error| build(&format!("^(?:{source}\n)$")).map_err(|_| error))?;
    Ok(Test::Regex {
        source: source.to_owned(),
        regex,
    })
}

/// The gist of a regex error on one line (its display spans several, with
/// the pattern and a caret).
fn regex_error(error: &regex::Error) -> String {
    let text = error.to_string();
    match text.lines().find_map(|line| line.strip_prefix("error: ")) {
        Some(gist) => gist.to_owned(),
        None => text.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

/// Why a `min` above a `max` is wrong, if the tests have one.
fn bounds_cross(tests: &[Test]) -> Option<String> {
    let min = tests.iter().find_map(|test| match test {
        Test::Min(number) => Some(number),
        _ => None,
    })?;
    let max = tests.iter().find_map(|test| match test {
        Test::Max(number) => Some(number),
        _ => None,
    })?;
    (compare_numbers(min, max) == Some(std::cmp::Ordering::Greater))
        .then(|| format!("`min` ({min}) is above `max` ({max}), so it would never hold"))
}
