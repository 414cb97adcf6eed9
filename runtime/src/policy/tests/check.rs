//! `check_against`: rules put to the commands a host really has.

use crate::policy::Policy;
use crate::tool::{Manifest, ParamSchema, ToolSchema, ValueKind};

fn manifest() -> Manifest {
    let mode = ValueKind::Enum(vec!["fast".into(), "slow".into()].into());
    Manifest::new(vec![
        ToolSchema::new("rm")
            .with_param(ParamSchema::new("path", ValueKind::Path).alias("target"))
            .with_param(ParamSchema::new("force", ValueKind::Bool))
            .with_param(ParamSchema::new("password", ValueKind::String).secret())
            .with_param(ParamSchema::new("mode", mode))
            .with_param(ParamSchema::new("blob", ValueKind::Bytes))
            .with_param(ParamSchema::new("count", ValueKind::UInt)),
        ToolSchema::new("git-push").with_param(ParamSchema::new("remote", ValueKind::String)),
        ToolSchema::new("git-pull")
            .with_param(ParamSchema::new("remote", ValueKind::String))
            .with_param(ParamSchema::new("rebase", ValueKind::Bool)),
        ToolSchema::new("ls").with_param(ParamSchema::new("path", ValueKind::Path)),
        ToolSchema::new("settings").with_param(ParamSchema::new("value", ValueKind::Json)),
    ])
}

/// Every problem `text` has against the manifest (it must load).
fn check_error(text: &str) -> String {
    let policy = super::policy(text);
    match policy.check_against(&manifest()) {
        Ok(_) => panic!("the policy should not pass the check:\n{text}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn rules_that_fit_pass() {
    let text = r#"
        [[rule]]
        id = "rm"
        command = "rm"
        when = { path = { not_under = "/workspace" }, force = { equals = true }, mode = { one_of = ["fast"] }, count = { max = 3 }, blob = { absent = true } }
        decision = "deny"
        examples = [{ args = { path = "/etc", force = true, mode = "fast", count = 1 }, expect = "deny" }]
        [[rule]]
        id = "git"
        command = "git-*"
        when = { remote = { glob = "origin*" } }
        decision = "ask"
        [[rule]]
        id = "settings"
        command = "settings"
        when = { value = { min = 1, glob = "x" } }
        decision = "ask"
    "#;
    let policy = super::policy(text).check_against(&manifest()).unwrap();
    assert_eq!(
        policy
            .evaluate(&crate::ipc::CallInfo::new(
                None,
                "git-pull",
                serde_json::json!({"remote": "origin"})
            ))
            .rule
            .as_deref(),
        Some("git")
    );
}

#[test]
fn a_command_that_matches_none_suggests_the_closest() {
    let text = r#"[[rule]]
id = "typo"
command = "git-psh"
decision = "deny"

[[rule]]
id = "svn"
command = "svn-*"
decision = "deny"
"#;
    assert_eq!(
        check_error(text),
        "<policy text>:3: rule \"typo\": `command` \"git-psh\" matches no command of the host; did you mean \"git-push\"?; \
         its commands are `git-pull`, `git-push`, `ls`, `rm`, `settings`\n\
         <policy text>:8: rule \"svn\": `command` \"svn-*\" matches no command of the host; \
         its commands are `git-pull`, `git-push`, `ls`, `rm`, `settings`"
    );
}

#[test]
fn conditions_must_name_an_argument_of_the_command() {
    let text = r#"[[rule]]
id = "args"
command = "rm"
decision = "deny"
[rule.when]
pth = { under = "/w" }
target = { under = "/w" }

[[rule]]
id = "git"
command = "git-*"
when = { rebase = { equals = true } }
decision = "deny"
"#;
    assert_eq!(
        check_error(text),
        "<policy text>:6: rule \"args\": `rm` has no argument \"pth\"; did you mean \"path\"?; \
         its arguments are `path`, `force`, `password`, `mode`, `blob`, `count`\n\
         <policy text>:7: rule \"args\": \"target\" is another name of `rm`'s argument \"path\"; \
         a condition names an argument by its wire name: write path\n\
         <policy text>:12: rule \"git\": \"rebase\" is not an argument of `git-push`, which this rule's `command` matches; \
         narrow `command`, or drop the condition"
    );
}

#[test]
fn a_rule_may_not_look_at_a_secret() {
    let text = "[[rule]]\nid = \"s\"\ncommand = \"rm\"\nwhen = { password = { equals = \"x\" } }\ndecision = \"deny\"\n";
    assert_eq!(
        check_error(text),
        "<policy text>:4: rule \"s\": \"password\" is a secret argument of `rm` (#[ipc(secret)]): a rule may not look at \
         a secret (a guard only ever sees \"<redacted>\"); drop this condition"
    );
}

#[test]
fn tests_must_fit_the_argument_type() {
    let text = r#"[[rule]]
id = "types"
command = "rm"
decision = "deny"
[rule.when]
path = { min = 1, equals = 3 }
force = { under = "/w" }
mode = { equals = "fsat" }
blob = { glob = "*" }
count = { regex = "1+" }
"#;
    assert_eq!(
        check_error(text),
        "<policy text>:6: rule \"types\": the condition on \"path\" of `rm`: `equals` = 3 can never equal a value of type path\n\
         <policy text>:6: rule \"types\": the condition on \"path\" of `rm`: `min` cannot test a value of type path\n\
         <policy text>:7: rule \"types\": the condition on \"force\" of `rm`: `under` cannot test a value of type bool\n\
         <policy text>:8: rule \"types\": the condition on \"mode\" of `rm`: `equals`: \"fsat\" is not one of its values; \
         did you mean \"fast\"?; they are `fast`, `slow`\n\
         <policy text>:9: rule \"types\": the condition on \"blob\" of `rm`: `glob` cannot test bytes, which a guard sees only \
         as their length; only present and absent can\n\
         <policy text>:10: rule \"types\": the condition on \"count\" of `rm`: `regex` cannot test a value of type uint"
    );
}

#[test]
fn examples_must_name_arguments_of_the_command() {
    let text = r#"[[rule]]
id = "ex"
command = "ls"
decision = "allow"
examples = [{ args = { pth = "/x" }, expect = "allow" }]
"#;
    assert_eq!(
        check_error(text),
        "<policy text>:5: rule \"ex\": example 1: \"pth\" is not an argument of `ls`; did you mean \"path\"?; \
         use the arguments' wire names"
    );
}

#[test]
fn check_against_keeps_the_policy_when_all_is_well() {
    let policy = Policy::from_toml_str("default = \"deny\"").unwrap();
    assert!(policy.check_against(&manifest()).is_ok());
}
