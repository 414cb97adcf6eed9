//! Asking a person: what a policy hands an [`Approver`] when a rule (or
//! the default) says `ask` ([`ApprovalRequest`]), and what it answers
//! ([`Approval`]). A host with a terminal uses
//! [`TerminalApprover`](super::TerminalApprover); one with its own UI
//! passes a closure.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::ipc::CallInfo;

/// A person's answer to a call a policy asks about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Approval {
    /// Run it, this once.
    Once,
    /// Run it, and calls of the same command with the same values of the
    /// arguments the rule asks about, from the same scope, until the scope
    /// lapses (it is revoked or expires, or its server stops).
    Session,
    /// Run it, and add a rule to the rules file allowing that command with
    /// those values from now on, in every scope the asking rule asks in
    /// (the file's comments and layout kept).
    Always,
    /// Refuse it; the caller reads the reason (exit 77).
    Deny(String),
    /// No one could be asked (no terminal, no one at the UI): the call is
    /// refused, its caller told it needs approval and how to get it. The
    /// text says why no one could be asked, for the host's log.
    Unavailable(String),
}

/// A call a policy asks a person about.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    call: CallInfo,
    rule: Option<String>,
    reason: Option<String>,
    held: Option<Vec<String>>,
}

impl ApprovalRequest {
    /// A request to approve `call`, which rule `rule` (with `reason`) asks
    /// about: made by the policy, and by tests of an approver.
    pub fn new(call: CallInfo, rule: Option<String>, reason: Option<String>) -> Self {
        ApprovalRequest {
            call,
            rule,
            reason,
            held: None,
        }
    }

    /// The same request, saying which arguments a `Session` or `Always`
    /// answer holds to their values (the others are left free).
    #[must_use]
    pub fn holding(mut self, args: Vec<String>) -> Self {
        self.held = Some(args);
        self
    }

    /// The arguments a `Session` or `Always` answer holds to the values
    /// shown (the others are left free: show the person so); `None` when
    /// such an answer can hold for this call only.
    pub fn held_args(&self) -> Option<&[String]> {
        self.held.as_deref()
    }

    /// The call: its scope, command and arguments (secrets redacted).
    pub fn call(&self) -> &CallInfo {
        &self.call
    }

    /// The caller's scope id; `None` for the full-access token.
    pub fn scope(&self) -> Option<&str> {
        self.call.scope()
    }

    /// The command called.
    pub fn command(&self) -> &str {
        self.call.command()
    }

    /// The arguments, keyed by wire name, secrets reading `"<redacted>"`.
    pub fn args(&self) -> &Value {
        self.call.args()
    }

    /// The id of the rule that asks; `None` when the policy's default does.
    pub fn rule(&self) -> Option<&str> {
        self.rule.as_deref()
    }

    /// The asking rule's `reason`, as written (when more than one rule
    /// asks, each other one's id and reason follow).
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }
}

/// Asks a person whether a call may run
/// ([`Policy::with_approver`](super::Policy::with_approver)).
///
/// The policy waits for the answer; the call's timeout covers the wait,
/// and a caller's Ctrl-C (or the timeout, or the scope's revocation) drops
/// the future, which is how an approver sees that the question is moot:
/// take the question down when it is dropped.
///
/// Any `Fn(&ApprovalRequest) -> impl Future<Output = Approval>` is an
/// approver. Its future may not borrow the request: clone what it needs.
///
/// ```
/// use gangway::policy::{Approval, ApprovalRequest, Policy};
///
/// let policy = Policy::from_toml_str(r#"default = "ask""#)?.with_approver(
///     |request: &ApprovalRequest| {
///         let command = request.command().to_owned();
///         async move {
///             if command == "ls" { Approval::Session } else { Approval::Deny("not now".into()) }
///         }
///     },
/// );
/// # drop(policy);
/// # Ok::<(), gangway::policy::PolicyError>(())
/// ```
pub trait Approver: Send + Sync + 'static {
    /// Asks about one call.
    fn approve<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = Approval> + Send + 'a>>;
}

impl<F, Fut> Approver for F
where
    F: Fn(&ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Approval> + Send + 'static,
{
    fn approve<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = Approval> + Send + 'a>> {
        Box::pin(self(request))
    }
}

/// Shown for an approver in a policy's `Debug`.
pub(crate) struct ApproverName;

impl fmt::Debug for ApproverName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<approver>")
    }
}
