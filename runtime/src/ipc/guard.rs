//! The call guard: a host's say over each call a sandbox makes, after its
//! arguments are bound and before its handler runs. [`CallInfo`] is what
//! the guard sees (the scope, the command, the arguments with secrets
//! redacted, the caller's process), [`Decision`] what it answers.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;

use super::command::IpcCommand;
use super::error::IpcError;
use crate::sync::LockUnpoisoned;
use crate::tool::{ToolSchema, ValueKind};

/// What a secret argument's value is replaced with wherever gangway shows
/// arguments.
pub const REDACTED: &str = "<redacted>";

/// The longest text value a [`CallInfo`] (and so an audit record) keeps
/// whole; longer ones are cut, with their length noted.
const MAX_SHOWN_TEXT: usize = 1024;

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

/// The credentials of the process at the other end of a Unix socket, as
/// the kernel reports them (`SO_PEERCRED`): the calling client, not the
/// sandbox's first process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PeerCredentials {
    /// The process id, as seen from the host's PID namespace (absent when
    /// the kernel cannot say).
    pub pid: Option<i32>,
    /// The user id.
    pub uid: u32,
    /// The group id.
    pub gid: u32,
}

impl PeerCredentials {
    /// Credentials with these values (for tests and custom transports).
    pub fn new(pid: Option<i32>, uid: u32, gid: u32) -> Self {
        PeerCredentials { pid, uid, gid }
    }
}

/// One call, as a [`CallGuard`] sees it (and as its audit record shows it).
#[derive(Clone, PartialEq)]
pub struct CallInfo {
    scope: Option<Arc<str>>,
    command: String,
    args: Value,
    peer: Option<PeerCredentials>,
}

impl CallInfo {
    /// The scope of the caller's token
    /// ([`Scope::id`](crate::ipc::Scope::id)); `None` for the server's
    /// full-access token ([`IpcServer::sandbox_env`](crate::ipc::IpcServer::sandbox_env)).
    pub fn scope(&self) -> Option<&str> {
        self.scope.as_deref()
    }

    /// The command called.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The bound arguments as a JSON object, keyed by their wire names, every
    /// argument present with its value or default; secret arguments
    /// (`#[ipc(secret)]`) read `"<redacted>"`, byte arguments their length
    /// (`"<12 bytes>"`), and text over 1 KiB is cut.
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// The calling process, over a Unix socket; `None` over TCP.
    pub fn peer(&self) -> Option<PeerCredentials> {
        self.peer
    }
}

impl fmt::Debug for CallInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallInfo")
            .field("scope", &self.scope)
            .field("command", &self.command)
            .field("args", &self.args)
            .field("peer", &self.peer)
            .finish()
    }
}

/// Decides, call by call, whether a sandbox's call may run
/// ([`IpcServerBuilder::guard`](crate::ipc::IpcServerBuilder::guard)).
///
/// It runs after the arguments are bound (a call with a usage error never
/// reaches it) and before the handler, and may wait as long as it needs
/// (ask a person, or an agent's client): the call's timeout covers the
/// wait, and a caller's Ctrl-C ends it (the guard's future is dropped and
/// the caller exits 130).
///
/// Any `Fn(&CallInfo) -> impl Future<Output = Decision>` is a guard. Its
/// future may not borrow the `CallInfo`: clone what it needs first (or
/// implement the trait on a type of your own, whose future may borrow).
///
/// ```
/// use gangway::ipc::{CallInfo, Decision};
///
/// let guard = |call: &CallInfo| {
///     let command = call.command().to_owned();
///     async move {
///         if command == "rm" {
///             Decision::deny("rm needs a person's approval; ask the user")
///         } else {
///             Decision::Allow
///         }
///     }
/// };
/// # fn takes<G: gangway::ipc::CallGuard>(_: G) {}
/// # takes(guard);
/// ```
pub trait CallGuard: Send + Sync + 'static {
    /// Decides on one call.
    fn check<'a>(
        &'a self,
        call: &'a CallInfo,
    ) -> Pin<Box<dyn Future<Output = Decision> + Send + 'a>>;
}

impl<F, Fut> CallGuard for F
where
    F: Fn(&CallInfo) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Decision> + Send + 'static,
{
    fn check<'a>(
        &'a self,
        call: &'a CallInfo,
    ) -> Pin<Box<dyn Future<Output = Decision> + Send + 'a>> {
        Box::pin(self(call))
    }
}

/// What the server knows of one call before its handler runs: who calls
/// (scope and process), and, once bound, the arguments and the guard's
/// decision, kept for the call's audit record.
pub(crate) struct Admission {
    scope: Option<Arc<str>>,
    peer: Option<PeerCredentials>,
    guard: Option<Arc<dyn CallGuard>>,
    /// Whether anything reads the bound arguments (a guard, an audit log).
    wants_args: bool,
    seen: Mutex<Seen>,
}

/// What a call's admission saw.
#[derive(Debug, Default, Clone)]
pub(crate) struct Seen {
    pub(crate) args: Option<Value>,
    pub(crate) decision: Option<Decision>,
}

impl Admission {
    pub(crate) fn new(
        scope: Option<Arc<str>>,
        peer: Option<PeerCredentials>,
        guard: Option<Arc<dyn CallGuard>>,
        wants_args: bool,
    ) -> Self {
        Admission {
            wants_args: wants_args || guard.is_some(),
            scope,
            peer,
            guard,
            seen: Mutex::new(Seen::default()),
        }
    }

    /// The caller's scope.
    pub(crate) fn scope(&self) -> Option<&str> {
        self.scope.as_deref()
    }

    /// The calling process.
    pub(crate) fn peer(&self) -> Option<PeerCredentials> {
        self.peer
    }

    /// What was seen so far.
    pub(crate) fn seen(&self) -> Seen {
        self.seen.lock_unpoisoned().clone()
    }

    /// Records a decision made before binding (a command outside the
    /// scope).
    pub(crate) fn decided(&self, decision: Decision) {
        self.seen.lock_unpoisoned().decision = Some(decision);
    }

    /// Admits a bound call: records its arguments and asks the guard.
    /// `Err(Denied)` when the guard refuses.
    pub(crate) async fn admit<C: IpcCommand>(
        &self,
        command: &str,
        bound: &C,
    ) -> Result<(), IpcError> {
        if !self.wants_args {
            self.decided(Decision::Allow);
            return Ok(());
        }
        let info = CallInfo {
            scope: self.scope.clone(),
            command: command.to_owned(),
            args: shown_args(bound, &bound.schema()),
            peer: self.peer,
        };
        let decision = match &self.guard {
            Some(guard) => guard.check(&info).await,
            None => Decision::Allow,
        };
        let mut seen = self.seen.lock_unpoisoned();
        seen.args = Some(info.args);
        seen.decision = Some(decision.clone());
        match decision {
            Decision::Allow => Ok(()),
            Decision::Deny(reason) => Err(IpcError::Denied {
                command: command.to_owned(),
                reason,
            }),
        }
    }
}

/// A bound command's arguments as shown to a guard and written to an
/// audit log: only the schema's parameters (not host state), secrets
/// redacted, bytes as their length, long text cut.
pub(crate) fn shown_args<C: Serialize>(bound: &C, schema: &ToolSchema) -> Value {
    let Ok(Value::Object(all)) = serde_json::to_value(bound) else {
        return Value::Object(serde_json::Map::new());
    };
    let mut shown = serde_json::Map::new();
    for param in schema.params.iter() {
        let Some(value) = all.get(&*param.name) else {
            continue;
        };
        let value = if param.secret {
            Value::String(REDACTED.to_owned())
        } else if param.kind == ValueKind::Bytes && value.is_array() {
            let len = value.as_array().map_or(0, Vec::len);
            Value::String(format!("<{len} bytes>"))
        } else {
            cut_long_text(value.clone())
        };
        shown.insert(param.name.to_string(), value);
    }
    Value::Object(shown)
}

/// Text over [`MAX_SHOWN_TEXT`] bytes, cut at a character boundary with its
/// length noted; in lists too.
fn cut_long_text(value: Value) -> Value {
    match value {
        Value::String(text) if text.len() > MAX_SHOWN_TEXT => {
            let mut end = MAX_SHOWN_TEXT;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            Value::String(format!("{}… ({} bytes)", &text[..end], text.len()))
        }
        Value::Array(items) => Value::Array(items.into_iter().map(cut_long_text).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ParamSchema;

    #[derive(Serialize)]
    struct Login {
        user: String,
        password: String,
        state: u32,
        blob: serde_bytes::ByteBuf,
        note: String,
    }

    #[test]
    fn shown_arguments_hide_secrets_state_and_bulk() {
        let mut password = ParamSchema::new("password", ValueKind::String);
        password.secret = true;
        let schema = ToolSchema::new("login")
            .with_param(ParamSchema::new("user", ValueKind::String))
            .with_param(password)
            .with_param(ParamSchema::new("blob", ValueKind::Bytes))
            .with_param(ParamSchema::new("note", ValueKind::String));
        let login = Login {
            user: "ada".into(),
            password: "hunter2-hunter2".into(),
            state: 7,
            blob: serde_bytes::ByteBuf::from(vec![1, 2, 3]),
            note: "é".repeat(600),
        };
        let shown = shown_args(&login, &schema);
        let text = shown.to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert_eq!(shown["password"], REDACTED);
        assert_eq!(shown["user"], "ada");
        assert!(
            shown.get("state").is_none(),
            "host state is not an argument"
        );
        assert_eq!(shown["blob"], "<3 bytes>");
        let note = shown["note"].as_str().unwrap();
        assert!(
            note.ends_with("… (1200 bytes)") && note.len() < 1100,
            "{note}"
        );
    }
}
