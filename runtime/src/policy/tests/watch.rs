//! A watched rules file: a change takes force; a change that does not
//! load leaves the rules before it in force and is reported until fixed.

use std::time::{Duration, Instant};

use serde_json::json;

use super::decide;
use crate::policy::Policy;

fn rules(decision: &str) -> String {
    format!(
        "default = \"allow\"\n[[rule]]\nid = \"rm\"\ncommand = \"rm\"\ndecision = \"{decision}\"\n"
    )
}

/// Waits (up to 10 s) until `done` holds.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{what} did not happen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_watched_file_is_read_again_and_a_broken_edit_keeps_the_old_rules() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rules.toml");
    std::fs::write(&file, rules("deny")).unwrap();
    let policy = Policy::watch(&file).unwrap();
    let rm = |policy: &Policy| decide(policy, None, "rm", json!({})).0;
    assert_eq!(rm(&policy), "deny");

    // Replaced by a rename, as editors do.
    let next = dir.path().join("next.toml");
    std::fs::write(&next, rules("ask")).unwrap();
    std::fs::rename(&next, &file).unwrap();
    eventually("the new rules taking force", || rm(&policy) == "ask");
    assert!(policy.last_error().is_none());

    std::fs::write(
        &file,
        "default = \"allow\"\n[[rule]]\nid = \"rm\"\ncommand = \"rm\"\ndecison = \"allow\"\n",
    )
    .unwrap();
    eventually("the broken edit being reported", || {
        policy.last_error().is_some()
    });
    let error = policy.last_error().unwrap().to_string();
    assert!(
        error.contains("rules.toml:5: rule \"rm\"") && error.contains("did you mean \"decision\""),
        "{error}"
    );
    assert_eq!(
        rm(&policy),
        "ask",
        "the rules before the broken edit stay in force"
    );

    // Written in place, the same length as before: still seen.
    std::fs::write(&file, rules("allow")).unwrap();
    eventually("the fixed file taking force", || rm(&policy) == "allow");
    assert!(policy.last_error().is_none());
}

#[test]
fn a_reload_is_checked_against_the_commands_the_policy_was_checked_against() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rules.toml");
    std::fs::write(&file, rules("deny")).unwrap();
    let manifest = crate::tool::Manifest::new(vec![crate::tool::ToolSchema::new("rm")]);
    let policy = Policy::load(&file)
        .unwrap()
        .check_against(&manifest)
        .unwrap();
    std::fs::write(
        &file,
        rules("ask").replace("command = \"rm\"", "command = \"rn\""),
    )
    .unwrap();
    let error = policy.reload().unwrap_err().to_string();
    assert!(error.contains("rn"), "{error}");
    assert_eq!(decide(&policy, None, "rm", json!({})).0, "deny");
}
