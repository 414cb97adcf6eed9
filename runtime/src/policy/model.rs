//! The rules of a policy as data, once read from their file: what each
//! rule applies to, what it decides, and its examples. Every rule keeps
//! the lines it was written on, so that later checks (against a manifest,
//! of its examples) can point at them.

use serde_json::Value;

use super::condition::ArgCondition;
use super::glob::NamePattern;

/// What a rule (or the policy's default) decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Run the call.
    Allow,
    /// Refuse it.
    Deny,
    /// Ask a person.
    Ask,
}

impl Action {
    /// Every name a rules file may write, in the order messages list them.
    pub(crate) const NAMES: [&'static str; 3] = ["allow", "deny", "ask"];

    /// The action a rules file names.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        match name {
            "allow" => Some(Action::Allow),
            "deny" => Some(Action::Deny),
            "ask" => Some(Action::Ask),
            _ => None,
        }
    }

    /// Its name in a rules file.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Deny => "deny",
            Action::Ask => "ask",
        }
    }
}

/// One `[[rule]]`.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    /// Its `id`: unique in the file, told to the caller with its decision.
    pub(crate) id: String,
    /// The commands it applies to.
    pub(crate) command: NamePattern,
    /// The line of its `command` key.
    pub(crate) command_line: usize,
    /// The scopes it applies to; every call (those with no scope too) when
    /// `None`.
    pub(crate) scope: Option<NamePattern>,
    /// Conditions on the arguments, all of which must hold.
    pub(crate) when: Vec<ArgCondition>,
    /// What it decides.
    pub(crate) action: Action,
    /// Why, in words for the caller (and for a person asked).
    pub(crate) reason: Option<String>,
    /// Calls it must (or must not) match, checked when the file loads.
    pub(crate) examples: Vec<Example>,
    /// The ask rules whose question this (allow) rule answers: a call both
    /// match is allowed, not asked about.
    pub(crate) approves: Vec<String>,
    /// The line of its `approves` key.
    pub(crate) approves_line: usize,
}

/// One of a rule's `examples`.
#[derive(Debug, Clone)]
pub(crate) struct Example {
    /// Its place among the rule's examples (1-based), for messages.
    pub(crate) number: usize,
    /// The line it is written on.
    pub(crate) line: usize,
    /// The call's arguments, a JSON object keyed by wire name.
    pub(crate) args: Value,
    /// The caller's scope: when `None`, the rule's `scope` is not looked at.
    pub(crate) scope: Option<String>,
    /// What the rule alone must say of it.
    pub(crate) expect: Expected,
}

/// What an example expects of its rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expected {
    /// The rule matches, and so decides this.
    Decides(Action),
    /// The rule does not match.
    NoMatch,
}

impl Expected {
    /// Every name `expect` may be, for messages.
    pub(crate) const NAMES: [&'static str; 4] = ["allow", "deny", "ask", "no-match"];

    /// The expectation a rules file names.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        match name {
            "no-match" => Some(Expected::NoMatch),
            other => Action::from_name(other).map(Expected::Decides),
        }
    }

    /// Its name in a rules file.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Expected::Decides(action) => action.name(),
            Expected::NoMatch => "no-match",
        }
    }
}
