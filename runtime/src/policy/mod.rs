//! Policies: a rules file that decides each call a sandbox makes (allow
//! it, deny it, or ask a person) without writing a guard in Rust. A
//! [`Policy`] is a [`CallGuard`]: give it to
//! [`IpcServerBuilder::guard`](crate::ipc::IpcServerBuilder::guard).
//!
//! ```toml
//! default = "ask"                      # allow | deny | ask, when no rule matches
//!
//! [[rule]]
//! id = "rm-outside-workspace"
//! command = "rm"                       # a command name, or a glob ("git-*")
//! scope = "agent-*"                    # optional: the scope ids it applies to (a glob)
//! when = { path = { not_under = "/workspace" } }
//! decision = "deny"
//! reason = "rm outside /workspace needs a person; ask the user"
//! examples = [
//!   { args = { path = "/etc/passwd" }, expect = "deny" },
//!   { args = { path = "/workspace/tmp/x" }, expect = "no-match" },
//! ]
//! ```
//!
//! ```
//! use gangway::ipc::CallInfo;
//! use gangway::policy::{Policy, PolicyDecision};
//! use serde_json::json;
//!
//! let policy = Policy::from_toml_str(r#"
//!     default = "allow"
//!     [[rule]]
//!     id = "rm-outside-workspace"
//!     command = "rm"
//!     when = { path = { not_under = "/workspace" } }
//!     decision = "deny"
//!     reason = "rm outside /workspace needs a person; ask the user"
//! "#)?;
//! let call = CallInfo::new(Some("agent-1"), "rm", json!({ "path": "/workspace/../etc" }));
//! let verdict = policy.evaluate(&call);
//! assert!(matches!(verdict.decision, PolicyDecision::Deny { .. }));
//! assert_eq!(verdict.rule.as_deref(), Some("rm-outside-workspace"));
//! # Ok::<(), gangway::policy::PolicyError>(())
//! ```
//!
//! # The file
//!
//! At the top, `default` (`"allow"`, `"deny"` or `"ask"`; `"ask"` when
//! left out) decides a call no rule matches. Each `[[rule]]` has:
//!
//! - `id` (required, unique in the file, not starting with `#`): named to
//!   the caller with the decision, and in load errors (where `#3` labels
//!   the third rule when it has no id).
//! - `command` (required): a command's name, or a glob of names (`"git-*"`).
//! - `scope` (optional): a glob of the scope ids the rule applies to (see
//!   [`Scope::id`](crate::ipc::Scope::id)). A call with the server's
//!   full-access token has no scope, so only rules without `scope` apply
//!   to it.
//! - `when` (optional): conditions on the arguments, by the argument's
//!   wire name (as the command's schema has it). Every condition must
//!   hold; without `when`, the rule matches every call of its commands.
//! - `decision` (required): `"allow"`, `"deny"` or `"ask"`.
//! - `reason` (optional): why, in words the caller (a person or a model)
//!   can act on; it is what a denied caller reads.
//! - `examples` (optional): calls the rule must or must not match, checked
//!   when the file loads (see below).
//!
//! Globs (`command`, `scope`, the `glob` test) are globset's: `**` is any
//! run of characters including `/`, `?` one character, `[a-z]` a class,
//! `{a,b}` either, `\` escapes. Matching is case-sensitive. In the `glob`
//! test `*` is any run of characters but `/` (so `*.txt` does not match
//! `dir/a.txt`; write `**/*.txt`); in `command` and `scope`, whose names
//! may contain `/`, it is any run at all (`team/*` matches `team/a/b`).
//!
//! # Conditions
//!
//! `when = { path = { under = "/workspace" }, force = { absent = true } }`:
//! each argument has a table of tests, all of which must hold.
//!
//! | test | holds when the value |
//! |---|---|
//! | `equals = v` | is `v` (a string, number or boolean; numbers by value, so `1` equals `1.0`) |
//! | `one_of = [v, ...]` | is one of them |
//! | `glob = "..."` | is text the glob matches; an absolute path (text starting with `/`) is matched after lexical normalization, whatever the glob; a glob ending in `/**` matches the folder itself too (`/data/**` matches `/data`) |
//! | `regex = "..."` | is text the regular expression matches **whole** (it is anchored at both ends); `.` matches any character, a newline too |
//! | `under = "/dir"` | is an absolute path that, normalized, is `/dir` or inside it |
//! | `not_under = "/dir"` | is an absolute path that, normalized, is outside `/dir`, or a value that is not text |
//! | `min = n`, `max = n` | is a number at least, at most `n` |
//! | `present = true` / `absent = true` | is given / is not given (`false` reverses each) |
//!
//! Paths are compared after **lexical** normalization: `.`, `..` and
//! repeated slashes are resolved as text (`/workspace/../etc` is `/etc`, so
//! it is not under `/workspace`), and `/workspace2` is not under
//! `/workspace`. Nothing reads the disk: symbolic links are the handler's
//! to resolve. Where a **relative path** points depends on a working
//! directory the rule cannot see, so it is an unknown (see below) to
//! `under`, to `not_under`, and to a `glob` of absolute paths (one that
//! starts with `/`, or with alternatives that do, as `{/a/**,/b/**}`); to
//! any other `glob`, text with a `.` or `..` component (`a/../b`) is an
//! unknown too. Either way a deny or ask rule fires on it, and an allow
//! rule does not let it through.
//!
//! An argument the call does not give (left to its default), an explicit
//! `null` and an empty list are all **not given**: no test holds on them
//! but `absent` (so `not_under` does not fire on a missing path; add a rule
//! with `absent = true` to cover it).
//!
//! A **list** argument is tested element by element, each element against
//! all of that argument's tests (`present` and `absent` look at the whole
//! list), and how the elements combine follows the rule's decision: an
//! `allow` rule matches only when **every** element passes (`not_under`:
//! every path lies outside), so no element slips through among others; a
//! `deny` or `ask` rule matches when **any** element passes, so no element
//! hides among others.
//!
//! A value the guard does not see whole (a secret, which reads
//! `"<redacted>"`; text cut short; bytes and large lists, shown as their
//! size; a list element of those kinds) cannot be tested, nor can a
//! relative path (above): a rule that hinges on one matches when it
//! denies or asks, and does not when it allows.
//!
//! # Which rule decides
//!
//! Of the rules that match a call, a `deny` wins over an `ask`, and an
//! `ask` over an `allow`; among rules with the same decision, the first in
//! the file. The deciding rule's `id` and `reason` go to the caller
//! ([`Verdict`]); when none matches, `default` decides.
//!
//! # Examples and load errors
//!
//! Each example (`{ args = { ... }, expect = "deny", scope = "agent-1" }`)
//! is put to its own rule alone, not the whole policy: `expect` is the
//! rule's decision when the rule matches, or `"no-match"`. Without a
//! `scope`, the rule's own `scope` is left aside; with one, the example is
//! a call from that scope.
//!
//! Loading reports every problem at once, each with the file, the line and
//! the rule ([`PolicyProblem`]): an unknown key (with the closest known
//! one), a bad glob or regular expression, a wrong value, and every
//! example whose outcome differs from its `expect`.
//! [`check_against`](Policy::check_against) adds what needs the host's
//! commands: a `command` that matches none of them, a condition on an
//! argument the command does not have, on a secret argument
//! (`#[ipc(secret)]`: a rule must not look at secrets), or that cannot fit
//! the argument's type.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;

use crate::ipc::{CallGuard, CallInfo, Decision, Ruling};
use crate::tool::Manifest;

mod check;
mod condition;
mod error;
mod evaluate;
mod examples;
mod file;
mod glob;
mod model;
mod path;
mod toml_read;
mod when;

#[cfg(test)]
mod tests;

pub use error::{PolicyError, PolicyProblem};
pub use evaluate::{PolicyDecision, Verdict};

use evaluate::RuleIndex;
use model::{Action, Rule};
use toml_read::Reader;

/// The largest rules file [`Policy::load`] reads.
const MAX_RULES_FILE: u64 = 16 << 20;

/// The file name problems name for rules given as text.
const TEXT_SOURCE: &str = "<policy text>";

/// A rules file, loaded and checked: decides each call (see the
/// [module documentation](self) for the file).
#[derive(Debug, Clone)]
pub struct Policy {
    /// The file problems name: its path, or [`TEXT_SOURCE`].
    source: String,
    /// The file, when loaded from one.
    path: Option<PathBuf>,
    /// The decision when no rule matches.
    default: Action,
    /// The rules, in file order.
    rules: Vec<Rule>,
    /// The rules by command.
    index: RuleIndex,
}

impl Policy {
    /// Reads and checks the rules file at `path`: its syntax, its keys and
    /// values, and each rule's examples. Every problem found is in the
    /// error.
    pub fn load(path: impl AsRef<Path>) -> Result<Policy, PolicyError> {
        let path = path.as_ref();
        let read_error = |source| PolicyError::Read {
            path: path.to_owned(),
            source,
        };
        // Not a device or a pipe (which could be endless, or block), nor a
        // file no person writes by hand.
        let meta = std::fs::metadata(path).map_err(read_error)?;
        if !meta.is_file() || meta.len() > MAX_RULES_FILE {
            let why = if meta.is_file() {
                format!("it is over {} MiB", MAX_RULES_FILE >> 20)
            } else {
                "it is not a regular file".to_owned()
            };
            return Err(read_error(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                why,
            )));
        }
        let text = std::fs::read_to_string(path).map_err(read_error)?;
        Policy::parse(&text, path.display().to_string(), Some(path.to_owned()))
    }

    /// The rules in `text`, checked as [`load`](Policy::load) checks a
    /// file (whose problems name `<policy text>` as the file).
    pub fn from_toml_str(text: &str) -> Result<Policy, PolicyError> {
        Policy::parse(text, TEXT_SOURCE.to_owned(), None)
    }

    fn parse(text: &str, source: String, path: Option<PathBuf>) -> Result<Policy, PolicyError> {
        let mut reader = Reader::new(text, &source);
        let rules_file = file::read_rules(text, &mut reader);
        examples::check_examples(&rules_file.rules, &mut reader);
        let index = RuleIndex::new(&rules_file.rules).unwrap_or_else(|message| {
            reader.problems.add(None, None, message);
            RuleIndex::default()
        });
        reader.problems.finish(Policy {
            source,
            path,
            default: rules_file.default,
            rules: rules_file.rules,
            index,
        })
    }

    /// Checks the rules against the commands a host serves (its router's
    /// [`manifest`](crate::ipc::IpcRouter::manifest)): each `command`
    /// must match one of them, and each condition must test an argument
    /// its commands have, that is not secret, in a way that fits its type.
    /// The policy back when all is well; every problem otherwise.
    ///
    /// ```no_run
    /// # use gangway::policy::Policy;
    /// # let router = gangway::ipc::IpcRouter::new();
    /// let policy = Policy::load("policy.toml")?.check_against(&router.manifest())?;
    /// # Ok::<(), gangway::policy::PolicyError>(())
    /// ```
    pub fn check_against(self, manifest: &Manifest) -> Result<Policy, PolicyError> {
        let mut problems = error::Problems::new(&self.source);
        check::check_rules(&self.rules, manifest, &mut problems);
        problems.finish(self)
    }

    /// What the policy says of `call`.
    pub fn evaluate(&self, call: &CallInfo) -> Verdict {
        evaluate::evaluate(
            &self.rules,
            &self.index,
            self.default,
            call.scope(),
            call.command(),
            call.args(),
        )
    }

    /// The file the policy was loaded from; `None` for one made from text.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The guard's answer for `call`: a denial names the deciding rule, and
    /// a call the policy would ask about is refused (no one is there to
    /// ask) with a reason saying it needs approval and how to grant it.
    fn rule_on(&self, call: &CallInfo) -> Ruling {
        let verdict = self.evaluate(call);
        let decision = self.decide(&verdict);
        match verdict.rule {
            Some(rule) => Ruling::new(decision).by_rule(rule),
            None => Ruling::new(decision),
        }
    }

    fn decide(&self, verdict: &Verdict) -> Decision {
        let rule = verdict.rule.as_deref();
        match &verdict.decision {
            PolicyDecision::Allow => Decision::Allow,
            PolicyDecision::Deny { reason } => match rule {
                Some(rule) => Decision::Deny(format!("{reason} (policy rule `{rule}`)")),
                None => Decision::Deny(reason.clone()),
            },
            PolicyDecision::Ask => {
                let why = match (rule, &verdict.reason) {
                    (Some(rule), Some(reason)) => format!("policy rule `{rule}`: {reason}"),
                    (Some(rule), None) => format!("policy rule `{rule}`"),
                    (None, _) => {
                        "no policy rule matches it, and the policy's default is to ask".to_owned()
                    }
                };
                let file = match &self.path {
                    Some(path) => format!("the policy file {}", path.display()),
                    None => "the host's policy".to_owned(),
                };
                Decision::Deny(format!(
                    "this call needs a person's approval ({why}), and the host has no one to ask; \
                     ask the user to approve it, or to allow it with a rule whose decision is \"allow\" in {file}"
                ))
            }
        }
    }
}

impl CallGuard for Policy {
    fn check<'a>(
        &'a self,
        call: &'a CallInfo,
    ) -> Pin<Box<dyn Future<Output = Decision> + Send + 'a>> {
        Box::pin(std::future::ready(self.rule_on(call).decision))
    }

    /// The decision, naming the deciding rule (none for the default).
    fn ruling<'a>(
        &'a self,
        call: &'a CallInfo,
    ) -> Pin<Box<dyn Future<Output = Ruling> + Send + 'a>> {
        Box::pin(std::future::ready(self.rule_on(call)))
    }
}
