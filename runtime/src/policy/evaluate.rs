//! Deciding one call: which rules apply to its command (found through an
//! index built at load), which of those match its scope and arguments, and
//! which of the matching ones decides (deny over ask over allow, then the
//! first in the file; an allow rule that `approves` an ask rule answers
//! its question), or the policy's default when none matches.

use std::borrow::Cow;
use std::collections::HashMap;

use globset::{Candidate, GlobSet, GlobSetBuilder};
use serde_json::Value;

use super::condition::{Elements, Truth};
use super::glob::NamePattern;
use super::model::{Action, Rule};

/// What a policy says of one call: its decision, and the rule that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verdict {
    /// Run the call, refuse it, or ask a person.
    pub decision: PolicyDecision,
    /// The `id` of the deciding rule; `None` when no rule matched and the
    /// policy's `default` decided.
    pub rule: Option<String>,
    /// The deciding rule's `reason`, as written (what a person asked to
    /// approve is shown); `None` for the default, or a rule without one.
    pub reason: Option<String>,
}

/// A policy's decision on one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyDecision {
    /// Run it.
    Allow,
    /// Refuse it.
    Deny {
        /// Why, for the caller: the rule's `reason`, or when it has none (or
        /// the default denied) a sentence saying the policy refuses the call.
        reason: String,
    },
    /// Ask a person; as a [`CallGuard`](crate::ipc::CallGuard) with no one
    /// to ask, the policy refuses the call, saying it needs approval.
    Ask,
}

/// The rules that may apply to a command: found by exact name in a map,
/// and by one pass of a glob set over the patterns, so that a call's cost
/// grows with the rules for its command, not with the whole file.
#[derive(Debug, Clone, Default)]
pub(crate) struct RuleIndex {
    /// Rules naming one command, by name, in file order.
    by_name: HashMap<String, Vec<usize>>,
    /// The command globs, all at once.
    globs: GlobSet,
    /// The rule of each glob in `globs`, in file order.
    glob_rules: Vec<usize>,
}

impl RuleIndex {
    /// The index of `rules`; `Err` (with why) only if the glob set cannot be
    /// built, which globs that compiled one by one should not cause.
    pub(crate) fn new(rules: &[Rule]) -> Result<Self, String> {
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        let mut builder = GlobSetBuilder::new();
        let mut glob_rules = Vec::new();
        for (position, rule) in rules.iter().enumerate() {
            match &rule.command {
                NamePattern::Exact(name) => by_name.entry(name.clone()).or_default().push(position),
                NamePattern::Glob(matcher) => {
                    builder.add(matcher.glob().clone());
                    glob_rules.push(position);
                }
            }
        }
        let globs = builder
            .build()
            .map_err(|error| format!("the command patterns together are too large: {error}"))?;
        Ok(RuleIndex {
            by_name,
            globs,
            glob_rules,
        })
    }

    /// The rules whose `command` is `command` or matches it, in file order
    /// (borrowed, without allocating, when no command glob matches).
    fn candidates(&self, command: &str) -> Cow<'_, [usize]> {
        let named = self.by_name.get(command).map_or(&[][..], Vec::as_slice);
        if self.glob_rules.is_empty() {
            return Cow::Borrowed(named);
        }
        let globs = self
            .globs
            .matches_candidate(&Candidate::from_bytes(command.as_bytes()));
        if globs.is_empty() {
            return Cow::Borrowed(named);
        }
        let mut found = Vec::with_capacity(named.len() + globs.len());
        found.extend_from_slice(named);
        found.extend(globs.into_iter().map(|glob| self.glob_rules[glob]));
        found.sort_unstable();
        Cow::Owned(found)
    }
}

/// What deciding one call found: the verdict, and every ask rule left
/// asking (the deciding one first), whose arguments a person's answer
/// covers.
pub(crate) struct Finding<'r> {
    pub(crate) verdict: Verdict,
    pub(crate) asking: Vec<&'r Rule>,
}

/// Decides `command` called from `scope` with `args` by `rules` (indexed by
/// `index`), with `default` when none matches.
pub(crate) fn evaluate<'r>(
    rules: &'r [Rule],
    index: &RuleIndex,
    default: Action,
    scope: Option<&str>,
    command: &str,
    args: &Value,
) -> Finding<'r> {
    let mut asking: Vec<&Rule> = Vec::new();
    let mut allowing: Vec<&Rule> = Vec::new();
    for &position in index.candidates(command).iter() {
        let rule = &rules[position];
        // Once some rule asks, only a denial, another question or an
        // answer to one can change the outcome: other allow rules need no
        // more looking at.
        if !asking.is_empty() && rule.action == Action::Allow && rule.approves.is_empty() {
            continue;
        }
        if !(scope_matches(rule, scope) && conditions_match(rule, args)) {
            continue;
        }
        match rule.action {
            Action::Deny => {
                return Finding {
                    verdict: rule_verdict(rule),
                    asking: Vec::new(),
                };
            }
            Action::Ask => asking.push(rule),
            Action::Allow => allowing.push(rule),
        }
    }
    let answers = |ask: &Rule| {
        allowing
            .iter()
            .find(|allow| allow.approves.contains(&ask.id))
            .copied()
    };
    let first_answer = asking.iter().find_map(|ask| answers(ask));
    asking.retain(|ask| answers(ask).is_none());
    // A rule that answers questions decides only a call it answered one of:
    // where its question is not asked (another scope, other values), it
    // lets nothing through.
    let first_allow = allowing.iter().find(|allow| allow.approves.is_empty());
    let verdict = match (asking.first(), first_answer, first_allow) {
        (Some(ask), _, _) => rule_verdict(ask),
        (None, Some(answer), _) => rule_verdict(answer),
        (None, None, Some(allow)) => rule_verdict(allow),
        (None, None, None) => default_verdict(default, command),
    };
    Finding { verdict, asking }
}

/// Whether a rule applies to a call from `scope`: a rule with no `scope`
/// applies to every call; one with a `scope` only to calls whose token's
/// scope id matches it (so never to the full-access token, which has none).
pub(crate) fn scope_matches(rule: &Rule, scope: Option<&str>) -> bool {
    match (&rule.scope, scope) {
        (None, _) => true,
        (Some(pattern), Some(scope)) => pattern.matches(scope),
        (Some(_), None) => false,
    }
}

/// Whether a rule's conditions hold on `args`. A list argument passes an
/// allow rule when every element does, a deny or ask rule when any does.
/// When a condition cannot be told (a value not shown whole, a relative
/// path), a rule that denies or asks matches and one that allows does not:
/// what cannot be seen is not let through by it.
pub(crate) fn conditions_match(rule: &Rule, args: &Value) -> bool {
    let elements = elements_for(rule.action);
    let truth = Truth::all(
        rule.when
            .iter()
            .map(|condition| condition.check(args, elements)),
    );
    match truth {
        Truth::Holds => true,
        Truth::Fails => false,
        Truth::Unknown => rule.action != Action::Allow,
    }
}

/// How a rule deciding `action` combines the elements of a list.
pub(crate) fn elements_for(action: Action) -> Elements {
    match action {
        Action::Allow => Elements::Every,
        Action::Deny | Action::Ask => Elements::Any,
    }
}

/// The verdict of a rule that decided.
fn rule_verdict(rule: &Rule) -> Verdict {
    let decision = match rule.action {
        Action::Allow => PolicyDecision::Allow,
        Action::Ask => PolicyDecision::Ask,
        Action::Deny => PolicyDecision::Deny {
            reason: rule
                .reason
                .clone()
                .unwrap_or_else(|| "the host's policy refuses this call".to_owned()),
        },
    };
    Verdict {
        decision,
        rule: Some(rule.id.clone()),
        reason: rule.reason.clone(),
    }
}

/// The verdict when no rule matched.
fn default_verdict(default: Action, command: &str) -> Verdict {
    let decision = match default {
        Action::Allow => PolicyDecision::Allow,
        Action::Ask => PolicyDecision::Ask,
        Action::Deny => PolicyDecision::Deny {
            reason: format!(
                "no rule of the host's policy allows this call of `{command}`, and its default is to refuse"
            ),
        },
    };
    Verdict {
        decision,
        rule: None,
        reason: None,
    }
}
