//! A policy as a call guard: the rules decide; a call they ask about is
//! let through by an answer given earlier for its session, else put to
//! the approver (or, with none, refused with a reason that says how to get
//! it approved), and the answer is kept as it says: for the session, or
//! as a rule in the file.

use std::future::Future;
use std::pin::Pin;

use super::Policy;
use super::always::Answered;
use super::approver::{Approval, ApprovalRequest};
use super::evaluate::{PolicyDecision, Verdict};
use super::pin::Covered;
use crate::ipc::{ApprovalOutcome, CallGuard, CallInfo, Decision, Ruling};

impl CallGuard for Policy {
    fn check<'a>(
        &'a self,
        call: &'a CallInfo,
    ) -> Pin<Box<dyn Future<Output = Decision> + Send + 'a>> {
        Box::pin(async move { self.rule_on(call).await.decision })
    }

    /// The decision, naming the deciding rule (none for the default), and
    /// the person's answer when one was asked.
    fn ruling<'a>(
        &'a self,
        call: &'a CallInfo,
    ) -> Pin<Box<dyn Future<Output = Ruling> + Send + 'a>> {
        Box::pin(self.rule_on(call))
    }
}

impl Policy {
    /// The guard's answer for `call`.
    async fn rule_on(&self, call: &CallInfo) -> Ruling {
        let rules = self.state.rules();
        let finding = rules.evaluate(call.scope(), call.command(), call.args());
        let verdict = finding.verdict;
        let ruled = |decision| match &verdict.rule {
            Some(rule) => Ruling::new(decision).by_rule(rule.clone()),
            None => Ruling::new(decision),
        };
        match &verdict.decision {
            PolicyDecision::Allow => return ruled(Decision::Allow),
            PolicyDecision::Deny { reason } => {
                return ruled(Decision::Deny(match &verdict.rule {
                    Some(rule) => format!("{reason} (policy rule `{rule}`)"),
                    None => reason.clone(),
                }));
            }
            PolicyDecision::Ask => {}
        }
        let asked_by: Vec<&str> = finding.asking.iter().map(|rule| rule.id.as_str()).collect();
        let covered = Covered::of(call, &finding.asking);
        if let Ok(covered) = &covered
            && self.state.sessions.allows(call, covered)
        {
            return ruled(Decision::Allow).with_approval(ApprovalOutcome::Session);
        }
        let Some(approver) = &self.approver else {
            return ruled(self.no_one_to_ask(&verdict));
        };
        let request =
            ApprovalRequest::new(call.clone(), verdict.rule.clone(), verdict.reason.clone());
        let answer = approver.approve(&request).await;
        let (decision, outcome) = match answer {
            Approval::Once => (Decision::Allow, ApprovalOutcome::Once),
            Approval::Session => (Decision::Allow, self.keep_for_session(call, covered)),
            Approval::Always => {
                let answered = Answered {
                    scope: call.scope(),
                    asked_by,
                };
                (Decision::Allow, self.keep_always(call, covered, &answered))
            }
            Approval::Deny(reason) => (denied(call, &verdict, &reason), ApprovalOutcome::Denied),
            Approval::Unavailable(why) => {
                tracing::warn!(target: "gangway::policy", command = call.command(), "no one could be asked: {why}");
                return ruled(self.no_one_to_ask(&verdict));
            }
        };
        ruled(decision).with_approval(outcome)
    }

    /// Keeps a "session" answer; what it was kept as (only this call, when
    /// the values cannot be held to).
    fn keep_for_session(
        &self,
        call: &CallInfo,
        covered: Result<Covered, String>,
    ) -> ApprovalOutcome {
        match covered {
            Ok(covered) => {
                self.state.sessions.allow(call, covered);
                ApprovalOutcome::Session
            }
            Err(why) => {
                tracing::warn!(target: "gangway::policy", command = call.command(), "the answer holds for this call only: {why}");
                ApprovalOutcome::Once
            }
        }
    }

    /// Keeps an "always" answer as a rule; when no rule can be written,
    /// as a "session" answer (and says why).
    fn keep_always(
        &self,
        call: &CallInfo,
        covered: Result<Covered, String>,
        answered: &Answered<'_>,
    ) -> ApprovalOutcome {
        let written = covered
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|covered| self.state.add_always(covered, answered));
        match written {
            Ok(()) => ApprovalOutcome::Always,
            Err(why) => {
                tracing::warn!(
                    target: "gangway::policy",
                    command = call.command(),
                    "no rule was added for the \"always\" answer, which holds for the session instead: {why}"
                );
                self.keep_for_session(call, covered)
            }
        }
    }

    /// The refusal of a call the rules ask about when no one can be asked.
    fn no_one_to_ask(&self, verdict: &Verdict) -> Decision {
        let why = match (&verdict.rule, &verdict.reason) {
            (Some(rule), Some(reason)) => format!("policy rule `{rule}`: {reason}"),
            (Some(rule), None) => format!("policy rule `{rule}`"),
            (None, _) => "no policy rule matches it, and the policy's default is to ask".to_owned(),
        };
        Decision::Deny(format!(
            "this call needs a person's approval ({why}), and the host has no one to ask; \
             ask the user to approve it, or to allow it with a rule whose decision is \"allow\" in {}",
            self.file_label()
        ))
    }
}

/// The refusal a person gave, for the caller.
fn denied(call: &CallInfo, verdict: &Verdict, reason: &str) -> Decision {
    let reason = reason.trim();
    let asked = match &verdict.rule {
        Some(rule) => format!(" (asked by policy rule `{rule}`)"),
        None => String::new(),
    };
    if reason.is_empty() {
        Decision::Deny(format!(
            "a person refused this call of `{}`{asked}",
            call.command()
        ))
    } else {
        Decision::Deny(format!("a person refused this call: {reason}{asked}"))
    }
}
