//! Scopes: what one sandbox may call. A [`Scope`] names a sandbox (an
//! agent, a task), the commands it may call and how long it may call them;
//! [`IpcServer::scope`](crate::ipc::IpcServer::scope) turns it into a token
//! of its own, carried by the [`SandboxEnv`](crate::ipc::SandboxEnv) it
//! returns.

use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

/// What one sandbox may call: every command, or only those named, until
/// it expires or is revoked.
///
/// ```
/// use std::time::Duration;
/// use gangway::ipc::Scope;
///
/// let scope = Scope::new("agent-1")
///     .commands(["search", "wc"])
///     .expires_in(Duration::from_secs(3600));
/// assert_eq!(scope.id(), "agent-1");
/// assert!(scope.allows("search") && !scope.allows("rm"));
/// assert!(Scope::new("agent-2").allows("rm"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Scope {
    id: String,
    commands: Option<BTreeSet<String>>,
    expires_in: Option<Duration>,
}

impl Scope {
    /// A scope named `id` that allows every command and does not expire.
    /// The id appears in audit records and in
    /// [`CallInfo`](crate::ipc::CallInfo), and is what
    /// [`IpcServer::revoke`](crate::ipc::IpcServer::revoke) takes.
    pub fn new(id: impl Into<String>) -> Self {
        Scope {
            id: id.into(),
            commands: None,
            expires_in: None,
        }
    }

    /// Allows only these commands (calls of others are denied, exit 77).
    /// Called again, it adds to the list; an empty list allows nothing.
    pub fn commands<I, S>(mut self, commands: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.commands
            .get_or_insert_with(BTreeSet::new)
            .extend(commands.into_iter().map(Into::into));
        self
    }

    /// Ends the scope this long after the server issues it: its token is
    /// refused at the hello, and calls on connections it opened are denied.
    pub fn expires_in(mut self, lifetime: Duration) -> Self {
        self.expires_in = Some(lifetime);
        self
    }

    /// The scope's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The commands allowed, or `None` for every command.
    pub fn allowed_commands(&self) -> Option<impl Iterator<Item = &str>> {
        self.commands
            .as_ref()
            .map(|commands| commands.iter().map(String::as_str))
    }

    /// How long the scope lasts once issued, if it expires.
    pub fn lifetime(&self) -> Option<Duration> {
        self.expires_in
    }

    /// Whether the scope allows calling `command`.
    pub fn allows(&self, command: &str) -> bool {
        self.commands
            .as_ref()
            .is_none_or(|commands| commands.contains(command))
    }

    #[cfg(feature = "ipc")]
    pub(crate) fn into_parts(self) -> (String, Option<BTreeSet<String>>, Option<Duration>) {
        (self.id, self.commands, self.expires_in)
    }
}

/// Why [`IpcServer::try_scope`](crate::ipc::IpcServer::try_scope) could not
/// issue a scope.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScopeError {
    /// The id is empty, over 128 bytes, or holds a character other than
    /// printable ASCII (a space, a control or non-ASCII character, which
    /// could make one id look like another in an audit log).
    InvalidId {
        /// The id as given.
        id: String,
    },
    /// A scope with this id is live (issued, neither expired nor revoked).
    Duplicate {
        /// The id.
        id: String,
    },
    /// The scope names a command the server does not serve.
    UnknownCommand {
        /// The scope's id.
        id: String,
        /// The command named.
        command: String,
        /// The nearest command the server serves, if one is close.
        suggestion: Option<String>,
    },
    /// Random bytes for the token could not be read.
    Token(String),
    /// The scope's socket or token file could not be made.
    Socket {
        /// The scope's id.
        id: String,
        /// Why.
        message: String,
    },
}

impl fmt::Display for ScopeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScopeError::InvalidId { id } => write!(
                f,
                "invalid scope id {id:?}: give 1 to 128 printable ASCII characters, no spaces \
                 (`agent-1`, `task:42`); it names the sandbox in audit records"
            ),
            ScopeError::Duplicate { id } => write!(
                f,
                "a scope `{id}` is already live; revoke it first, or give this one another id"
            ),
            ScopeError::UnknownCommand {
                id,
                command,
                suggestion,
            } => {
                write!(
                    f,
                    "scope `{id}` names `{command}`, which this server does not serve"
                )?;
                match suggestion {
                    Some(suggestion) => write!(f, "; did you mean `{suggestion}`?"),
                    None => Ok(()),
                }
            }
            ScopeError::Token(message) => {
                write!(f, "cannot make a token for the scope: {message}")
            }
            ScopeError::Socket { id, message } => {
                write!(f, "cannot make the socket of scope `{id}`: {message}")
            }
        }
    }
}

impl std::error::Error for ScopeError {}

/// Whether `id` may name a scope.
#[cfg(feature = "ipc")]
pub(crate) fn is_valid_id(id: &str) -> bool {
    (1..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_graphic())
}
