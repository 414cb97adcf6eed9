//! A rules file as the host's guard, end to end: a call a rule denies is
//! refused with the rule's reason and id (exit 77), one no rule matches
//! goes by the default, and each audit record names the rule that decided.

mod common;

use common::authority::{audited, client, records};
use common::process::{finish, spawn};
use common::{Style, Tally};
use gangway::ipc::{IpcServer, SandboxEnv};
use gangway::policy::Policy;

const RULES: &str = r#"
default = "allow"

[[rule]]
id = "no-mallory"
command = "greet"
when = { name = { one_of = ["mallory", "eve"] } }
decision = "deny"
reason = "greeting mallory or eve is not allowed; greet someone else"
examples = [
  { args = { name = "mallory" }, expect = "deny" },
  { args = { name = "alice" }, expect = "no-match" },
]
"#;

/// Runs `greet NAME` through the client; its pid, exit code and stderr.
fn greet(env: &SandboxEnv, name: &str) -> (u32, Option<i32>, String) {
    let child = spawn(client(env, &["call", "greet", "--", name]));
    let pid = child.id();
    let (code, _, stderr) = finish(child);
    (pid, code, stderr)
}

#[test]
fn a_denying_rule_is_named_to_the_caller_and_in_the_audit_record() {
    let manifest = common::router(&Tally::default()).manifest();
    let policy = Policy::from_toml_str(RULES)
        .and_then(|policy| policy.check_against(&manifest))
        .unwrap_or_else(|error| panic!("{error}"));
    let (host, dir) = audited(IpcServer::builder().guard(policy), Style::Scripts);
    let env = host.env();

    let (denied_pid, code, stderr) = greet(&env, "mallory");
    assert_eq!(code, Some(77), "{stderr}");
    assert!(
        stderr.contains("greeting mallory or eve is not allowed") && stderr.contains("no-mallory"),
        "the caller reads the rule's reason and id: {stderr}"
    );
    let (allowed_pid, code, stderr) = greet(&env, "alice");
    assert_eq!(code, Some(0), "{stderr}");

    let (records, _) = records(host, &dir);
    let of = |pid: u32| {
        records
            .iter()
            .find(|record| record["pid"] == pid)
            .unwrap_or_else(|| panic!("no record of pid {pid}: {records:?}"))
    };
    let denied = of(denied_pid);
    assert_eq!(denied["decision"], "deny", "{denied}");
    assert_eq!(denied["rule"], "no-mallory", "{denied}");
    let allowed = of(allowed_pid);
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    // The default decided: no rule to name.
    assert!(allowed.get("rule").is_none(), "{allowed}");
}

/// The README's "Rules" section: its rules file, read out of the README.
fn readme_rules() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("the README");
    let section = readme
        .split_once("### Rules")
        .expect("the README has a Rules section")
        .1;
    let block = section
        .split_once("```toml\n")
        .expect("a TOML block in the Rules section")
        .1;
    block
        .split_once("```")
        .expect("the block ends")
        .0
        .to_owned()
}

#[test]
fn the_readme_rules_file_loads_and_its_examples_hold() {
    let policy = Policy::from_toml_str(&readme_rules()).unwrap_or_else(|error| panic!("{error}"));
    let verdict = |command: &str, args: serde_json::Value| {
        policy.evaluate(&gangway::ipc::CallInfo::new(Some("agent-1"), command, args))
    };
    let deploy = verdict("deploy", serde_json::json!({ "env": "prod" }));
    assert_eq!(deploy.rule.as_deref(), Some("deploy-prod"));
    let fetch = verdict(
        "fetch",
        serde_json::json!({ "url": "https://docs.rs/tokio" }),
    );
    assert_eq!(fetch.rule.as_deref(), Some("fetch-known-hosts"));
    let elsewhere = verdict(
        "fetch",
        serde_json::json!({ "url": "https://docs.rs.evil/x" }),
    );
    assert_eq!(elsewhere.rule, None, "the default decides");
}
