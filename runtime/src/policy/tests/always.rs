//! "Always" answers: the rule written (the command, the values the asking
//! rules test, `approves`), the file's comments and layout kept, the file
//! replaced whole, and the rule in force at once and after a restart.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use crate::ipc::{ApprovalOutcome, CallGuard, CallInfo, Decision};
use crate::policy::{Approval, ApprovalRequest, Policy};
use crate::tool::{Manifest, ParamSchema, ToolSchema, ValueKind};

/// A policy checked against `schemas` whose default asks, its approver
/// answering "always" (counted in `asked`).
fn asking_by_default(schemas: Vec<ToolSchema>, asked: &Arc<AtomicUsize>) -> Policy {
    Policy::from_toml_str("default = \"ask\"\n")
        .unwrap()
        .check_against(&Manifest::new(schemas))
        .unwrap()
        .with_approver(always(asked))
}

/// `rm`, with a text `path` and a flag `force`.
fn rm() -> ToolSchema {
    ToolSchema::new("rm")
        .with_param(ParamSchema::new("path", ValueKind::String))
        .with_param(ParamSchema::new("force", ValueKind::Bool))
}

const RULES: &str = r#"# The team's rules: keep this comment.
default = "allow"

[[rule]]
id = "deploy-prod"   # the one that asks
command = "deploy"
when = { env = { equals = "prod" } }
decision = "ask"
reason = "deploys to prod need a person"
"#;

fn always(
    asked: &Arc<AtomicUsize>,
) -> impl Fn(&ApprovalRequest) -> std::future::Ready<Approval> + use<> {
    let asked = asked.clone();
    move |_: &ApprovalRequest| {
        asked.fetch_add(1, Ordering::SeqCst);
        std::future::ready(Approval::Always)
    }
}

fn prod(scope: &str, tag: &str) -> CallInfo {
    CallInfo::new(Some(scope), "deploy", json!({ "env": "prod", "tag": tag }))
}

#[tokio::test]
async fn always_writes_a_rule_keeping_the_files_comments_and_it_holds_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rules.toml");
    std::fs::write(&file, RULES).unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let policy = Policy::load(&file).unwrap().with_approver(always(&asked));

    let first = policy.ruling(&prod("agent-1", "v1")).await;
    assert_eq!(
        (first.decision, first.approval),
        (Decision::Allow, Some(ApprovalOutcome::Always))
    );
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(
        written.starts_with(RULES),
        "the file as it was, then the rule:\n{written}"
    );
    let added = &written[RULES.len()..];
    assert!(added.contains("# Added by gangway at "), "{added}");
    assert!(
        added.contains("\"always\" to \"deploy\" from scope \"agent-1\""),
        "{added}"
    );
    for line in [
        "id = \"approved-deploy-1\"",
        "command = \"deploy\"",
        "when = { env = { equals = \"prod\" } }",
        "decision = \"allow\"",
        "approves = [\"deploy-prod\"]",
    ] {
        assert!(added.contains(line), "{line} in:\n{added}");
    }
    assert!(
        !added.contains("tag"),
        "the rule asks about env alone:\n{added}"
    );

    // In force at once, from another scope too, and not asked again.
    let later = policy.ruling(&prod("agent-2", "v2")).await;
    assert_eq!(
        (later.decision, later.rule.as_deref(), later.approval),
        (Decision::Allow, Some("approved-deploy-1"), None)
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    // A restart reads the rule from the file.
    let restarted = Policy::load(&file).unwrap();
    assert_eq!(
        restarted.evaluate(&prod("agent-3", "v3")).rule.as_deref(),
        Some("approved-deploy-1")
    );
    // Nothing is left beside the file.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("rules.toml")]);
}

#[tokio::test]
async fn the_defaults_question_pins_every_argument_given_and_ids_stay_unique() {
    let text = "default = \"ask\"\n[[rule]]\nid = \"approved-rm-1\"\ncommand = \"ls\"\ndecision = \"allow\"\n";
    let manifest = Manifest::new(vec![ToolSchema::new("ls"), rm()]);
    let asked = Arc::new(AtomicUsize::new(0));
    let policy = Policy::from_toml_str(text)
        .unwrap()
        .check_against(&manifest)
        .unwrap()
        .with_approver(always(&asked));
    let call = CallInfo::new(None, "rm", json!({ "path": "/tmp/x", "force": true }));
    assert_eq!(
        policy.ruling(&call).await.approval,
        Some(ApprovalOutcome::Always)
    );
    let verdict = |args| policy.evaluate(&CallInfo::new(None, "rm", args)).rule;
    assert_eq!(
        verdict(json!({ "path": "/tmp/x", "force": true })).as_deref(),
        Some("approved-rm-2")
    );
    assert_eq!(verdict(json!({ "path": "/tmp/y", "force": true })), None);
    assert_eq!(verdict(json!({ "path": "/tmp/x", "force": false })), None);
    assert_eq!(verdict(json!({ "path": "/tmp/x" })), None);
}

#[tokio::test]
async fn a_file_a_person_broke_is_not_written_and_the_answer_holds_for_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rules.toml");
    std::fs::write(&file, RULES).unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let policy = Policy::load(&file).unwrap().with_approver(always(&asked));
    std::fs::write(&file, "default = \"allow\n").unwrap();
    let answered = policy.ruling(&prod("agent-1", "v1")).await;
    assert_eq!(answered.approval, Some(ApprovalOutcome::Session));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "default = \"allow\n",
        "left alone"
    );
    let again = policy.ruling(&prod("agent-1", "v2")).await;
    assert_eq!(again.approval, Some(ApprovalOutcome::Session));
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

#[cfg(unix)]
#[tokio::test]
async fn a_linked_rules_file_is_replaced_where_the_link_points_with_its_mode_kept() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.toml");
    std::fs::write(&real, RULES).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.path().join("rules.toml");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let policy = Policy::load(&link).unwrap().with_approver(always(&asked));
    assert_eq!(
        policy.ruling(&prod("a", "v1")).await.approval,
        Some(ApprovalOutcome::Always)
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("approved-deploy-1")
    );
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

#[tokio::test]
async fn the_defaults_question_holds_every_argument_not_given_absent() {
    let asked = Arc::new(AtomicUsize::new(0));
    let policy = asking_by_default(vec![rm()], &asked);
    let call = CallInfo::new(None, "rm", json!({ "path": "/tmp/x" }));
    assert_eq!(
        policy.ruling(&call).await.approval,
        Some(ApprovalOutcome::Always)
    );
    let verdict = |args| policy.evaluate(&CallInfo::new(None, "rm", args)).rule;
    assert!(verdict(json!({ "path": "/tmp/x" })).is_some());
    assert_eq!(
        verdict(json!({ "path": "/tmp/x", "force": true })),
        None,
        "force was not approved"
    );

    // Without the commands, what was not given cannot be named: the answer
    // holds for the session.
    let unchecked = Policy::from_toml_str("default = \"ask\"\n")
        .unwrap()
        .with_approver(always(&asked));
    assert_eq!(
        unchecked.ruling(&call).await.approval,
        Some(ApprovalOutcome::Session)
    );
    assert_eq!(unchecked.rule_count(), 0);
}

#[tokio::test]
async fn a_list_is_not_written_as_a_rule_whose_elements_could_come_in_any_order() {
    let text = "default = \"allow\"\n[[rule]]\nid = \"git\"\ncommand = \"run\"\nwhen = { argv = { present = true } }\ndecision = \"ask\"\n";
    let asked = Arc::new(AtomicUsize::new(0));
    let policy = Policy::from_toml_str(text)
        .unwrap()
        .with_approver(always(&asked));
    let call = |argv| CallInfo::new(Some("a"), "run", json!({ "argv": argv }));
    let answered = policy.ruling(&call(json!(["git", "push"]))).await;
    assert_eq!(answered.approval, Some(ApprovalOutcome::Session));
    assert_eq!(policy.rule_count(), 1, "no rule written");
    let reordered = policy.ruling(&call(json!(["push", "git", "git"]))).await;
    assert_eq!(reordered.approval, Some(ApprovalOutcome::Session));
    assert_eq!(
        asked.load(Ordering::SeqCst),
        2,
        "another list is another question"
    );
}

#[tokio::test]
async fn a_file_edited_since_it_was_read_is_left_to_the_watcher() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rules.toml");
    std::fs::write(&file, RULES).unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let policy = Policy::load(&file).unwrap().with_approver(always(&asked));
    let edited = format!("{RULES}# a person's note\n");
    std::fs::write(&file, &edited).unwrap();
    let answered = policy.ruling(&prod("agent-1", "v1")).await;
    assert_eq!(answered.approval, Some(ApprovalOutcome::Session));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        edited,
        "left alone"
    );
}

#[tokio::test]
async fn the_defaults_always_leaves_a_secret_free() {
    let login = ToolSchema::new("login")
        .with_param(ParamSchema::new("user", ValueKind::String))
        .with_param(ParamSchema::new("key", ValueKind::String).secret());
    let asked = Arc::new(AtomicUsize::new(0));
    let policy = asking_by_default(vec![login], &asked);
    let call = CallInfo::new(None, "login", json!({ "user": "ann" }));
    assert_eq!(
        policy.ruling(&call).await.approval,
        Some(ApprovalOutcome::Always)
    );
    let later = CallInfo::new(None, "login", json!({ "user": "ann", "key": "<redacted>" }));
    assert!(
        policy.evaluate(&later).rule.is_some(),
        "the secret is not held"
    );
}
