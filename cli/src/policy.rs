//! `gangway policy`: checks a rules file (`gangway::policy`) before a host
//! loads it, and explains what it decides of one call.
//!
//! - `gangway policy check <RULES> [--manifest <file>]`: loads the file,
//!   which runs every rule's examples, and with `--manifest` checks the
//!   rules against the host's commands. Exit 0 with a summary on stdout;
//!   1 with every problem (`file:line: rule "id": message`) on stderr; 2
//!   when the file or the manifest cannot be read.
//! - `gangway policy explain <RULES> --manifest <file> [--scope <ID>] --
//!   <command> <words...>`: binds the words to the command's schema as a
//!   call does, and prints the arguments a guard sees (secrets redacted),
//!   the deciding rule, its decision and its reason. Exit 0 whenever it
//!   explained (whatever the decision); 1 when the rules are wrong; 2 for a
//!   file or manifest that cannot be read and for words the call would
//!   refuse (an unknown command, a bad flag), reported as the call would.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use gangway::ipc::{CallInfo, ErrorKind, exit};
use gangway::policy::{Policy, PolicyDecision, PolicyError, Verdict};
use gangway::tool::Manifest;

/// `gangway policy`'s subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum PolicyCommand {
    /// Load a rules file, run its examples and, with `--manifest`, check
    /// its rules against the host's commands.
    #[command(after_help = CHECK_AFTER_HELP)]
    Check(Check),
    /// Say which rule decides a call, and what it decides.
    #[command(after_help = EXPLAIN_AFTER_HELP)]
    Explain(Explain),
}

/// What `gangway policy check --help` adds.
const CHECK_AFTER_HELP: &str = "\
Exit codes:
  0  the rules load and every example holds (a summary on stdout)
  1  the rules are wrong: each problem on stderr, as file:line: rule \"id\": message
  2  the rules file or the manifest cannot be read, or a usage error";

/// What `gangway policy explain --help` adds.
const EXPLAIN_AFTER_HELP: &str = "\
The words are bound to the command's schema as a call binds them, and the
rules see what a guard sees: secret arguments read \"<redacted>\". Example:

  gangway policy explain rules.toml --manifest m.json --scope agent-1 -- rm -rf /etc

Exit codes:
  0  explained (the decision is on stdout, whatever it is)
  1  the rules are wrong: each problem on stderr, as file:line: rule \"id\": message
  2  the rules file or the manifest cannot be read, or the call would be
     refused before any guard (an unknown command, a bad flag or value)";

/// `gangway policy check`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct Check {
    /// The rules file (TOML).
    #[arg(value_name = "RULES")]
    rules: PathBuf,
    /// The host's commands, as `IpcRouter::manifest()` writes them: also
    /// check each rule's commands and conditions against them.
    #[arg(long, value_name = "FILE")]
    manifest: Option<PathBuf>,
}

/// `gangway policy explain`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct Explain {
    /// The rules file (TOML).
    #[arg(value_name = "RULES")]
    rules: PathBuf,
    /// The host's commands, as `IpcRouter::manifest()` writes them: the
    /// words are bound by the command's schema there.
    #[arg(long, value_name = "FILE")]
    manifest: PathBuf,
    /// The caller's scope id (`Scope::id`); without it, the call is the
    /// full-access token's, which only rules without `scope` apply to.
    #[arg(long, value_name = "ID")]
    scope: Option<String>,
    /// The text the call would have piped in on standard input (what fills
    /// a command's stdin argument); without it, nothing is piped.
    #[arg(long, value_name = "TEXT")]
    stdin: Option<String>,
    /// The command called.
    #[arg(value_name = "COMMAND")]
    command: String,
    /// Its words, as a sandboxed shell would give them.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "WORDS"
    )]
    words: Vec<String>,
}

/// Runs `gangway policy <subcommand>`, giving the exit code.
pub(crate) fn run(command: PolicyCommand) -> i32 {
    match command {
        PolicyCommand::Check(check) => run_check(&check),
        PolicyCommand::Explain(explain) => run_explain(&explain),
    }
}

/// `gangway policy check`.
fn run_check(check: &Check) -> i32 {
    let manifest = match check.manifest.as_deref().map(read_manifest).transpose() {
        Ok(manifest) => manifest,
        Err(message) => return usage_error(&message),
    };
    let policy = match load(&check.rules, manifest.as_ref()) {
        Ok(policy) => policy,
        Err(code) => return code,
    };
    for note in policy.notes() {
        gangway::caller::say(format!("note: {note}"));
    }
    let (rules, examples) = (policy.rule_count(), policy.example_count());
    if rules == 0 {
        gangway::caller::say(format!(
            "note: {} has no rules, so its `default` decides every call",
            check.rules.display()
        ));
    }
    let mut summary = format!(
        "{}: {} rule{}, {} example{}, all hold",
        check.rules.display(),
        rules,
        plural(rules),
        examples,
        plural(examples)
    );
    if let (Some(manifest), Some(file)) = (&manifest, &check.manifest) {
        let commands = manifest.commands.len();
        let _ = write!(
            summary,
            "; checked against {} ({commands} command{})",
            file.display(),
            plural(commands)
        );
    }
    gangway::caller::write_stdout(format!("{summary}\n").as_bytes())
}

/// `gangway policy explain`.
fn run_explain(explain: &Explain) -> i32 {
    let manifest = match read_manifest(&explain.manifest) {
        Ok(manifest) => manifest,
        Err(message) => return usage_error(&message),
    };
    let policy = match load(&explain.rules, Some(&manifest)) {
        Ok(policy) => policy,
        Err(code) => return code,
    };
    let command = &explain.command;
    let scope = explain.scope.as_deref();
    let stdin = explain.stdin.clone().map(String::into_bytes);
    let call = match CallInfo::from_argv(&manifest, scope, command, &explain.words, stdin) {
        Ok(Some(call)) => call,
        Ok(None) => {
            let text = format!(
                "`{command}` with these words asks for its help: no call is made, so no rule decides\n"
            );
            return gangway::caller::write_stdout(text.as_bytes());
        }
        Err(error) => {
            // As the client reports a call the host refused to bind.
            gangway::caller::say(error.to_string());
            if matches!(error.kind(), ErrorKind::Usage | ErrorKind::InvalidParams) {
                gangway::caller::say(format!("try `{command} --help` for the arguments it takes"));
            }
            return error.exit_code();
        }
    };
    let verdict = policy.evaluate(&call);
    gangway::caller::write_stdout(explanation(&call, &verdict).as_bytes())
}

/// What `explain` prints: the call as the rules see it, then the deciding
/// rule (or the default), its decision and its reason.
fn explanation(call: &CallInfo, verdict: &Verdict) -> String {
    let mut text = format!("call: {} {}", call.command(), call.args());
    match call.scope() {
        Some(scope) => {
            let _ = writeln!(text, " (scope {scope})");
        }
        None => text.push_str(" (no scope: the full-access token)\n"),
    }
    let decision = match &verdict.decision {
        PolicyDecision::Allow => "allow",
        PolicyDecision::Deny { .. } => "deny",
        PolicyDecision::Ask => "ask",
    };
    match &verdict.rule {
        Some(rule) => {
            let _ = writeln!(text, "rule: {rule}\ndecision: {decision}");
        }
        None => {
            let _ = writeln!(text, "no rule matches: default {decision}");
        }
    }
    let reason = match &verdict.decision {
        PolicyDecision::Deny { reason } => Some(reason),
        _ => verdict.reason.as_ref(),
    };
    if let Some(reason) = reason {
        let _ = writeln!(text, "reason: {reason}");
    }
    text
}

/// Loads the rules (checked against `manifest` when given); on failure,
/// reports it and gives the exit code: 1 for wrong rules, 2 for a file
/// that cannot be read.
fn load(rules: &Path, manifest: Option<&Manifest>) -> Result<Policy, i32> {
    let checked = Policy::load(rules).and_then(|policy| match manifest {
        Some(manifest) => policy.check_against(manifest),
        None => Ok(policy),
    });
    checked.map_err(|error| match error {
        PolicyError::Read { ref source, .. }
            if source.kind() == std::io::ErrorKind::InvalidData =>
        {
            usage_error(&format!("{error}; the rules file must be UTF-8 text"))
        }
        PolicyError::Read { .. } => {
            usage_error(&format!("{error}; check the path to the rules file"))
        }
        error => {
            eprintln!("{error}");
            let count = error.problems().len();
            eprintln!(
                "gangway: {}: {count} problem{} in the rules; fix {} and run `gangway policy check` again",
                rules.display(),
                plural(count),
                if count == 1 { "it" } else { "them" }
            );
            exit::FAILURE
        }
    })
}

/// The manifest in `file`, or why it cannot be had and how to make one.
fn read_manifest(file: &Path) -> Result<Manifest, String> {
    const HOW: &str = "write one with `gangway manifest --src <crate dir>`, \
                       or from the host's `IpcRouter::manifest()` serialized as JSON";
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read the manifest {}: {e}; {HOW}", file.display()))?;
    let manifest: Manifest = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a gangway manifest: {e}; {HOW}", file.display()))?;
    if manifest.format != Manifest::FORMAT {
        return Err(format!(
            "{}: a manifest of format {}, but this gangway reads format {}; {HOW} with this version",
            file.display(),
            manifest.format,
            Manifest::FORMAT
        ));
    }
    Ok(manifest)
}

/// Reports a file that cannot be read or a usage mistake: exit 2.
fn usage_error(message: &str) -> i32 {
    eprintln!("gangway: {message}");
    exit::USAGE
}

/// `"s"` unless `count` is one.
fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}
