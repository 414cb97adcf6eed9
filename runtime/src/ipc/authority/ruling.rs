//! What a guard answers for one call: its decision, the rule that made it,
//! and what a person asked said, as the call's audit record keeps them.

/// A guard's answer for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run the call.
    Allow,
    /// Refuse it: the caller exits 77 with `<command>: <reason>` on stderr,
    /// so say what was refused and why in words a person or a model can act
    /// on.
    Deny(String),
}

impl Decision {
    /// A denial with this reason.
    pub fn deny(reason: impl Into<String>) -> Self {
        Decision::Deny(reason.into())
    }

    /// Whether the call may run.
    pub fn is_allow(&self) -> bool {
        matches!(self, Decision::Allow)
    }
}

/// A guard's decision on a call, and the rule that decided it, if the
/// guard goes by named rules ([`CallGuard::ruling`](crate::ipc::CallGuard::ruling)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Ruling {
    /// Whether the call may run.
    pub decision: Decision,
    /// The id of the rule that decided; `None` when no rule did (a guard
    /// without rules, or a policy's default).
    pub rule: Option<String>,
    /// A person's answer, when the guard asked one (or went by one given
    /// earlier for the session); the audit record's `approval`.
    pub approval: Option<ApprovalOutcome>,
}

impl Ruling {
    /// `decision`, decided by no named rule.
    pub fn new(decision: Decision) -> Self {
        Ruling {
            decision,
            rule: None,
            approval: None,
        }
    }

    /// The same decision, made by the rule `rule`.
    #[must_use]
    pub fn by_rule(mut self, rule: impl Into<String>) -> Self {
        self.rule = Some(rule.into());
        self
    }

    /// The same decision, made on a person's answer.
    #[must_use]
    pub fn with_approval(mut self, approval: ApprovalOutcome) -> Self {
        self.approval = Some(approval);
        self
    }
}

/// What a person asked about a call answered (the audit record's
/// `approval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ApprovalOutcome {
    /// Allowed, this once.
    Once,
    /// Allowed for the rest of the scope's session: asked now, or answered
    /// so earlier in the same scope.
    Session,
    /// Allowed from now on, by a rule added to the rules file.
    Always,
    /// Refused.
    Denied,
}

impl ApprovalOutcome {
    /// Its name in an audit record: `once`, `session`, `always`, `denied`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalOutcome::Once => "once",
            ApprovalOutcome::Session => "session",
            ApprovalOutcome::Always => "always",
            ApprovalOutcome::Denied => "denied",
        }
    }
}
