//! `gangway policy check` and `gangway policy explain`, run as the real
//! `gangway` binary on rules files good and broken, against a manifest
//! written from a router of this file's commands.

use std::path::PathBuf;
use std::process::{Command, Output};

use gangway::IpcCommand;
use gangway::ipc::IpcRouter;
use serde::Serialize;

const GANGWAY: &str = env!("CARGO_BIN_EXE_gangway");

/// Remove files.
#[derive(Clone, Default, Serialize, IpcCommand)]
#[ipc(name = "rm", response = String)]
struct Rm {
    /// The file or folder.
    #[ipc(positional)]
    path: String,
    /// Into folders.
    #[ipc(short = 'r')]
    recursive: bool,
    /// Without asking.
    #[ipc(short = 'f')]
    force: bool,
}

impl Rm {
    async fn handle(&mut self) -> String {
        String::new()
    }
}

/// Log in with a key.
#[derive(Clone, Default, Serialize, IpcCommand)]
#[ipc(name = "login", response = String)]
struct Login {
    /// Who logs in.
    #[ipc(positional)]
    user: String,
    /// The API key.
    #[ipc(secret)]
    key: String,
}

impl Login {
    async fn handle(&mut self) -> String {
        String::new()
    }
}

/// Write a file: its text comes on standard input.
#[derive(Clone, Default, Serialize, IpcCommand)]
#[ipc(name = "write", response = String)]
struct WriteFile {
    /// Where.
    #[ipc(positional)]
    path: String,
    /// What.
    #[ipc(stdin)]
    text: String,
}

impl WriteFile {
    async fn handle(&mut self) -> String {
        String::new()
    }
}

/// A good rules file: two rules, three examples.
const GOOD: &str = r#"default = "ask"

[[rule]]
id = "rm-outside-workspace"
command = "rm"
when = { path = { not_under = "/workspace" } }
decision = "deny"
reason = "rm outside /workspace needs a person; ask the user"
examples = [
  { args = { path = "/etc/passwd" }, expect = "deny" },
  { args = { path = "/workspace/tmp/x" }, expect = "no-match" },
]

[[rule]]
id = "rm-in-workspace"
command = "rm"
when = { path = { under = "/workspace" } }
decision = "allow"
reason = "the workspace is the agent's"
examples = [{ args = { path = "/workspace/a" }, expect = "allow" }]

[[rule]]
id = "login-by-agents"
command = "login"
scope = "agent-*"
decision = "deny"
reason = "agents do not log in"
"#;

/// A temporary folder holding a rules file and the manifest.
struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new(rules: &str) -> Files {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("rules.toml"), rules).unwrap();
        let manifest = IpcRouter::new()
            .register(Rm::default())
            .register(Login::default())
            .register(WriteFile::default())
            .manifest();
        std::fs::write(
            dir.path().join("m.json"),
            serde_json::to_vec_pretty(&manifest).unwrap(),
        )
        .unwrap();
        Files { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Runs `gangway policy <args>` in the folder (so `rules.toml` and
    /// `m.json` name its files).
    fn gangway(&self, args: &[&str]) -> Output {
        Command::new(GANGWAY)
            .arg("policy")
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap()
    }

    fn explain(&self, scope: Option<&str>, call: &[&str]) -> Output {
        let mut args = vec!["explain", "rules.toml", "--manifest", "m.json"];
        if let Some(scope) = scope {
            args.extend(["--scope", scope]);
        }
        args.push("--");
        args.extend(call);
        self.gangway(&args)
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        stdout(out),
        stderr(out)
    );
}

#[test]
fn check_passes_a_good_file_with_a_summary() {
    let files = Files::new(GOOD);
    let out = files.gangway(&["check", "rules.toml"]);
    assert_exit(&out, 0);
    assert_eq!(stdout(&out), "rules.toml: 3 rules, 3 examples, all hold\n");
    let out = files.gangway(&["check", "rules.toml", "--manifest", "m.json"]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out),
        "rules.toml: 3 rules, 3 examples, all hold; checked against m.json (3 commands)\n"
    );
}

#[test]
fn check_notes_a_file_with_no_rules() {
    let files = Files::new("# nothing yet\ndefault = \"deny\"\n");
    let out = files.gangway(&["check", "rules.toml"]);
    assert_exit(&out, 0);
    assert_eq!(stdout(&out), "rules.toml: 0 rules, 0 examples, all hold\n");
    assert_eq!(
        stderr(&out),
        "note: rules.toml has no rules, so its `default` decides every call\n"
    );
    let files = Files::new(GOOD);
    assert_eq!(
        stderr(&files.gangway(&["check", "rules.toml"])),
        "",
        "no note when there are rules"
    );
}

#[test]
fn check_notes_an_approves_that_answers_nothing() {
    let files = Files::new(
        "[[rule]]\nid = \"ask-rm\"\ncommand = \"rm\"\ndecision = \"ask\"\n\
         [[rule]]\nid = \"ok\"\ncommand = \"rm\"\ndecision = \"allow\"\napproves = \"ask-mr\"\n",
    );
    let out = files.gangway(&["check", "rules.toml"]);
    assert_exit(&out, 0);
    assert_eq!(
        stderr(&out),
        "note: rules.toml:9: rule \"ok\": `approves` names \"ask-mr\", but no rule has that id, so it answers nothing; did you mean \"ask-rm\"?\n"
    );
}

#[test]
fn check_lists_each_failure_with_its_rule_and_line() {
    let broken = GOOD
        .replace(
            r#"{ args = { path = "/workspace/a" }, expect = "allow" }"#,
            r#"{ args = { path = "/etc/a" }, expect = "allow" }"#,
        )
        .replace(r#"reason = "agents do not log in""#, r#"reasn = "agents""#);
    let files = Files::new(&broken);
    let out = files.gangway(&["check", "rules.toml"]);
    assert_exit(&out, 1);
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].starts_with(r#"rules.toml:20: rule "rm-in-workspace": "#),
        "{err}"
    );
    assert!(
        lines[1].starts_with(r#"rules.toml:27: rule "login-by-agents": "#),
        "{err}"
    );
    assert!(lines[1].contains(r#"did you mean "reason"?"#), "{err}");
    assert!(err.contains("2 problems in the rules"), "{err}");
}

#[test]
fn check_against_the_manifest_names_an_unknown_argument() {
    let files = Files::new(
        r#"
[[rule]]
id = "force-asks"
command = "rm"
when = { forse = { equals = true } }
decision = "ask"
"#,
    );
    // Alone, the file cannot know `rm` has no `forse`.
    assert_exit(&files.gangway(&["check", "rules.toml"]), 0);
    let out = files.gangway(&["check", "rules.toml", "--manifest", "m.json"]);
    assert_exit(&out, 1);
    let err = stderr(&out);
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(r#"rules.toml:5: rule "force-asks": "#) && first.contains("forse"),
        "{err}"
    );
    assert!(first.contains(r#""force""#), "no did-you-mean: {err}");
}

#[test]
fn a_missing_rules_file_or_a_bad_manifest_is_a_usage_error() {
    let files = Files::new(GOOD);
    let out = files.gangway(&["check", "nope.toml"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("nope.toml"), "{}", stderr(&out));
    assert!(stderr(&out).contains("check the path"), "{}", stderr(&out));

    std::fs::write(files.path("bad.json"), "{}").unwrap();
    let out = files.gangway(&["check", "rules.toml", "--manifest", "bad.json"]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("bad.json: not a gangway manifest"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("gangway manifest --src"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn explain_a_deny() {
    let out = Files::new(GOOD).explain(None, &["rm", "-rf", "/etc"]);
    assert_exit(&out, 0);
    assert_eq!(
        stdout(&out),
        "call: rm {\"force\":true,\"path\":\"/etc\",\"recursive\":true} \
         (no scope: the full-access token)\n\
         rule: rm-outside-workspace\n\
         decision: deny\n\
         reason: rm outside /workspace needs a person; ask the user\n"
    );
}

#[test]
fn explain_an_allow() {
    let out = Files::new(GOOD).explain(Some("agent-1"), &["rm", "/workspace/../workspace/x"]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(text.contains("(scope agent-1)"), "{text}");
    assert!(
        text.ends_with(
            "rule: rm-in-workspace\ndecision: allow\nreason: the workspace is the agent's\n"
        ),
        "{text}"
    );
}

#[test]
fn explain_the_default_when_no_rule_matches() {
    // Outside an agent scope, no rule is about `login`.
    let out = Files::new(GOOD).explain(Some("ci"), &["login", "ann", "--key", "k"]);
    assert_exit(&out, 0);
    assert!(
        stdout(&out).ends_with("no rule matches: default ask\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn explain_shows_a_secret_argument_redacted() {
    let out = Files::new(GOOD).explain(Some("agent-7"), &["login", "ann", "--key", "hunter2"]);
    assert_exit(&out, 0);
    let text = stdout(&out);
    assert!(!text.contains("hunter2"), "{text}");
    assert!(
        text.starts_with("call: login {\"key\":\"<redacted>\",\"user\":\"ann\"} (scope agent-7)\n"),
        "{text}"
    );
    assert!(
        text.contains("rule: login-by-agents\ndecision: deny\n"),
        "{text}"
    );
}

#[test]
fn explain_reports_binding_errors_as_a_call_would() {
    let files = Files::new(GOOD);
    let out = files.explain(None, &["logn", "ann"]);
    assert_exit(&out, 2);
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("unknown command `logn`; did you mean `login`?"),
        "{}",
        stderr(&out)
    );

    let out = files.explain(None, &["rm", "--forse", "/etc"]);
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("rm: unknown flag `--forse`; did you mean `--force`?"),
        "{err}"
    );
    assert!(err.contains("try `rm --help`"), "{err}");
}

#[test]
fn explain_refuses_rules_that_do_not_load() {
    let files = Files::new(&GOOD.replace("decision = \"allow\"", "decision = \"alow\""));
    let out = files.explain(None, &["rm", "/etc"]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("rules.toml:"), "{}", stderr(&out));
}

#[test]
fn the_lean_client_links_no_policy_parser() {
    let client = env!("CARGO_BIN_EXE_gangway-client");
    let Ok(symbols) = Command::new("nm").args(["-C", client]).output() else {
        eprintln!("skipped: no `nm` to read the client's symbols");
        return;
    };
    assert!(symbols.status.success(), "{}", stderr(&symbols));
    let symbols = stdout(&symbols);
    assert!(
        symbols.contains("gangway::caller::run"),
        "nm reads the program"
    );
    for heavy in [
        "toml_edit::",
        "winnow::",
        "globset::",
        "regex::",
        "regex_automata::",
    ] {
        assert!(
            !symbols.contains(heavy),
            "the lean client links {heavy} code"
        );
    }
}

#[test]
fn explain_takes_the_standard_input_a_call_would_pipe() {
    let files = Files::new(GOOD);
    let piped = files.gangway(&[
        "explain",
        "rules.toml",
        "--manifest",
        "m.json",
        "--stdin",
        "hello",
        "--",
        "write",
        "/w/a",
    ]);
    assert_exit(&piped, 0);
    let text = stdout(&piped);
    assert!(
        text.starts_with("call: write {\"path\":\"/w/a\",\"text\":\"hello\"}"),
        "{text}"
    );
    // Without it, the required input is missing, as for a call with none.
    let bare = files.explain(None, &["write", "/w/a"]);
    assert_exit(&bare, 2);
}

#[test]
fn a_rules_file_that_is_not_utf8_is_named_as_such() {
    let files = Files::new(GOOD);
    std::fs::write(files.path("rules.toml"), b"default = \"ask\"\n# \xff\n").unwrap();
    let out = files.gangway(&["check", "rules.toml"]);
    assert_exit(&out, 2);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(text.contains("must be UTF-8 text"), "{text}");
}
