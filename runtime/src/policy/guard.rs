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
use super::model::Rule;
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
        for _ in 0..MAX_QUESTIONS {
            let (verdict, asked, covered) = {
                let rules = self.state.rules();
                let finding = rules.evaluate(call.scope(), call.command(), call.args());
                if finding.verdict.decision != PolicyDecision::Ask {
                    return ruled(&finding.verdict);
                }
                let asked = questions(&finding.asking);
                (finding.verdict, asked, Covered::of(call, &finding.asking))
            };
            if let Ok(covered) = &covered
                && self.state.sessions.allows(call, covered)
            {
                return by_rule(Decision::Allow, &verdict).with_approval(ApprovalOutcome::Session);
            }
            let Some(approver) = &self.approver else {
                return by_rule(self.no_one_to_ask(&verdict), &verdict);
            };
            let mut request =
                ApprovalRequest::new(call.clone(), verdict.rule.clone(), reasons(&asked));
            if let Ok(covered) = &covered {
                request = request.holding(covered.args.keys().cloned().collect());
            }
            let outcome = match approver.approve(&request).await {
                Approval::Once => ApprovalOutcome::Once,
                Approval::Session => ApprovalOutcome::Session,
                Approval::Always => ApprovalOutcome::Always,
                Approval::Deny(reason) => {
                    return by_rule(denied(call, &verdict, &reason), &verdict)
                        .with_approval(ApprovalOutcome::Denied);
                }
                Approval::Unavailable(why) => {
                    tracing::warn!(target: "gangway::policy", command = call.command(), "no one could be asked: {why}");
                    return by_rule(self.no_one_to_ask(&verdict), &verdict);
                }
            };
            if let Some(ruling) = self.answered(call, outcome, &asked).await {
                return ruling;
            }
            // The rules changed while the person was asked, and now ask
            // something the person was not shown: ask again.
        }
        Ruling::new(Decision::deny(
            "the host's rules kept changing while a person was asked about this call; try it again",
        ))
    }

    /// What the person's yes (`outcome`) to the questions `asked` does,
    /// under the rules in force now: a denial or an allow made meanwhile
    /// wins; the same questions take the answer; other questions (`None`)
    /// must be asked.
    async fn answered(
        &self,
        call: &CallInfo,
        outcome: ApprovalOutcome,
        asked: &[(String, Option<String>)],
    ) -> Option<Ruling> {
        let (verdict, covered) = {
            let rules = self.state.rules();
            let now = rules.evaluate(call.scope(), call.command(), call.args());
            match now.verdict.decision {
                PolicyDecision::Deny { .. } => return Some(ruled(&now.verdict)),
                PolicyDecision::Allow => {
                    return Some(ruled(&now.verdict).with_approval(ApprovalOutcome::Once));
                }
                PolicyDecision::Ask if questions(&now.asking) != asked => return None,
                PolicyDecision::Ask => {}
            }
            (now.verdict, Covered::of(call, &now.asking))
        };
        let kept = match outcome {
            ApprovalOutcome::Session => self.keep_for_session(call, covered),
            ApprovalOutcome::Always => self.keep_always(call, covered).await,
            other => other,
        };
        Some(by_rule(Decision::Allow, &verdict).with_approval(kept))
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

    /// Keeps an "always" answer as a rule (the file is read and written on
    /// a blocking thread); when no rule can be written, as a "session"
    /// answer (and says why).
    async fn keep_always(
        &self,
        call: &CallInfo,
        covered: Result<Covered, String>,
    ) -> ApprovalOutcome {
        let written = match &covered {
            Ok(covered) => {
                let state = self.state.clone();
                let covered = covered.clone();
                let answered = Answered {
                    scope: call.scope().map(str::to_owned),
                };
                let add = move || state.add_always(&covered, &answered);
                match tokio::runtime::Handle::try_current() {
                    Ok(runtime) => runtime
                        .spawn_blocking(add)
                        .await
                        .unwrap_or_else(|error| Err(format!("the rule was not written: {error}"))),
                    Err(_) => add(),
                }
            }
            Err(why) => Err(why.clone()),
        };
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

/// How many times a call is put to a person when the rules keep changing
/// under the question.
const MAX_QUESTIONS: usize = 3;

/// The questions the asking rules put: each one's id and reason.
fn questions(asking: &[&Rule]) -> Vec<(String, Option<String>)> {
    asking
        .iter()
        .map(|rule| (rule.id.clone(), rule.reason.clone()))
        .collect()
}

/// What the person is told of why they are asked: the first asking rule's
/// reason, then each other one's id and reason.
fn reasons(asked: &[(String, Option<String>)]) -> Option<String> {
    let (_, first) = asked.first()?;
    let mut text = first.clone().unwrap_or_default();
    for (id, reason) in &asked[1..] {
        if !text.is_empty() {
            text.push_str("; ");
        }
        text.push_str(&format!("also rule {id}"));
        if let Some(reason) = reason {
            text.push_str(&format!(": {reason}"));
        }
    }
    (!text.is_empty()).then_some(text)
}

/// A verdict's decision as the guard gives it, naming its rule: a denial
/// says which rule refused.
fn ruled(verdict: &Verdict) -> Ruling {
    let decision = match &verdict.decision {
        PolicyDecision::Deny { reason } => Decision::Deny(match &verdict.rule {
            Some(rule) => format!("{reason} (policy rule `{rule}`)"),
            None => reason.clone(),
        }),
        PolicyDecision::Allow => Decision::Allow,
        // Not ruled on this way; should one be, it is not let through.
        PolicyDecision::Ask => Decision::deny("this call needs a person's approval"),
    };
    by_rule(decision, verdict)
}

/// `decision`, made by `verdict`'s rule.
fn by_rule(decision: Decision, verdict: &Verdict) -> Ruling {
    match &verdict.rule {
        Some(rule) => Ruling::new(decision).by_rule(rule.clone()),
        None => Ruling::new(decision),
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
