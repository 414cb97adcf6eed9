//! Checking rules against the commands a host really has (its router's
//! [`Manifest`]): every `command` pattern must name one, every condition
//! must test an argument the command has, that is not secret, and in a way
//! that fits its type; every example must give only arguments the command
//! has.

use std::collections::BTreeSet;

use serde_json::Value;

use super::condition::{ArgCondition, Test};
use super::error::{Problems, did_you_mean};
use super::model::Rule;
use crate::tool::{Manifest, ParamSchema, ToolSchema, ValueKind};

/// Notes in `problems` everything in `rules` that does not fit `manifest`.
pub(crate) fn check_rules(rules: &[Rule], manifest: &Manifest, problems: &mut Problems) {
    let names: Vec<&str> = manifest
        .commands
        .iter()
        .map(|command| &*command.name)
        .collect();
    for rule in rules {
        let commands: Vec<&ToolSchema> = manifest
            .commands
            .iter()
            .filter(|command| rule.command.matches(&command.name))
            .collect();
        if commands.is_empty() {
            let pattern = rule.command.as_str();
            let message = format!(
                "`command` {pattern:?} matches no command of the host{}; its commands are {}",
                did_you_mean(pattern, names.iter().copied()),
                listed(names.iter().copied())
            );
            problems.add(Some(rule.command_line), Some(&rule.id), message);
            continue;
        }
        for condition in &rule.when {
            check_condition(rule, condition, &commands, problems);
        }
        check_example_args(rule, &commands, problems);
    }
}

/// The problems of one condition against each command its rule matches.
fn check_condition(
    rule: &Rule,
    condition: &ArgCondition,
    commands: &[&ToolSchema],
    problems: &mut Problems,
) {
    let arg = condition.arg.as_str();
    let mut lacking = Vec::new();
    let mut secret = Vec::new();
    let mut misfits = BTreeSet::new();
    for command in commands {
        match command.params.iter().find(|param| param.name == arg) {
            None => lacking.push(*command),
            Some(param) if param.secret => secret.push(&*command.name),
            Some(param) => misfits.extend(
                condition
                    .tests
                    .iter()
                    .filter_map(|test| misfit(test, param))
                    .map(|why| format!("the condition on {arg:?} of `{}`: {why}", command.name)),
            ),
        }
    }
    let mut report = |message: String| problems.add(Some(condition.line), Some(&rule.id), message);
    if !lacking.is_empty() {
        report(missing_argument(arg, &lacking, commands.len()));
    }
    if !secret.is_empty() {
        report(format!(
            "{arg:?} is a secret argument of {} (#[ipc(secret)]): a rule may not look at a secret \
             (a guard only ever sees \"<redacted>\"); drop this condition",
            listed(secret)
        ));
    }
    for misfit in misfits {
        report(misfit);
    }
}

/// The message for an argument that some matched commands lack.
fn missing_argument(arg: &str, lacking: &[&ToolSchema], matched: usize) -> String {
    if let [command] = lacking
        && matched == 1
    {
        if let Some(param) = command.param(arg) {
            return format!(
                "{arg:?} is another name of `{}`'s argument {:?}; a condition names an argument by its wire name: write {}",
                command.name, param.name, param.name
            );
        }
        let params = command.params.iter().map(|param| &*param.name);
        return format!(
            "`{}` has no argument {arg:?}{}; its arguments are {}",
            command.name,
            did_you_mean(arg, params.clone()),
            listed(params)
        );
    }
    format!(
        "{arg:?} is not an argument of {}, which this rule's `command` matches; narrow `command`, or drop the condition",
        listed(lacking.iter().map(|command| &*command.name))
    )
}

/// Why `test` cannot test `param` usefully, if it cannot.
fn misfit(test: &Test, param: &ParamSchema) -> Option<String> {
    let kind = &param.kind;
    let key = test.key();
    let is_text = matches!(
        kind,
        ValueKind::String | ValueKind::Path | ValueKind::Enum(_)
    );
    let is_number = matches!(
        kind,
        ValueKind::Int | ValueKind::UInt | ValueKind::Float | ValueKind::Count
    );
    let fits = match (test, kind) {
        (Test::Present(_), _) | (_, ValueKind::Json) => true,
        (_, ValueKind::Bytes) => {
            return Some(format!(
                "`{key}` cannot test bytes, which a guard sees only as their length; only present and absent can"
            ));
        }
        (Test::Equals(value), _) => return value_misfit(key, value, kind),
        (Test::OneOf(values), _) => {
            return values
                .iter()
                .find_map(|value| value_misfit(key, value, kind));
        }
        (Test::Glob(_) | Test::Regex { .. }, _) => is_text,
        (Test::Under(_) | Test::NotUnder(_), _) => {
            matches!(kind, ValueKind::String | ValueKind::Path)
        }
        (Test::Min(_) | Test::Max(_), _) => is_number,
    };
    (!fits).then(|| format!("`{key}` cannot test a value of type {}", kind.name()))
}

/// Why `value` can never equal a value of `kind`, if it cannot.
fn value_misfit(key: &str, value: &Value, kind: &ValueKind) -> Option<String> {
    let fits = match (value, kind) {
        (Value::String(name), ValueKind::Enum(names)) => {
            if names.iter().any(|known| known == name) {
                return None;
            }
            return Some(format!(
                "`{key}`: {name:?} is not one of its values{}; they are {}",
                did_you_mean(name, names.iter().map(|known| &**known)),
                listed(names.iter().map(|known| &**known))
            ));
        }
        (Value::String(_), ValueKind::String | ValueKind::Path) => true,
        (
            Value::Number(_),
            ValueKind::Int | ValueKind::UInt | ValueKind::Float | ValueKind::Count,
        ) => true,
        (Value::Bool(_), ValueKind::Bool) => true,
        _ => false,
    };
    (!fits).then(|| {
        format!(
            "`{key}` = {value} can never equal a value of type {}",
            kind.name()
        )
    })
}

/// Every example's arguments that none of the rule's commands has.
fn check_example_args(rule: &Rule, commands: &[&ToolSchema], problems: &mut Problems) {
    for example in &rule.examples {
        let Some(args) = example.args.as_object() else {
            continue;
        };
        for arg in args.keys() {
            let known = commands
                .iter()
                .any(|command| command.params.iter().any(|param| param.name == *arg));
            if known {
                continue;
            }
            let params: BTreeSet<&str> = commands
                .iter()
                .flat_map(|command| command.params.iter().map(|param| &*param.name))
                .collect();
            let message = format!(
                "example {}: {arg:?} is not an argument of {}{}; use the arguments' wire names",
                example.number,
                listed(commands.iter().map(|command| &*command.name)),
                did_you_mean(arg, params.iter().copied())
            );
            problems.add(Some(example.line), Some(&rule.id), message);
        }
    }
}

/// Names in backquotes, comma-separated, the first ten of them.
fn listed<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    let mut shown: Vec<String> = names
        .iter()
        .take(10)
        .map(|name| format!("`{name}`"))
        .collect();
    if names.len() > 10 {
        shown.push(format!("and {} more", names.len() - 10));
    }
    if shown.is_empty() {
        return "none".to_owned();
    }
    shown.join(", ")
}
