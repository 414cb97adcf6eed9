//! Checking each rule against its own `examples` when the file loads: an
//! example's arguments are put to its rule alone (not to the other rules,
//! nor the default), and what the rule says must be what the example
//! expects. An example without a `scope` leaves the rule's `scope` aside;
//! one with a `scope` is a call from that scope.

use serde_json::Value;

use super::condition::Truth;
use super::evaluate::{conditions_match, elements_for, scope_matches};
use super::model::{Example, Expected, Rule};
use super::toml_read::Reader;

/// Notes a problem in `reader` for every example whose outcome differs
/// from its `expect`.
pub(crate) fn check_examples(rules: &[Rule], reader: &mut Reader) {
    for rule in rules {
        for example in &rule.examples {
            let outcome = outcome(rule, example);
            if outcome != example.expect {
                let message = format!(
                    "example {} expects {} but the rule gives {}{}",
                    example.number,
                    example.expect.name(),
                    outcome.name(),
                    why(rule, example, outcome)
                );
                reader.problem(example.line, Some(&rule.id), message);
            }
        }
    }
}

/// What the rule alone says of the example.
fn outcome(rule: &Rule, example: &Example) -> Expected {
    let in_scope = match &example.scope {
        Some(scope) => scope_matches(rule, Some(scope)),
        None => true,
    };
    if in_scope && conditions_match(rule, &example.args) {
        Expected::Decides(rule.action)
    } else {
        Expected::NoMatch
    }
}

/// Why the rule gave `outcome`, in a few words after the message.
fn why(rule: &Rule, example: &Example, outcome: Expected) -> String {
    if let Expected::Decides(action) = outcome {
        return match example.expect {
            Expected::NoMatch => " (every condition holds)".to_owned(),
            _ => format!(" (its decision is {})", action.name()),
        };
    }
    if let (Some(scope), Some(pattern)) = (&example.scope, &rule.scope)
        && !pattern.matches(scope)
    {
        return format!(" (the scope {scope:?} is not {:?})", pattern.as_str());
    }
    let elements = elements_for(rule.action);
    for condition in &rule.when {
        if condition.check(&example.args, elements) == Truth::Holds {
            continue;
        }
        let Some(test) = condition.first_unmet(&example.args, elements) else {
            continue;
        };
        let shown = match example.args.get(&condition.arg) {
            Some(Value::String(text)) => format!("{text:?}"),
            Some(value) => value.to_string(),
            None => "absent".to_owned(),
        };
        return format!(" ({} = {shown} fails {})", condition.arg, test.describe());
    }
    String::new()
}
