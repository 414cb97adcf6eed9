//! Policies: a rules file that decides each call a sandbox makes (allow
//! it, deny it, or ask a person) without writing a guard in Rust. A
//! [`Policy`] is a [`CallGuard`](crate::ipc::CallGuard): give it to
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
//! - `approves` (optional, allow rules only): the id of an ask rule, or a
//!   list of them, whose question this rule answers (see
//!   [Asking a person](#asking-a-person)).
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
//! # Asking a person
//!
//! A call the rules ask about goes to the policy's [`Approver`]
//! ([`with_approver`](Policy::with_approver)): a [`TerminalApprover`]
//! asking on the host's terminal, or a closure for a host with its own UI.
//! The approver answers one of [`Approval`]'s:
//!
//! - `Once`: the call runs; the next one is asked about again.
//! - `Session`: the call runs, and so do the calls from the same scope
//!   with the same command and the same values of the arguments the asking
//!   rules test (every argument the call gives, when the default asked),
//!   without asking, until the scope lapses: it is revoked or expires, or
//!   its server stops. A scope issued again under the same id is asked
//!   afresh. (A call with no scope to lapse, from
//!   [`CallInfo::new`] or an MCP server, keeps its answers by scope id for
//!   as long as the policy lives.)
//! - `Always`: the call runs, and a rule is added at the end of the rules
//!   file (its comments and layout kept; the file replaced in one step by
//!   a new one renamed over it), then in force at once and after a restart:
//!
//!   ```toml
//!   # Added by gangway at 2026-12-03T07:10:00Z: a person answered "always" to "deploy" from scope "agent-1"
//!   # (asked by rule deploy-prod).
//!   [[rule]]
//!   id = "approved-deploy-1"
//!   command = "deploy"
//!   when = { env = { equals = "prod" } }
//!   decision = "allow"
//!   approves = ["deploy-prod"]
//!   ```
//!
//!   `approves` is what lets this rule answer the question: an allow rule
//!   that matches a call and `approves` an ask rule takes that rule's
//!   question away (a denial still wins, and so does any other question).
//!   Such a rule decides only the calls whose question it answers: where
//!   the asking rule does not ask (another scope, other values, or after a
//!   person made it a denial or removed it), it lets nothing through. So the
//!   rule holds in every scope the asking rule asks in. When the default
//!   asked, the rule holds every argument the call gave to its value and
//!   every other argument of the command absent, which needs the host's
//!   commands ([`check_against`](Policy::check_against)). A policy made
//!   from text keeps the rule in memory.
//! - `Deny(reason)`: the call is refused; its caller reads the reason.
//!
//! An answer is held to values the person saw: when one of the values it
//! would cover is not shown whole (text cut short, a size), `Session` and
//! `Always` hold for this call only; when no rule can be written (the file
//! was broken or changed by hand meanwhile; a value is a list, which no
//! test holds to its order; a secret or an argument not given, which only
//! the host's commands name), `Always` holds for the session instead.
//! Either way the host's log says why (`tracing`, target
//! `gangway::policy`). The rules in force once the person has answered
//! decide what the answer can do: a rule made a denial meanwhile wins.
//!
//! With no approver, or no one there ([`Approval::Unavailable`]: no
//! terminal), the call is refused with a reason saying that it needs a
//! person's approval and how to get it. The wait for an answer is the
//! guard's: the call's timeout covers it, and a caller's Ctrl-C drops the
//! question (the caller exits 130). Each call's audit record names the
//! answer (`approval`: `once`, `session`, `always` or `denied`).
//!
//! # Watching the file
//!
//! [`Policy::watch`] reads the file again whenever it changes, so a person
//! can edit the rules while sandboxes run. A change that does not load
//! leaves the rules before it in force, and says why (the log, and
//! [`last_error`](Policy::last_error)) until a change loads.
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

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::ipc::CallInfo;
use crate::tool::Manifest;

mod always;
mod approver;
mod check;
mod condition;
mod error;
mod evaluate;
mod examples;
mod file;
mod glob;
mod guard;
mod model;
mod path;
mod pin;
mod rules;
mod session;
mod state;
mod terminal;
mod toml_read;
mod watch;
mod when;

#[cfg(test)]
mod tests;

pub use approver::{Approval, ApprovalRequest, Approver};
pub use error::{PolicyError, PolicyProblem};
pub use evaluate::{PolicyDecision, Verdict};
pub use terminal::TerminalApprover;

use approver::ApproverName;
use rules::{RuleSet, TEXT_SOURCE};
use state::State;

/// A rules file, loaded and checked: decides each call (see the
/// [module documentation](self) for the file).
///
/// Clones share everything: the rules in force (a watched file's latest),
/// the answers given for sessions, and the approver.
#[derive(Clone)]
pub struct Policy {
    state: Arc<State>,
    approver: Option<Arc<dyn Approver>>,
}

impl fmt::Debug for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rules = self.state.rules();
        f.debug_struct("Policy")
            .field("source", &rules.source)
            .field("default", &rules.default)
            .field("rules", &rules.rules.len())
            .field("approver", &self.approver.as_ref().map(|_| ApproverName))
            .finish()
    }
}

impl Policy {
    /// Reads and checks the rules file at `path`: its syntax, its keys and
    /// values, and each rule's examples. Every problem found is in the
    /// error. The file is read again only when asked
    /// ([`reload`](Policy::reload)), when an "always" answer adds a rule to
    /// it (which puts any edit made since in force too), or when it changes
    /// if the policy [`watch`](Policy::watch)es it.
    pub fn load(path: impl AsRef<Path>) -> Result<Policy, PolicyError> {
        let path = path.as_ref();
        let rules = RuleSet::load(path)?;
        Ok(Policy::with_state(State::new(rules, Some(path.to_owned()))))
    }

    /// The rules in `text`, checked as [`load`](Policy::load) checks a
    /// file (whose problems name `<policy text>` as the file). An "always"
    /// answer adds its rule to these rules in memory, for as long as the
    /// policy lives.
    pub fn from_toml_str(text: &str) -> Result<Policy, PolicyError> {
        let rules = RuleSet::parse(text.to_owned(), TEXT_SOURCE.to_owned())?;
        Ok(Policy::with_state(State::new(rules, None)))
    }

    /// [`load`](Policy::load)s the rules file at `path`, then reads it again
    /// whenever it changes (it is looked at five times a second, by a
    /// thread that ends with the policy's last clone). A change that does
    /// not load (or, after [`check_against`](Policy::check_against), does
    /// not fit the host's commands) leaves the rules before it in force:
    /// the error is logged (`tracing`, target `gangway::policy`) and kept
    /// in [`last_error`](Policy::last_error) until a change loads.
    ///
    /// # Errors
    ///
    /// The file does not load, or the thread cannot be started.
    pub fn watch(path: impl AsRef<Path>) -> Result<Policy, PolicyError> {
        let path = path.as_ref();
        let read = rules::stamp(path);
        let policy = Policy::load(path)?;
        watch::start(&policy.state, path.to_owned(), read).map_err(|source| PolicyError::Read {
            path: path.to_owned(),
            source,
        })?;
        Ok(policy)
    }

    fn with_state(state: State) -> Policy {
        Policy {
            state: Arc::new(state),
            approver: None,
        }
    }

    /// The policy with calls it asks about put to `approver`: a
    /// [`TerminalApprover`], or a closure for a host with its own UI. With
    /// none, such calls are refused, their callers told they need approval.
    #[must_use]
    pub fn with_approver(mut self, approver: impl Approver) -> Policy {
        self.approver = Some(Arc::new(approver));
        self
    }

    /// Checks the rules against the commands a host serves (its router's
    /// [`manifest`](crate::ipc::IpcRouter::manifest)): each `command`
    /// must match one of them, and each condition must test an argument
    /// its commands have, that is not secret, in a way that fits its type.
    /// The policy back when all is well; every problem otherwise. A watched
    /// file's later readings are checked against the same commands.
    ///
    /// ```no_run
    /// # use gangway::policy::Policy;
    /// # let router = gangway::ipc::IpcRouter::new();
    /// let policy = Policy::load("policy.toml")?.check_against(&router.manifest())?;
    /// # Ok::<(), gangway::policy::PolicyError>(())
    /// ```
    pub fn check_against(self, manifest: &Manifest) -> Result<Policy, PolicyError> {
        self.state.check_against(manifest)?;
        Ok(self)
    }

    /// What the rules in force say of `call` (no one is asked, and answers
    /// given for sessions are not looked at).
    pub fn evaluate(&self, call: &CallInfo) -> Verdict {
        self.state
            .rules()
            .evaluate(call.scope(), call.command(), call.args())
            .verdict
    }

    /// The file the policy was loaded from; `None` for one made from text.
    pub fn path(&self) -> Option<&Path> {
        self.state.path.as_deref()
    }

    /// How many rules are in force.
    pub fn rule_count(&self) -> usize {
        self.state.rules().counts().0
    }

    /// How many examples the rules in force have (all of which held when
    /// the rules loaded).
    pub fn example_count(&self) -> usize {
        self.state.rules().counts().1
    }

    /// What is odd in the rules in force without stopping them loading (each
    /// also logged when read): an `approves` that names no ask rule, and so
    /// answers nothing (the rule it named was made a denial, say, or
    /// removed).
    pub fn notes(&self) -> Vec<PolicyProblem> {
        self.state.rules().notes.clone()
    }

    /// Reads the rules file again now, as [`watch`](Policy::watch) does
    /// when it changes (for a host that reloads on a signal, say): its
    /// rules take force if they load, else those before stay and the
    /// error is returned (and kept in [`last_error`](Policy::last_error)).
    /// Nothing is read for a policy made from text.
    pub fn reload(&self) -> Result<(), Arc<PolicyError>> {
        self.state.reload()
    }

    /// Why the rules file's last reading failed (the rules before it are
    /// in force); `None` when it loaded.
    pub fn last_error(&self) -> Option<Arc<PolicyError>> {
        self.state.last_error()
    }

    /// The file named in messages: the rules file, or the host's policy.
    fn file_label(&self) -> String {
        match self.path() {
            Some(path) => format!("the policy file {}", path.display()),
            None => "the host's policy".to_owned(),
        }
    }
}
