//! The policy module's tests, through its public face: rules written as a
//! file, calls made with `CallInfo::new`.

use serde_json::Value;

use super::{Policy, PolicyDecision, PolicyError};
use crate::ipc::CallInfo;

mod always;
mod approvals;
mod bypasses;
mod check;
mod conditions;
mod load_errors;
mod precedence;
mod watch;

/// The rules in `text`, which must load.
fn policy(text: &str) -> Policy {
    match Policy::from_toml_str(text) {
        Ok(policy) => policy,
        Err(error) => panic!("the policy should load:\n{error}"),
    }
}

/// Every problem loading `text`, one per line.
fn load_error(text: &str) -> String {
    match Policy::from_toml_str(text) {
        Ok(_) => panic!("the policy should not load:\n{text}"),
        Err(error @ PolicyError::Invalid(_)) => error.to_string(),
        Err(other) => panic!("not a problem in the rules: {other}"),
    }
}

/// The decision's name and the deciding rule's id.
fn decide(
    policy: &Policy,
    scope: Option<&str>,
    command: &str,
    args: Value,
) -> (&'static str, Option<String>) {
    let verdict = policy.evaluate(&CallInfo::new(scope, command, args));
    let name = match verdict.decision {
        PolicyDecision::Allow => "allow",
        PolicyDecision::Deny { .. } => "deny",
        PolicyDecision::Ask => "ask",
    };
    (name, verdict.rule)
}

/// Whether one rule deciding `decision` with `when` matches `args` (the
/// default is something else: `ask` for an allow or deny rule, `allow`
/// for an ask rule).
fn matches_as(decision: &str, when: &str, args: Value) -> bool {
    let default = if decision == "ask" { "allow" } else { "ask" };
    let text = format!(
        "default = \"{default}\"\n[[rule]]\nid = \"r\"\ncommand = \"c\"\nwhen = {when}\ndecision = \"{decision}\"\n"
    );
    decide(&policy(&text), None, "c", args).0 == decision
}

/// Whether a deny rule with `when` matches `args`.
fn holds(when: &str, args: Value) -> bool {
    matches_as("deny", when, args)
}
