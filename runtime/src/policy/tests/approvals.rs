//! Asking a person: `approves` and precedence, the approver's answers
//! (once, session, always, deny, no one there), what a session answer
//! covers and when it lapses, "always" rules written to the file with its
//! comments kept, and a cancelled question.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{decide, load_error, policy};
use crate::ipc::{ApprovalOutcome, CallGuard, CallInfo, Decision, Ruling, ScopeLease};
use crate::policy::{Approval, ApprovalRequest, Policy};

const DEPLOY: &str = r#"
default = "allow"

# Deploys to prod need a person.
[[rule]]
id = "deploy-prod"
command = "deploy"
when = { env = { equals = "prod" } }
decision = "ask"
reason = "deploys to prod need a person"
"#;

/// An approver answering from a script, counting the questions.
#[derive(Clone, Default)]
struct Scripted {
    answers: Arc<Mutex<VecDeque<Approval>>>,
    asked: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<ApprovalRequest>>>,
}

impl Scripted {
    fn answering(answers: impl IntoIterator<Item = Approval>) -> Self {
        let scripted = Scripted::default();
        scripted.answers.lock().unwrap().extend(answers);
        scripted
    }

    fn attach(&self, policy: Policy) -> Policy {
        let me = self.clone();
        policy.with_approver(move |request: &ApprovalRequest| {
            me.asked.fetch_add(1, Ordering::SeqCst);
            me.requests.lock().unwrap().push(request.clone());
            let answer = me.answers.lock().unwrap().pop_front();
            async move { answer.expect("the script has an answer for every question") }
        })
    }

    fn asked(&self) -> usize {
        self.asked.load(Ordering::SeqCst)
    }
}

async fn rule(policy: &Policy, scope: Option<&str>, args: Value) -> Ruling {
    policy.ruling(&CallInfo::new(scope, "deploy", args)).await
}

#[test]
fn an_allow_rule_that_approves_an_ask_rule_answers_only_its_question() {
    let text = r#"
default = "deny"
[[rule]]
id = "prod"
command = "deploy"
when = { env = { equals = "prod" } }
decision = "ask"
[[rule]]
id = "forced"
command = "deploy"
when = { force = { equals = true } }
decision = "ask"
[[rule]]
id = "friday"
command = "deploy"
when = { day = { equals = "friday" } }
decision = "deny"
[[rule]]
id = "approved-prod"
command = "deploy"
when = { env = { equals = "prod" } }
decision = "allow"
approves = "prod"
"#;
    let policy = policy(text);
    let prod = json!({ "env": "prod" });
    assert_eq!(
        decide(&policy, None, "deploy", prod),
        ("allow", Some("approved-prod".into()))
    );
    // Another question still asks; a denial still wins.
    let forced = json!({ "env": "prod", "force": true });
    assert_eq!(
        decide(&policy, None, "deploy", forced),
        ("ask", Some("forced".into()))
    );
    let friday = json!({ "env": "prod", "day": "friday" });
    assert_eq!(
        decide(&policy, None, "deploy", friday),
        ("deny", Some("friday".into()))
    );
    // An allow rule without `approves` does not answer a question.
    let plain = text.replace("approves = \"prod\"\n", "");
    assert_eq!(
        decide(
            &super::policy(&plain),
            None,
            "deploy",
            json!({ "env": "prod" })
        ),
        ("ask", Some("prod".into()))
    );
}

#[test]
fn approves_must_be_on_an_allow_rule_and_an_approves_that_answers_nothing_is_noted() {
    let base = "[[rule]]\nid = \"ask-me\"\ncommand = \"c\"\ndecision = \"ask\"\n\
                [[rule]]\nid = \"no\"\ncommand = \"c\"\ndecision = \"deny\"\n";
    let errors = load_error(&format!(
        "{base}[[rule]]\nid = \"a\"\ncommand = \"c\"\ndecision = \"deny\"\napproves = \"ask-me\"\n"
    ));
    assert!(
        errors.contains("only a rule whose decision is \"allow\""),
        "{errors}"
    );
    let errors = load_error(&format!(
        "{base}[[rule]]\nid = \"a\"\ncommand = \"c\"\ndecision = \"allow\"\napproves = 3\n"
    ));
    assert!(
        errors.contains("`approves` must be the id of an ask rule"),
        "{errors}"
    );
    // A name that answers nothing loads (a stricter edit must take force),
    // and is noted.
    let typo = policy(&format!(
        "{base}[[rule]]\nid = \"a\"\ncommand = \"c\"\ndecision = \"allow\"\napproves = \"ask-mee\"\n"
    ));
    let notes: Vec<String> = typo.notes().iter().map(ToString::to_string).collect();
    assert_eq!(
        notes,
        [
            "<policy text>:13: rule \"a\": `approves` names \"ask-mee\", but no rule has that id, so it answers nothing; did you mean \"ask-me\"?"
        ]
    );
    let denial = policy(&format!(
        "{base}[[rule]]\nid = \"a\"\ncommand = \"c\"\ndecision = \"allow\"\napproves = [\"no\"]\n"
    ));
    assert!(
        denial.notes()[0]
            .message
            .contains("whose decision is \"deny\""),
        "{:?}",
        denial.notes()
    );
    assert_eq!(decide(&denial, None, "c", json!({})).0, "deny");
    assert!(policy(base).notes().is_empty());
}

#[tokio::test]
async fn once_is_asked_again_and_deny_carries_the_persons_reason() {
    let script = Scripted::answering([
        Approval::Once,
        Approval::Deny("not during the freeze".into()),
        Approval::Deny(" ".into()),
    ]);
    let policy = script.attach(policy(DEPLOY));
    let prod = json!({ "env": "prod", "tag": "v1" });
    let once = rule(&policy, Some("agent-1"), prod.clone()).await;
    assert_eq!(once.decision, Decision::Allow);
    assert_eq!(once.approval, Some(ApprovalOutcome::Once));
    assert_eq!(once.rule.as_deref(), Some("deploy-prod"));
    let denied = rule(&policy, Some("agent-1"), prod.clone()).await;
    assert_eq!(denied.approval, Some(ApprovalOutcome::Denied));
    assert_eq!(
        denied.decision,
        Decision::deny(
            "a person refused this call: not during the freeze (asked by policy rule `deploy-prod`)"
        )
    );
    let bare = rule(&policy, Some("agent-1"), prod).await;
    assert_eq!(
        bare.decision,
        Decision::deny(
            "a person refused this call of `deploy` (asked by policy rule `deploy-prod`)"
        )
    );
    assert_eq!(script.asked(), 3);
    // What the approver was shown: the call, the rule and its reason.
    let first = script.requests.lock().unwrap()[0].clone();
    assert_eq!(
        (first.scope(), first.command(), first.rule(), first.reason()),
        (
            Some("agent-1"),
            "deploy",
            Some("deploy-prod"),
            Some("deploys to prod need a person")
        )
    );
    // A call no rule asks about never reaches the approver.
    let staging = rule(&policy, Some("agent-1"), json!({ "env": "staging" })).await;
    assert_eq!(
        (staging.decision, staging.approval),
        (Decision::Allow, None)
    );
    assert_eq!(script.asked(), 3);
}

#[tokio::test]
async fn a_session_answer_covers_the_same_values_from_the_same_scope_only() {
    let script = Scripted::answering([Approval::Session, Approval::Once, Approval::Once]);
    let policy = script.attach(policy(DEPLOY));
    let first = rule(
        &policy,
        Some("agent-1"),
        json!({ "env": "prod", "tag": "v1" }),
    )
    .await;
    assert_eq!(first.approval, Some(ApprovalOutcome::Session));
    // The rule asks about `env` alone: another tag is the same question.
    let again = rule(
        &policy,
        Some("agent-1"),
        json!({ "env": "prod", "tag": "v2" }),
    )
    .await;
    assert_eq!(
        (again.decision, again.approval),
        (Decision::Allow, Some(ApprovalOutcome::Session))
    );
    assert_eq!(script.asked(), 1, "not asked again in that scope");
    let other = rule(&policy, Some("agent-2"), json!({ "env": "prod" })).await;
    assert_eq!(other.approval, Some(ApprovalOutcome::Once));
    assert_eq!(script.asked(), 2, "asked in another scope");
    let full = rule(&policy, None, json!({ "env": "prod" })).await;
    assert_eq!(full.approval, Some(ApprovalOutcome::Once));
    assert_eq!(script.asked(), 3, "asked for the full-access token");
}

#[tokio::test]
async fn a_session_answer_lapses_with_its_scope_and_is_not_carried_to_its_id() {
    let script = Scripted::answering([Approval::Session, Approval::Once, Approval::Once]);
    let policy = script.attach(policy(DEPLOY));
    let revoked = CancellationToken::new();
    let lease = ScopeLease::new(revoked.clone(), None, CancellationToken::new());
    let call = |lease: &ScopeLease| {
        CallInfo::new(Some("agent-1"), "deploy", json!({ "env": "prod" })).with_lease(lease.clone())
    };
    assert_eq!(
        policy.ruling(&call(&lease)).await.approval,
        Some(ApprovalOutcome::Session)
    );
    assert_eq!(
        policy.ruling(&call(&lease)).await.approval,
        Some(ApprovalOutcome::Session)
    );
    assert_eq!(script.asked(), 1);
    // The same id issued again is another scope.
    let reissued = ScopeLease::new(CancellationToken::new(), None, CancellationToken::new());
    assert_eq!(
        policy.ruling(&call(&reissued)).await.approval,
        Some(ApprovalOutcome::Once)
    );
    assert_eq!(script.asked(), 2);
    revoked.cancel();
    assert_eq!(
        policy.ruling(&call(&lease)).await.approval,
        Some(ApprovalOutcome::Once)
    );
    assert_eq!(script.asked(), 3, "asked once the scope was revoked");
    // Expired and stopped leases lapse too, and lapsed sessions are forgotten.
    let expired = ScopeLease::new(
        CancellationToken::new(),
        Some(std::time::Instant::now()),
        CancellationToken::new(),
    );
    let stopped = CancellationToken::new();
    let stopping = ScopeLease::new(CancellationToken::new(), None, stopped.clone());
    assert!(!expired.is_live() && stopping.is_live());
    stopped.cancel();
    assert!(!stopping.is_live());
    policy.state.sessions.allow(
        &call(&reissued),
        super::super::pin::Covered::of(&call(&reissued), &[]).unwrap(),
    );
    assert_eq!(
        policy.state.sessions.live_count(),
        1,
        "the revoked scope's answers are gone"
    );
}

#[tokio::test]
async fn a_value_not_shown_whole_holds_an_answer_to_this_call_only() {
    let script = Scripted::answering([Approval::Session, Approval::Always, Approval::Once]);
    let policy = script.attach(policy(
        DEPLOY
            .replace("equals = \"prod\"", "present = true")
            .as_str(),
    ));
    let cut = json!({ "env": "prod-… (5000 bytes)" });
    assert_eq!(
        rule(&policy, Some("a"), cut.clone()).await.approval,
        Some(ApprovalOutcome::Once)
    );
    assert_eq!(
        rule(&policy, Some("a"), cut.clone()).await.approval,
        Some(ApprovalOutcome::Once)
    );
    assert_eq!(
        policy.rule_count(),
        1,
        "no rule added for a value no one saw whole"
    );
    assert_eq!(
        rule(&policy, Some("a"), cut).await.approval,
        Some(ApprovalOutcome::Once)
    );
    assert_eq!(script.asked(), 3);
}

#[tokio::test]
async fn no_approver_or_no_one_there_refuses_saying_how_to_get_approval() {
    let bare = policy(DEPLOY);
    let refused = rule(&bare, Some("a"), json!({ "env": "prod" })).await;
    let Decision::Deny(reason) = &refused.decision else {
        panic!("{refused:?}");
    };
    assert!(
        reason.contains("needs a person's approval") && reason.contains("deploy-prod"),
        "{reason}"
    );
    assert_eq!(refused.approval, None);
    let away =
        Scripted::answering([Approval::Unavailable("no terminal".into())]).attach(policy(DEPLOY));
    let refused = rule(&away, Some("a"), json!({ "env": "prod" })).await;
    assert!(
        matches!(&refused.decision, Decision::Deny(r) if r.contains("has no one to ask")),
        "{refused:?}"
    );
    assert_eq!(refused.approval, None, "no person answered");
}

#[tokio::test]
async fn a_cancelled_call_drops_the_question() {
    let dropped = Arc::new(AtomicUsize::new(0));
    struct Noticed(Arc<AtomicUsize>);
    impl Drop for Noticed {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let seen = dropped.clone();
    let policy = policy(DEPLOY).with_approver(move |_: &ApprovalRequest| {
        let noticed = Noticed(seen.clone());
        async move {
            let _noticed = noticed;
            std::future::pending::<Approval>().await
        }
    });
    let call = CallInfo::new(Some("a"), "deploy", json!({ "env": "prod" }));
    let waited =
        tokio::time::timeout(std::time::Duration::from_millis(50), policy.ruling(&call)).await;
    assert!(waited.is_err(), "the question waits for an answer");
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the approver saw the question dropped"
    );
}

#[test]
fn an_approving_rule_decides_nothing_when_its_question_was_not_asked() {
    let text = r#"
default = "deny"
[[rule]]
id = "agent-deploy"
command = "deploy"
scope = "agent-*"
decision = "ask"
[[rule]]
id = "approved-deploy-1"
command = "deploy"
decision = "allow"
approves = ["agent-deploy"]
"#;
    let policy = policy(text);
    assert_eq!(
        decide(&policy, Some("agent-1"), "deploy", json!({})),
        ("allow", Some("approved-deploy-1".into()))
    );
    // The question is not asked of this scope, so its answer is not given.
    assert_eq!(
        decide(&policy, Some("untrusted-1"), "deploy", json!({})).0,
        "deny"
    );
}

#[tokio::test]
async fn a_session_answer_does_not_answer_a_question_added_later() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rules.toml");
    std::fs::write(&file, DEPLOY).unwrap();
    let script = Scripted::answering([Approval::Session, Approval::Once]);
    let policy = script.attach(Policy::load(&file).unwrap());
    let prod = json!({ "env": "prod" });
    assert_eq!(
        rule(&policy, Some("a"), prod.clone()).await.approval,
        Some(ApprovalOutcome::Session)
    );
    // A second question on the same argument, added since.
    let stricter = format!(
        "{DEPLOY}[[rule]]\nid = \"prod-again\"\ncommand = \"deploy\"\nwhen = {{ env = {{ equals = \"prod\" }} }}\ndecision = \"ask\"\n"
    );
    std::fs::write(&file, stricter).unwrap();
    policy.reload().unwrap();
    assert_eq!(
        rule(&policy, Some("a"), prod).await.approval,
        Some(ApprovalOutcome::Once)
    );
    assert_eq!(script.asked(), 2, "the new question is asked");
}

#[tokio::test]
async fn rules_that_changed_while_a_person_was_asked_decide_after_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rules.toml");
    std::fs::write(&file, DEPLOY).unwrap();
    let loaded = Policy::load(&file).unwrap();
    // Clones share the rules in force.
    let reloader = loaded.clone();
    let path = file.clone();
    let policy = loaded.with_approver(move |_: &ApprovalRequest| {
        // While the question is up, prod deploys become a denial.
        let denied = DEPLOY.replace("decision = \"ask\"", "decision = \"deny\"");
        std::fs::write(&path, denied).unwrap();
        reloader.reload().unwrap();
        std::future::ready(Approval::Always)
    });
    let call = CallInfo::new(Some("a"), "deploy", json!({ "env": "prod" }));
    let ruled = policy.ruling(&call).await;
    assert_eq!(ruled.rule.as_deref(), Some("deploy-prod"));
    assert_eq!(
        ruled.decision,
        Decision::deny("deploys to prod need a person (policy rule `deploy-prod`)"),
        "the rules in force after the answer win"
    );
    assert!(
        !std::fs::read_to_string(&file)
            .unwrap()
            .contains("approved-"),
        "no rule added"
    );
}

#[tokio::test]
async fn a_question_added_while_a_person_was_asked_is_asked_too() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rules.toml");
    std::fs::write(&file, DEPLOY).unwrap();
    let loaded = Policy::load(&file).unwrap();
    let reloader = loaded.clone();
    let path = file.clone();
    let questions = Arc::new(Mutex::new(Vec::new()));
    let seen = questions.clone();
    let policy = loaded.with_approver(move |request: &ApprovalRequest| {
        seen.lock().unwrap().push(request.reason().map(str::to_owned));
        // While the first question is up, a freeze is added.
        let freeze = format!(
            "{DEPLOY}[[rule]]\nid = \"freeze\"\ncommand = \"deploy\"\ndecision = \"ask\"\nreason = \"no deploys this week\"\n"
        );
        if std::fs::read_to_string(&path).unwrap() != freeze {
            std::fs::write(&path, freeze).unwrap();
            reloader.reload().unwrap();
        }
        std::future::ready(Approval::Session)
    });
    let call = CallInfo::new(Some("a"), "deploy", json!({ "env": "prod" }));
    let ruled = policy.ruling(&call).await;
    assert_eq!(ruled.approval, Some(ApprovalOutcome::Session));
    assert_eq!(
        *questions.lock().unwrap(),
        [
            Some("deploys to prod need a person".to_owned()),
            Some(
                "deploys to prod need a person; also rule freeze: no deploys this week".to_owned()
            ),
        ],
        "asked again, shown both questions"
    );
}
