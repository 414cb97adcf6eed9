//! Asking a person, end to end through real wrappers in bubblewrap: a
//! "session" answer is not asked again in its scope but is in another; an
//! "always" answer adds a rule to the file (its comments kept) that holds
//! without asking, after a restart too; a watched file's broken edit keeps
//! the rules before it; Ctrl-C during a question exits 130 and the
//! approver sees the question dropped. The audit log names each answer.

mod common;

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::authority::{Scoped, audited, records, scoped};
use common::process::{finish, signal_client, spawn, wait_catching_signals};
use common::{Host, Style, Tally, require, wait_until};
use gangway::ipc::{Bwrap, IpcServer, Scope};
use gangway::policy::{Approval, ApprovalRequest, Policy};

const RULES: &str = r#"# Searching for secrets, and counting, need a person.
default = "allow"

[[rule]]
id = "search-secrets"   # the question
command = "search"
when = { query = { one_of = ["password", "token"] } }
decision = "ask"
reason = "searching for secrets needs a person"

[[rule]]
id = "count"
command = "counter"
decision = "ask"
"#;

/// The approver's side of the test: answers given in turn (none left:
/// the question waits), the scopes asked about, and questions dropped.
#[derive(Clone, Default)]
struct Desk {
    answers: Arc<Mutex<VecDeque<Approval>>>,
    asked: Arc<Mutex<Vec<Option<String>>>>,
    dropped: Arc<AtomicUsize>,
}

/// Counts a question dropped before its answer.
struct Dropped(Arc<AtomicUsize>, bool);

impl Drop for Dropped {
    fn drop(&mut self) {
        if !self.1 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Desk {
    fn answering(answers: impl IntoIterator<Item = Approval>) -> Desk {
        let desk = Desk::default();
        desk.answers.lock().unwrap().extend(answers);
        desk
    }

    fn policy(&self, rules: &Path) -> Policy {
        let desk = self.clone();
        checked(Policy::load(rules).unwrap()).with_approver(move |request: &ApprovalRequest| {
            desk.asked
                .lock()
                .unwrap()
                .push(request.scope().map(str::to_owned));
            let answer = desk.answers.lock().unwrap().pop_front();
            let dropped = Dropped(desk.dropped.clone(), false);
            async move {
                // The whole guard moves in, so it drops with the question.
                let mut dropped = dropped;
                let answer = match answer {
                    Some(answer) => answer,
                    None => std::future::pending().await,
                };
                dropped.1 = true;
                answer
            }
        })
    }

    fn asked(&self) -> Vec<Option<String>> {
        self.asked.lock().unwrap().clone()
    }
}

fn checked(policy: Policy) -> Policy {
    policy
        .check_against(&common::router(&Tally::default()).manifest())
        .unwrap_or_else(|error| panic!("{error}"))
}

/// Runs `script` in `scoped`'s bubblewrap sandbox.
fn sandboxed(scoped: &Scoped, script: &str) -> std::process::Command {
    Bwrap::new(&scoped.env)
        .command("sh", ["-c", script])
        .unwrap()
}

/// Runs `script` in the sandbox; its exit code and stderr.
fn run(scoped: &Scoped, script: &str) -> (Option<i32>, String) {
    let (code, _, stderr) = finish(spawn(sandboxed(scoped, script)));
    (code, stderr)
}

fn rules_file(dir: &Path) -> std::path::PathBuf {
    let file = dir.join("rules.toml");
    std::fs::write(&file, RULES).unwrap();
    file
}

#[test]
#[ignore = "needs bwrap"]
fn session_and_always_answers_hold_as_they_say_in_bubblewrap() {
    require(&["bwrap"]);
    let rules = tempfile::tempdir().unwrap();
    let file = rules_file(rules.path());
    let desk = Desk::answering([Approval::Session, Approval::Once, Approval::Always]);
    let (host, audit) = audited(
        IpcServer::builder().guard(desk.policy(&file)),
        Style::Scripts,
    );
    let a = scoped(&host, Scope::new("agent-a"));
    let b = scoped(&host, Scope::new("agent-b"));
    let a_id = Some("agent-a".to_owned());
    let b_id = Some("agent-b".to_owned());

    assert_eq!(run(&a, "search password").0, Some(0));
    // The rule asks about the query alone: another limit is the same question.
    assert_eq!(run(&a, "search password -n 3").0, Some(0));
    assert_eq!(
        desk.asked(),
        std::slice::from_ref(&a_id),
        "not asked again in that scope"
    );
    assert_eq!(run(&b, "search password").0, Some(0));
    assert_eq!(
        desk.asked(),
        [a_id.clone(), b_id.clone()],
        "asked in another scope"
    );

    assert_eq!(run(&a, "search token").0, Some(0));
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(
        written.starts_with(RULES),
        "comments and layout kept:\n{written}"
    );
    assert!(
        written.contains("id = \"approved-search-1\"")
            && written.contains("when = { query = { equals = \"token\" } }")
            && written.contains("approves = [\"search-secrets\"]"),
        "{written}"
    );
    // In force at once, in every scope, without asking.
    assert_eq!(run(&b, "search token").0, Some(0));
    assert_eq!(desk.asked().len(), 3);

    let (records, _) = records(host, &audit);
    let approvals: Vec<(&str, &str, Option<&str>)> = records
        .iter()
        .filter(|record| record["command"] == "search")
        .map(|record| {
            (
                record["scope"].as_str().unwrap(),
                record["rule"].as_str().unwrap(),
                record["approval"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        approvals,
        [
            ("agent-a", "search-secrets", Some("session")),
            ("agent-a", "search-secrets", Some("session")),
            ("agent-b", "search-secrets", Some("once")),
            ("agent-a", "search-secrets", Some("always")),
            ("agent-b", "approved-search-1", None),
        ]
    );

    // After a restart, with no one to ask: the rule still holds, and the
    // session's answer is gone.
    let host = Host::start_with(IpcServer::builder().guard(checked(Policy::load(&file).unwrap())));
    let c = scoped(&host, Scope::new("agent-a"));
    assert_eq!(run(&c, "search token").0, Some(0));
    let (code, stderr) = run(&c, "search password");
    assert_eq!(code, Some(77), "{stderr}");
    assert!(
        stderr.contains("needs a person's approval (policy rule `search-secrets`: searching for secrets needs a person)"),
        "{stderr}"
    );
}

#[test]
#[ignore = "needs bwrap"]
fn a_watched_files_broken_edit_keeps_the_rules_before_it_in_bubblewrap() {
    require(&["bwrap"]);
    let rules = tempfile::tempdir().unwrap();
    let file = rules.path().join("rules.toml");
    let deny = RULES.replace("decision = \"ask\"\nreason", "decision = \"deny\"\nreason");
    std::fs::write(&file, &deny).unwrap();
    let policy = checked(Policy::watch(&file).unwrap());
    let host = Host::start_with(IpcServer::builder().guard(policy.clone()));
    let a = scoped(&host, Scope::new("agent-a"));
    let (code, stderr) = run(&a, "search password");
    assert_eq!(code, Some(77), "{stderr}");

    // A typo, and a rule on a command the host does not have.
    std::fs::write(&file, deny.replace("one_of", "one_off")).unwrap();
    wait_until("the broken edit is reported", || {
        policy.last_error().is_some()
    });
    let error = policy.last_error().unwrap().to_string();
    assert!(
        error.contains("rules.toml:7: rule \"search-secrets\""),
        "{error}"
    );
    assert!(error.contains("did you mean \"one_of\""), "{error}");
    let (code, stderr) = run(&a, "search password");
    assert_eq!(code, Some(77), "the old rules hold: {stderr}");
    std::fs::write(
        &file,
        deny.replace("command = \"search\"", "command = \"serch\""),
    )
    .unwrap();
    wait_until("the unknown command is reported", || {
        policy
            .last_error()
            .is_some_and(|error| error.to_string().contains("serch"))
    });
    assert_eq!(run(&a, "search password").0, Some(77));

    std::fs::write(&file, deny.replace("\"deny\"\nreason", "\"allow\"\nreason")).unwrap();
    wait_until("the fixed file takes force", || {
        policy.last_error().is_none()
    });
    let (code, stderr) = run(&a, "search password");
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
#[ignore = "needs bwrap"]
fn ctrl_c_during_a_question_exits_130_and_the_approver_sees_it_dropped() {
    require(&["bwrap"]);
    let rules = tempfile::tempdir().unwrap();
    let file = rules_file(rules.path());
    let desk = Desk::default();
    let host = Host::start_with(IpcServer::builder().guard(desk.policy(&file)));
    let a = scoped(&host, Scope::new("agent-a"));
    let asking = spawn(sandboxed(&a, "counter"));
    wait_until("the person is asked", || desk.asked().len() == 1);
    wait_catching_signals(&asking);
    assert_eq!(desk.dropped.load(Ordering::SeqCst), 0, "the question waits");
    signal_client(&asking, "INT");
    let (code, _, stderr) = finish(asking);
    assert_eq!(code, Some(130), "{stderr}");
    wait_until("the question is dropped", || {
        desk.dropped.load(Ordering::SeqCst) == 1
    });
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        host.tally.counter.load(Ordering::SeqCst),
        0,
        "the call never ran"
    );
}
