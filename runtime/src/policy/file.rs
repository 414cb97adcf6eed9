//! Reading a rules file: the TOML document, its `default`, each
//! `[[rule]]` and each rule's `examples`, into [`Rule`]s. Every problem is
//! reported (with its line and rule) and reading goes on, so that one load
//! shows them all; a rule with a problem is left out.

use std::collections::HashMap;

use serde_json::Value as Json;
use toml_edit::{Document, Item, TableLike};

use super::error::{Problems, did_you_mean};
use super::glob::NamePattern;
use super::model::{Action, Example, Expected, Rule};
use super::toml_read::{Reader, TableAt, item_to_json, kind_of, tables_in};
use super::when::read_when;

/// The keys a rules file may have at its top.
const TOP_KEYS: [&str; 2] = ["default", "rule"];
/// The keys a rule may have.
const RULE_KEYS: [&str; 8] = [
    "id", "command", "scope", "when", "decision", "reason", "examples", "approves",
];
/// The keys an example may have.
const EXAMPLE_KEYS: [&str; 3] = ["args", "expect", "scope"];

/// What a rules file says, as far as it could be read.
pub(crate) struct RulesFile {
    /// The decision when no rule matches.
    pub(crate) default: Action,
    /// The rules without problems, in file order.
    pub(crate) rules: Vec<Rule>,
}

/// Reads `text`, noting every problem in `reader`.
pub(crate) fn read_rules(text: &str, reader: &mut Reader) -> RulesFile {
    let mut file = RulesFile {
        default: Action::Ask,
        rules: Vec::new(),
    };
    let document = match Document::parse(text) {
        Ok(document) => document,
        Err(error) => {
            let line = reader.line(error.span(), 1);
            let message = error
                .message()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            reader.problem(line, None, format!("not valid TOML: {message}"));
            return file;
        }
    };
    let root = document.as_table();
    for (key, _) in root.iter() {
        if !TOP_KEYS.contains(&key) {
            let line = reader.key_line(root, key, 1);
            let message = format!(
                "unknown key {key:?}{}; a policy file has `default` and [[rule]] tables",
                did_you_mean(key, TOP_KEYS)
            );
            reader.problem(line, None, message);
        }
    }
    if let Some(item) = root.get("default") {
        let line = reader.key_line(root, "default", 1);
        match item.as_str().and_then(Action::from_name) {
            Some(action) => file.default = action,
            None => reader.problem(line, None, wrong_decision("default", item)),
        }
    }
    if let Some(item) = root.get("rule") {
        let line = reader.key_line(root, "rule", 1);
        file.rules = read_rule_tables(reader, item, line);
    }
    file
}

/// Every rule of the `rule` array.
fn read_rule_tables(reader: &mut Reader, item: &Item, line: usize) -> Vec<Rule> {
    let tables = match tables_in(item) {
        Some(Ok(tables)) => tables,
        Some(Err(number)) => {
            let message = format!(
                "rule {number} of the `rule` array is not a table; write each rule under a [[rule]] header"
            );
            reader.problem(line, None, message);
            return Vec::new();
        }
        None => {
            let message = format!(
                "`rule` must be an array of tables, not {}: write each rule under a [[rule]] header (two brackets)",
                kind_of(item)
            );
            reader.problem(line, None, message);
            return Vec::new();
        }
    };
    let mut rules = Vec::new();
    let mut ids: HashMap<String, usize> = HashMap::new();
    for (index, at) in tables.into_iter().enumerate() {
        let rule_line = reader.line(at.span.clone(), line);
        let id = at
            .table
            .get("id")
            .and_then(Item::as_str)
            .filter(|id| !id.trim().is_empty());
        // `#3` labels the third rule when it has no id, so no id may look
        // like that.
        let label = id.map_or_else(|| format!("#{}", index + 1), str::to_owned);
        if let Some(id) = id {
            if id.starts_with('#') {
                let key_line = reader.key_line(at.table, "id", rule_line);
                let message = format!(
                    "`id` may not start with '#' ({id:?}): `#` and a number label the rules that have no id"
                );
                reader.problem(key_line, Some(&label), message);
            }
            if let Some(first) = ids.get(id) {
                let message = format!(
                    "the id {id:?} is already the id of the rule on line {first}; give each rule its own id"
                );
                reader.problem(rule_line, Some(&label), message);
            } else {
                ids.insert(id.to_owned(), rule_line);
            }
        }
        if let Some(rule) = read_rule(reader, &at, rule_line, &label) {
            rules.push(rule);
        }
    }
    rules
}

/// One rule, or `None` when it has a problem (each one noted).
fn read_rule(reader: &mut Reader, at: &TableAt<'_>, line: usize, label: &str) -> Option<Rule> {
    let table = at.table;
    let problems_before = reader.problems.count();
    for (key, _) in table.iter() {
        if key == "default" {
            // TOML puts every key after a `[[rule]]` header in that rule.
            let key_line = reader.key_line(table, key, line);
            let message = "`default` belongs to the whole file, not to a rule: move it above the first [[rule]] header".to_owned();
            reader.problem(key_line, Some(label), message);
        } else if !RULE_KEYS.contains(&key) {
            let key_line = reader.key_line(table, key, line);
            let message = format!(
                "unknown key {key:?}{}; a rule's keys are {}",
                did_you_mean(key, RULE_KEYS),
                RULE_KEYS.join(", ")
            );
            reader.problem(key_line, Some(label), message);
        }
    }
    let id = required_text(
        reader,
        table,
        "id",
        label,
        line,
        "give it one, unique in the file: id = \"...\"",
    );
    let command_line = reader.key_line(table, "command", line);
    let command_hint = "name the command it applies to, or a glob of names: command = \"rm\"";
    let command = required_text(reader, table, "command", label, line, command_hint)
        .and_then(|text| pattern(reader, "command", text, label, command_line));
    let scope_line = reader.key_line(table, "scope", line);
    let scope = optional_text(reader, table, "scope", label, line)
        .map(|text| pattern(reader, "scope", text, label, scope_line));
    let action = match table.get("decision") {
        None => {
            let message = format!(
                "the rule has no `decision`; add one: decision = one of {}",
                Action::NAMES.join(", ")
            );
            reader.problem(line, Some(label), message);
            None
        }
        Some(item) => {
            let action = item.as_str().and_then(Action::from_name);
            if action.is_none() {
                let key_line = reader.key_line(table, "decision", line);
                reader.problem(key_line, Some(label), wrong_decision("decision", item));
            }
            action
        }
    };
    let reason = optional_text(reader, table, "reason", label, line).map(str::to_owned);
    let when = table.get("when").map_or_else(Vec::new, |item| {
        let when_line = reader.key_line(table, "when", line);
        read_when(reader, item, label, when_line)
    });
    let examples = table.get("examples").map_or_else(Vec::new, |item| {
        let examples_line = reader.key_line(table, "examples", line);
        read_examples(reader, item, label, examples_line)
    });
    let approves_line = reader.key_line(table, "approves", line);
    let approves = table.get("approves").map_or_else(Vec::new, |item| {
        read_approves(reader, item, action, label, approves_line)
    });
    if reader.problems.count() > problems_before {
        return None;
    }
    Some(Rule {
        id: id?.to_owned(),
        command: command?,
        command_line,
        scope: scope.flatten(),
        when,
        action: action?,
        reason,
        examples,
        approves,
        approves_line,
    })
}

/// A rule's `approves`: the ids of the ask rules it answers, one or a list.
fn read_approves(
    reader: &mut Reader,
    item: &Item,
    action: Option<Action>,
    rule: &str,
    line: usize,
) -> Vec<String> {
    if action.is_some_and(|action| action != Action::Allow) {
        let message = "only a rule whose decision is \"allow\" may have `approves`: it names the ask rules whose question it answers".to_owned();
        reader.problem(line, Some(rule), message);
        return Vec::new();
    }
    let ids: Option<Vec<String>> = match item.as_str() {
        Some(id) => Some(vec![id.to_owned()]),
        None => item.as_array().and_then(|list| {
            list.iter()
                .map(|id| id.as_str().map(str::to_owned))
                .collect()
        }),
    };
    match ids {
        Some(ids) if !ids.is_empty() && ids.iter().all(|id| !id.trim().is_empty()) => ids,
        _ => {
            let message = format!(
                "`approves` must be the id of an ask rule, or a list of them, not {}",
                kind_of(item)
            );
            reader.problem(line, Some(rule), message);
            Vec::new()
        }
    }
}

/// Notes each `approves` that names no ask rule of the file. Such an
/// `approves` answers nothing, and the file still loads: a person who
/// makes an ask rule a denial, or removes it, leaves the answers to its
/// question behind, and the stricter rules must take force.
pub(crate) fn check_approves(rules: &[Rule], notes: &mut Problems) {
    for rule in rules {
        for id in &rule.approves {
            match rules.iter().find(|other| &other.id == id) {
                Some(asked) if asked.action == Action::Ask => {}
                Some(other) => {
                    let message = format!(
                        "`approves` names {id:?}, whose decision is {:?}: only an ask rule's question can be answered, so it answers nothing",
                        other.action.name()
                    );
                    notes.add(Some(rule.approves_line), Some(&rule.id), message);
                }
                None => {
                    let ids: Vec<&str> = rules.iter().map(|rule| rule.id.as_str()).collect();
                    let message = format!(
                        "`approves` names {id:?}, but no rule has that id, so it answers nothing{}",
                        did_you_mean(id, ids)
                    );
                    notes.add(Some(rule.approves_line), Some(&rule.id), message);
                }
            }
        }
    }
}

/// A rule's `command` or `scope` pattern, or `None` with a problem noted.
fn pattern(
    reader: &mut Reader,
    key: &str,
    text: &str,
    rule: &str,
    line: usize,
) -> Option<NamePattern> {
    match NamePattern::new(text) {
        Ok(pattern) => Some(pattern),
        Err(message) => {
            reader.problem(line, Some(rule), format!("`{key}`: {message}"));
            None
        }
    }
}

/// The non-empty string under `key`, with a problem noted (ending in
/// `hint`) when there is none.
fn required_text<'a>(
    reader: &mut Reader,
    table: &'a dyn TableLike,
    key: &str,
    rule: &str,
    line: usize,
    hint: &str,
) -> Option<&'a str> {
    if table.get(key).is_none() {
        reader.problem(line, Some(rule), format!("the rule has no `{key}`; {hint}"));
        return None;
    }
    text_under(reader, table, key, rule, line, hint)
}

/// The string under `key` if there is one, with a problem noted when it is
/// not a string or is empty.
fn optional_text<'a>(
    reader: &mut Reader,
    table: &'a dyn TableLike,
    key: &str,
    rule: &str,
    line: usize,
) -> Option<&'a str> {
    text_under(
        reader,
        table,
        key,
        rule,
        line,
        "write what it should be, or leave the key out",
    )
}

/// The string under `key` if there is one, with a problem noted when it is
/// not a string, or is empty (ending in `hint`).
fn text_under<'a>(
    reader: &mut Reader,
    table: &'a dyn TableLike,
    key: &str,
    rule: &str,
    line: usize,
    hint: &str,
) -> Option<&'a str> {
    let item = table.get(key)?;
    let key_line = reader.key_line(table, key, line);
    match item.as_str() {
        Some(text) if !text.trim().is_empty() => Some(text),
        Some(_) => {
            reader.problem(key_line, Some(rule), format!("`{key}` is empty; {hint}"));
            None
        }
        None => {
            reader.problem(
                key_line,
                Some(rule),
                format!("`{key}` must be a string, not {}", kind_of(item)),
            );
            None
        }
    }
}

/// Why `key`'s value is not a decision.
fn wrong_decision(key: &str, item: &Item) -> String {
    let names = Action::NAMES.map(|name| format!("{name:?}")).join(", ");
    match item.as_str() {
        Some(text) => format!(
            "`{key}` is {text:?}{}; it must be one of {names}",
            did_you_mean(text, Action::NAMES)
        ),
        None => format!("`{key}` must be one of {names}, not {}", kind_of(item)),
    }
}

/// A rule's examples.
fn read_examples(reader: &mut Reader, item: &Item, rule: &str, line: usize) -> Vec<Example> {
    let tables = match tables_in(item) {
        Some(Ok(tables)) => tables,
        Some(Err(number)) => {
            let message = format!(
                "example {number} is not a table; write it as {{ args = {{ ... }}, expect = \"deny\" }}"
            );
            reader.problem(line, Some(rule), message);
            return Vec::new();
        }
        None => {
            let message = format!(
                "`examples` must be an array of tables, e.g. examples = [{{ args = {{ path = \"/etc\" }}, expect = \"deny\" }}], not {}",
                kind_of(item)
            );
            reader.problem(line, Some(rule), message);
            return Vec::new();
        }
    };
    let mut examples = Vec::new();
    for (index, at) in tables.into_iter().enumerate() {
        let example_line = reader.line(at.span, line);
        if let Some(example) = read_example(reader, at.table, index + 1, example_line, rule) {
            examples.push(example);
        }
    }
    examples
}

/// One example, or `None` when it has a problem (each one noted).
fn read_example(
    reader: &mut Reader,
    table: &dyn TableLike,
    number: usize,
    line: usize,
    rule: &str,
) -> Option<Example> {
    let wrong = |reader: &mut Reader, message: String| {
        reader.problem(line, Some(rule), format!("example {number}: {message}"));
    };
    let problems_before = reader.problems.count();
    for (key, _) in table.iter() {
        if !EXAMPLE_KEYS.contains(&key) {
            let message = format!(
                "unknown key {key:?}{}; an example's keys are {}",
                did_you_mean(key, EXAMPLE_KEYS),
                EXAMPLE_KEYS.join(", ")
            );
            wrong(reader, message);
        }
    }
    let args = match table.get("args").map(item_to_json) {
        None => Json::Object(Default::default()),
        Some(Ok(args @ Json::Object(_))) => args,
        Some(Ok(_)) => {
            wrong(
                reader,
                "`args` must be a table of arguments by name, e.g. args = { path = \"/etc\" }"
                    .into(),
            );
            Json::Null
        }
        Some(Err(message)) => {
            wrong(reader, format!("`args`: {message}"));
            Json::Null
        }
    };
    let expect = match table.get("expect") {
        None => None,
        Some(item) => item.as_str().and_then(Expected::from_name),
    };
    if expect.is_none() {
        let given = table.get("expect").and_then(Item::as_str);
        let hint = given.map_or_else(String::new, |text| did_you_mean(text, Expected::NAMES));
        let message = match given {
            Some(text) => format!(
                "`expect` is {text:?}{hint}; it must be one of {}",
                Expected::NAMES.join(", ")
            ),
            None => format!("give `expect`, one of {}", Expected::NAMES.join(", ")),
        };
        wrong(reader, message);
    }
    let scope = match table.get("scope") {
        None => None,
        Some(item) => match item.as_str() {
            Some(scope) => Some(scope.to_owned()),
            None => {
                wrong(
                    reader,
                    format!("`scope` must be a string, not {}", kind_of(item)),
                );
                None
            }
        },
    };
    if reader.problems.count() > problems_before {
        return None;
    }
    Some(Example {
        number,
        line,
        args,
        scope,
        expect: expect?,
    })
}
