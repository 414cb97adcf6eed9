//! Every problem a rules file can have, as the error shows it: the file,
//! the line, the rule, what is wrong and how to put it right.

use super::load_error;
use crate::policy::{Policy, PolicyError};

#[test]
fn not_toml() {
    assert_eq!(
        load_error("default = \"ask\"\n[[rule]]\nid = \n"),
        "<policy text>:3: not valid TOML: string values must be quoted, expected literal string"
    );
}

#[test]
fn unknown_keys_suggest_the_closest() {
    let text = r#"defualt = "deny"
[[rule]]
id = "rm-outside"
command = "rm"
decison = "deny"
decision = "deny"
"#;
    assert_eq!(
        load_error(text),
        "<policy text>:1: unknown key \"defualt\"; did you mean \"default\"?; a policy file has `default` and [[rule]] tables\n\
         <policy text>:5: rule \"rm-outside\": unknown key \"decison\"; did you mean \"decision\"?; a rule's keys are \
         id, command, scope, when, decision, reason, examples, approves"
    );
    let misplaced =
        "[[rule]]\nid = \"r\"\ncommand = \"rm\"\ndecision = \"deny\"\ndefault = \"allow\"\n";
    assert_eq!(
        load_error(misplaced),
        "<policy text>:5: rule \"r\": `default` belongs to the whole file, not to a rule: move it above the first [[rule]] header"
    );
    let far = "[[rule]]\nid = \"r\"\ncommand = \"rm\"\ndecision = \"deny\"\ncolour = 3\n";
    assert_eq!(
        load_error(far),
        "<policy text>:5: rule \"r\": unknown key \"colour\"; a rule's keys are id, command, scope, when, decision, reason, examples, approves"
    );
}

#[test]
fn missing_and_wrong_values() {
    let text = r#"default = "maybe"
[[rule]]
command = "rm"
decision = "dney"

[[rule]]
id = "r2"
command = ""
scope = 3
decision = "allow"

[[rule]]
id = "r3"
"#;
    assert_eq!(
        load_error(text),
        "<policy text>:1: `default` is \"maybe\"; it must be one of \"allow\", \"deny\", \"ask\"\n\
         <policy text>:2: rule #1: the rule has no `id`; give it one, unique in the file: id = \"...\"\n\
         <policy text>:4: rule #1: `decision` is \"dney\"; did you mean \"deny\"?; it must be one of \"allow\", \"deny\", \"ask\"\n\
         <policy text>:8: rule \"r2\": `command` is empty; name the command it applies to, or a glob of names: command = \"rm\"\n\
         <policy text>:9: rule \"r2\": `scope` must be a string, not an integer\n\
         <policy text>:12: rule \"r3\": the rule has no `command`; name the command it applies to, or a glob of names: command = \"rm\"\n\
         <policy text>:12: rule \"r3\": the rule has no `decision`; add one: decision = one of allow, deny, ask"
    );
}

#[test]
fn ids_are_unique() {
    let rule = "[[rule]]\nid = \"same\"\ncommand = \"rm\"\ndecision = \"deny\"\n";
    assert_eq!(
        load_error(&format!("{rule}{rule}")),
        "<policy text>:5: rule \"same\": the id \"same\" is already the id of the rule on line 1; give each rule its own id"
    );
}

#[test]
fn rules_must_be_an_array_of_tables() {
    assert_eq!(
        load_error("[rule]\nid = \"r\"\n"),
        "<policy text>:1: `rule` must be an array of tables, not a table: write each rule under a [[rule]] header (two brackets)"
    );
    assert_eq!(
        load_error("rule = [1]\n"),
        "<policy text>:1: rule 1 of the `rule` array is not a table; write each rule under a [[rule]] header"
    );
    // Inline tables in an array are rules too.
    let inline = r#"rule = [{ id = "r", command = "rm", decision = "deny" }]"#;
    assert!(Policy::from_toml_str(inline).is_ok());
}

#[test]
fn bad_globs_and_regexes() {
    let text = r#"[[rule]]
id = "globs"
command = "git-["
scope = "{a,b"
when = { name = { glob = "[z-a]" }, text = { regex = "(unclosed" } }
decision = "deny"
"#;
    assert_eq!(
        load_error(text),
        "<policy text>:3: rule \"globs\": `command`: bad glob \"git-[\": unclosed character class; missing ']'\n\
         <policy text>:4: rule \"globs\": `scope`: bad glob \"{a,b\": unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)\n\
         <policy text>:5: rule \"globs\": the condition on \"name\": bad glob \"[z-a]\": invalid range; 'z' > 'a'\n\
         <policy text>:5: rule \"globs\": the condition on \"text\": bad regex \"(unclosed\": unclosed group"
    );
}

#[test]
fn wrong_conditions() {
    let text = r#"[[rule]]
id = "conds"
command = "rm"
decision = "deny"

[rule.when]
path = { not_undr = "/workspace" }
base = { under = "workspace" }
n = { min = 10, max = 2 }
list = { one_of = [] }
mode = { equals = ["a"] }
flag = { present = "yes" }
size = { max = "big" }
empty = {}
bare = "/etc"
"#;
    assert_eq!(
        load_error(text),
        "<policy text>:7: rule \"conds\": the condition on \"path\": unknown test \"not_undr\"; did you mean \"not_under\"?; \
         a condition's tests are equals, one_of, glob, regex, under, not_under, min, max, present, absent\n\
         <policy text>:8: rule \"conds\": the condition on \"base\": `under` takes an absolute path (starting with /), not \"workspace\"\n\
         <policy text>:9: rule \"conds\": the condition on \"n\": `min` (10) is above `max` (2), so it would never hold\n\
         <policy text>:10: rule \"conds\": the condition on \"list\": `one_of` is empty, so it would never hold; list the values it allows\n\
         <policy text>:11: rule \"conds\": the condition on \"mode\": `equals` takes a string, number or boolean, not an array \
         (a list argument is tested element by element)\n\
         <policy text>:12: rule \"conds\": the condition on \"flag\": `present` takes true or false, not a string\n\
         <policy text>:13: rule \"conds\": the condition on \"size\": `max` takes a number, not a string\n\
         <policy text>:14: rule \"conds\": the condition on \"empty\" has no test; give one of equals, one_of, glob, regex, \
         under, not_under, min, max, present, absent\n\
         <policy text>:15: rule \"conds\": the condition on \"bare\" must be a table of tests, e.g. bare = { equals = ... }, not a string"
    );
    assert_eq!(
        load_error("[[rule]]\nid = \"w\"\ncommand = \"rm\"\ndecision = \"deny\"\nwhen = 3\n"),
        "<policy text>:5: rule \"w\": `when` must be a table of arguments and their tests, \
         e.g. when = { path = { under = \"/workspace\" } }, not an integer"
    );
}

#[test]
fn examples_that_fail_say_why() {
    let text = r#"[[rule]]
id = "rm-outside-workspace"
command = "rm"
scope = "agent-*"
when = { path = { not_under = "/workspace" } }
decision = "deny"
examples = [
  { args = { path = "/etc/passwd" }, expect = "deny" },
  { args = { path = "/workspace/tmp/x" }, expect = "no-match" },
  { args = { path = "/workspace/tmp/x" }, expect = "deny" },
  { args = { path = "/etc" }, expect = "no-match" },
  { args = { path = "/etc" }, expect = "allow" },
  { args = {}, expect = "deny" },
  { args = { path = "/etc" }, scope = "agent-1", expect = "deny" },
  { args = { path = "/etc" }, scope = "ci", expect = "deny" },
]
"#;
    assert_eq!(
        load_error(text),
        "<policy text>:10: rule \"rm-outside-workspace\": example 3 expects deny but the rule gives no-match \
         (path = \"/workspace/tmp/x\" fails not_under = \"/workspace\")\n\
         <policy text>:11: rule \"rm-outside-workspace\": example 4 expects no-match but the rule gives deny (every condition holds)\n\
         <policy text>:12: rule \"rm-outside-workspace\": example 5 expects allow but the rule gives deny (its decision is deny)\n\
         <policy text>:13: rule \"rm-outside-workspace\": example 6 expects deny but the rule gives no-match \
         (path = absent fails not_under = \"/workspace\")\n\
         <policy text>:15: rule \"rm-outside-workspace\": example 8 expects deny but the rule gives no-match \
         (the scope \"ci\" is not \"agent-*\")"
    );
}

#[test]
fn wrong_examples() {
    let text = r#"[[rule]]
id = "ex"
command = "rm"
decision = "deny"
examples = [
  { arg = { path = "/x" }, expect = "deny" },
  { args = { path = "/x" }, expect = "denied" },
  { args = { path = "/x" } },
  { args = "path", expect = "deny", scope = 1 },
  { args = { when = 1979-05-27 }, expect = "deny" },
]
"#;
    assert_eq!(
        load_error(text),
        "<policy text>:6: rule \"ex\": example 1: unknown key \"arg\"; did you mean \"args\"?; an example's keys are args, expect, scope\n\
         <policy text>:7: rule \"ex\": example 2: `expect` is \"denied\"; did you mean \"deny\"?; it must be one of allow, deny, ask, no-match\n\
         <policy text>:8: rule \"ex\": example 3: give `expect`, one of allow, deny, ask, no-match\n\
         <policy text>:9: rule \"ex\": example 4: `args` must be a table of arguments by name, e.g. args = { path = \"/etc\" }\n\
         <policy text>:9: rule \"ex\": example 4: `scope` must be a string, not an integer\n\
         <policy text>:10: rule \"ex\": example 5: `args`: 1979-05-27 is a TOML date, which a call's arguments never are; write it as a string"
    );
    assert_eq!(
        load_error(
            "[[rule]]\nid = \"ex\"\ncommand = \"rm\"\ndecision = \"deny\"\nexamples = [1]\n"
        ),
        "<policy text>:5: rule \"ex\": example 1 is not a table; write it as { args = { ... }, expect = \"deny\" }"
    );
}

#[test]
fn examples_may_be_written_as_tables() {
    let text = r#"[[rule]]
id = "t"
command = "rm"
when.path.under = "/workspace"
decision = "allow"

[[rule.examples]]
args = { path = "/workspace/a" }
expect = "allow"

[[rule.examples]]
expect = "allow"
[rule.examples.args]
path = "/etc"
"#;
    assert_eq!(
        load_error(text),
        "<policy text>:11: rule \"t\": example 2 expects allow but the rule gives no-match \
         (path = \"/etc\" fails under = \"/workspace\")"
    );
}

#[test]
fn every_problem_is_reported_at_once_in_line_order() {
    let text = r#"[[rule]]
id = "a"
command = "rm"
decision = "deny"
examples = [{ args = {}, expect = "no-match" }]

[[rule]]
id = "b"
command = "x["
decision = "deny"
extra = 1
"#;
    let error = Policy::from_toml_str(text).unwrap_err();
    let lines: Vec<Option<usize>> = error
        .problems()
        .iter()
        .map(|problem| problem.line)
        .collect();
    assert_eq!(lines, [Some(5), Some(9), Some(11)], "{error}");
    let rules: Vec<&str> = error
        .problems()
        .iter()
        .filter_map(|problem| problem.rule.as_deref())
        .collect();
    assert_eq!(rules, ["a", "b", "b"]);
}

#[test]
fn a_file_names_its_path_and_an_unreadable_one_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("policy.toml");
    std::fs::write(
        &path,
        "[[rule]]\nid = \"r\"\ncommand = \"rm\"\ndecision = \"deny\"\ndecison = 1\n",
    )
    .unwrap();
    let error = Policy::load(&path).unwrap_err();
    let shown = path.display().to_string();
    assert!(
        error
            .to_string()
            .starts_with(&format!("{shown}:5: rule \"r\": unknown key \"decison\"")),
        "{error}"
    );
    assert_eq!(error.problems()[0].file, shown);
    let missing = dir.path().join("missing.toml");
    let error = Policy::load(&missing).unwrap_err();
    assert!(matches!(error, PolicyError::Read { .. }));
    assert!(
        error.to_string().starts_with(&format!(
            "cannot read the policy file {}: ",
            missing.display()
        )),
        "{error}"
    );
    assert!(std::error::Error::source(&error).is_some());
    // A device (endless) or a folder is refused before anything is read.
    for odd in [std::path::Path::new("/dev/zero"), dir.path()] {
        let error = Policy::load(odd).unwrap_err();
        assert!(
            error.to_string().ends_with("it is not a regular file"),
            "{error}"
        );
    }
}
