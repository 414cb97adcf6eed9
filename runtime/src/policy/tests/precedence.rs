//! Which rule decides, the default, command and scope matching, the
//! index over many rules, and the policy as a `CallGuard`.

use std::task::{Context, Poll, Waker};

use serde_json::json;

use super::{decide, policy};
use crate::ipc::{CallGuard, CallInfo, Decision};
use crate::policy::{Policy, PolicyDecision, Verdict};

fn three_rules(order: [(&str, &str); 3]) -> Policy {
    let mut text = String::from("default = \"allow\"\n");
    for (id, decision) in order {
        text += &format!("[[rule]]\nid = \"{id}\"\ncommand = \"rm\"\ndecision = \"{decision}\"\n");
    }
    policy(&text)
}

#[test]
fn deny_wins_over_ask_over_allow_wherever_they_are() {
    let orders = [
        [("a", "allow"), ("b", "ask"), ("c", "deny")],
        [("c", "deny"), ("b", "ask"), ("a", "allow")],
        [("b", "ask"), ("c", "deny"), ("a", "allow")],
    ];
    for order in orders {
        let verdict = decide(&three_rules(order), None, "rm", json!({}));
        assert_eq!(verdict, ("deny", Some("c".into())), "{order:?}");
    }
    let text = "[[rule]]\nid = \"yes\"\ncommand = \"rm\"\ndecision = \"allow\"\n\
                [[rule]]\nid = \"maybe\"\ncommand = \"rm\"\ndecision = \"ask\"\n";
    assert_eq!(
        decide(&policy(text), None, "rm", json!({})),
        ("ask", Some("maybe".into()))
    );
}

#[test]
fn among_equal_decisions_the_first_in_the_file_decides() {
    let policy = three_rules([("first", "deny"), ("second", "deny"), ("third", "allow")]);
    assert_eq!(
        decide(&policy, None, "rm", json!({})).1.as_deref(),
        Some("first")
    );
    let policy = three_rules([("a1", "allow"), ("a2", "allow"), ("a3", "allow")]);
    assert_eq!(
        decide(&policy, None, "rm", json!({})).1.as_deref(),
        Some("a1")
    );
}

#[test]
fn a_rule_that_does_not_match_does_not_count() {
    let text = r#"
        default = "allow"
        [[rule]]
        id = "outside"
        command = "rm"
        when = { path = { not_under = "/workspace" } }
        decision = "deny"
        reason = "rm outside /workspace needs a person"
        [[rule]]
        id = "inside"
        command = "rm"
        when = { path = { under = "/workspace" } }
        decision = "allow"
    "#;
    let policy = policy(text);
    assert_eq!(
        decide(&policy, None, "rm", json!({ "path": "/workspace/x" })),
        ("allow", Some("inside".into()))
    );
    let verdict = policy.evaluate(&CallInfo::new(None, "rm", json!({ "path": "/etc" })));
    assert_eq!(
        verdict,
        Verdict {
            decision: PolicyDecision::Deny {
                reason: "rm outside /workspace needs a person".into()
            },
            rule: Some("outside".into()),
            reason: Some("rm outside /workspace needs a person".into()),
        }
    );
}

#[test]
fn the_default_decides_when_no_rule_matches() {
    let rule = "[[rule]]\nid = \"r\"\ncommand = \"rm\"\ndecision = \"deny\"\n";
    for (default, expected) in [("allow", "allow"), ("deny", "deny"), ("ask", "ask")] {
        let policy = policy(&format!("default = \"{default}\"\n{rule}"));
        assert_eq!(decide(&policy, None, "ls", json!({})), (expected, None));
    }
    assert_eq!(
        decide(&policy(rule), None, "ls", json!({})),
        ("ask", None),
        "ask when left out"
    );
    assert_eq!(
        decide(&policy(""), None, "ls", json!({})),
        ("ask", None),
        "an empty file asks"
    );
    let verdict = policy("default = \"deny\"").evaluate(&CallInfo::new(None, "ls", json!({})));
    let PolicyDecision::Deny { reason } = verdict.decision else {
        panic!("{verdict:?}")
    };
    assert!(
        reason.contains("`ls`") && reason.contains("default is to refuse"),
        "{reason}"
    );
    assert_eq!(verdict.reason, None);
}

#[test]
fn commands_match_by_name_or_glob() {
    let text = r#"
        default = "allow"
        [[rule]]
        id = "git"
        command = "git-*"
        decision = "deny"
        [[rule]]
        id = "copy"
        command = "{cp,mv}"
        decision = "ask"
        [[rule]]
        id = "exact"
        command = "rm"
        decision = "deny"
    "#;
    let policy = policy(text);
    assert_eq!(
        decide(&policy, None, "git-push", json!({})).1.as_deref(),
        Some("git")
    );
    assert_eq!(decide(&policy, None, "git", json!({})).0, "allow");
    assert_eq!(
        decide(&policy, None, "mv", json!({})).1.as_deref(),
        Some("copy")
    );
    assert_eq!(
        decide(&policy, None, "rm", json!({})).1.as_deref(),
        Some("exact")
    );
    assert_eq!(decide(&policy, None, "rmdir", json!({})).0, "allow");
}

#[test]
fn scopes_match_by_name_or_glob_and_the_full_access_token_has_none() {
    let text = r#"
        default = "allow"
        [[rule]]
        id = "agents"
        command = "rm"
        scope = "agent-*"
        decision = "deny"
        [[rule]]
        id = "ci"
        command = "rm"
        scope = "ci"
        decision = "ask"
    "#;
    let policy = policy(text);
    assert_eq!(
        decide(&policy, Some("agent-7"), "rm", json!({}))
            .1
            .as_deref(),
        Some("agents")
    );
    assert_eq!(
        decide(&policy, Some("ci"), "rm", json!({})).1.as_deref(),
        Some("ci")
    );
    assert_eq!(decide(&policy, Some("ci-2"), "rm", json!({})).0, "allow");
    assert_eq!(
        decide(&policy, None, "rm", json!({})).0,
        "allow",
        "no scope, no scoped rule"
    );
}

#[test]
fn two_hundred_rules_decide_through_the_index() {
    let mut text = String::from("default = \"deny\"\n");
    for n in 0..200 {
        let (command, decision) = match n % 4 {
            0 => (format!("cmd-{n}"), "allow"),
            1 => (format!("tool-{n}-*"), "ask"),
            2 => (format!("cmd-{}", n - 2), "deny"),
            _ => ("*-x".to_owned(), "allow"),
        };
        text += &format!(
            "[[rule]]\nid = \"r{n}\"\ncommand = \"{command}\"\nwhen = {{ n = {{ min = {n} }} }}\ndecision = \"{decision}\"\n"
        );
    }
    let policy = policy(&text);
    assert_eq!(
        decide(&policy, None, "cmd-0", json!({ "n": 2 })),
        ("deny", Some("r2".into()))
    );
    assert_eq!(
        decide(&policy, None, "cmd-0", json!({ "n": 1 })),
        ("allow", Some("r0".into()))
    );
    assert_eq!(
        decide(&policy, None, "tool-5-a", json!({ "n": 5 })),
        ("ask", Some("r5".into()))
    );
    assert_eq!(
        decide(&policy, None, "tool-5-x", json!({ "n": 5 })),
        ("ask", Some("r5".into()))
    );
    assert_eq!(
        decide(&policy, None, "a-x", json!({ "n": 500 })),
        ("allow", Some("r3".into()))
    );
    assert_eq!(decide(&policy, None, "other", json!({})), ("deny", None));
    let call = CallInfo::new(None, "cmd-100", json!({ "n": 150 }));
    for _ in 0..10_000 {
        assert_eq!(policy.evaluate(&call).rule.as_deref(), Some("r102"));
    }
}

fn guard_decision(
    policy: &Policy,
    scope: Option<&str>,
    command: &str,
    args: serde_json::Value,
) -> Decision {
    let call = CallInfo::new(scope, command, args);
    let mut future = policy.check(&call);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(decision) => decision,
        Poll::Pending => panic!("a policy decides at once"),
    }
}

#[test]
fn as_a_guard_a_denial_names_its_rule() {
    let text = r#"
        default = "deny"
        [[rule]]
        id = "rm-outside-workspace"
        command = "rm"
        when = { path = { not_under = "/workspace" } }
        decision = "deny"
        reason = "rm outside /workspace needs a person; ask the user"
        [[rule]]
        id = "quiet"
        command = "kill"
        decision = "deny"
        [[rule]]
        id = "ls"
        command = "ls"
        decision = "allow"
    "#;
    let policy = policy(text);
    assert_eq!(
        guard_decision(&policy, None, "rm", json!({ "path": "/etc" })),
        Decision::deny(
            "rm outside /workspace needs a person; ask the user (policy rule `rm-outside-workspace`)"
        )
    );
    assert_eq!(
        guard_decision(&policy, None, "kill", json!({})),
        Decision::deny("the host's policy refuses this call (policy rule `quiet`)")
    );
    assert_eq!(
        guard_decision(&policy, None, "ls", json!({})),
        Decision::Allow
    );
    let Decision::Deny(default) = guard_decision(&policy, None, "cat", json!({})) else {
        panic!("the default denies")
    };
    assert!(
        default.contains("no rule of the host's policy allows this call of `cat`"),
        "{default}"
    );
}

#[test]
fn as_a_guard_with_no_approver_an_ask_is_refused_saying_how_to_grant_it() {
    let text = r#"
        [[rule]]
        id = "push"
        command = "git-push"
        decision = "ask"
        reason = "pushing publishes the work"
    "#;
    let policy = policy(text);
    let Decision::Deny(asked) = guard_decision(&policy, None, "git-push", json!({})) else {
        panic!("no approver, no run")
    };
    assert_eq!(
        asked,
        "this call needs a person's approval (policy rule `push`: pushing publishes the work), and the host \
         has no one to ask; ask the user to approve it, or to allow it with a rule whose decision is \"allow\" \
         in the host's policy"
    );
    let Decision::Deny(default) = guard_decision(&policy, None, "ls", json!({})) else {
        panic!("the default asks")
    };
    assert!(
        default.contains("(no policy rule matches it, and the policy's default is to ask)"),
        "{default}"
    );
}

#[test]
fn a_loaded_policy_names_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("policy.toml");
    std::fs::write(
        &path,
        "[[rule]]\nid = \"push\"\ncommand = \"git-push\"\ndecision = \"ask\"\n",
    )
    .unwrap();
    let policy = Policy::load(&path).unwrap();
    assert_eq!(policy.path(), Some(path.as_path()));
    let Decision::Deny(asked) = guard_decision(&policy, None, "git-push", json!({})) else {
        panic!("no approver, no run")
    };
    assert!(
        asked.ends_with(&format!("in the policy file {}", path.display())),
        "{asked}"
    );
}
