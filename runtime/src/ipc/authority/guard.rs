//! The call guard: a host's say over each call a sandbox makes, after its
//! arguments are bound and before its handler runs. [`CallInfo`] is what
//! the guard sees (the scope, the command, the arguments with secrets
//! redacted, the caller's process), [`Decision`] what it answers.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::lease::ScopeLease;
pub use super::ruling::{ApprovalOutcome, Decision, Ruling};
use crate::ipc::error::ipc_error::IpcError;
use crate::sync::LockUnpoisoned;
use crate::tool::{ParamSchema, ToolSchema, ValueKind};

/// What a secret argument's value is replaced with wherever gangway shows
/// arguments.
pub const REDACTED: &str = "<redacted>";

/// The longest text value a [`CallInfo`] keeps whole; longer ones are cut,
/// with their length noted. Past what an audit record keeps of a string
/// by a whole token, so the record's scrub sees any token it would keep.
const MAX_SHOWN_TEXT: usize = super::limits::ARGUMENT_TEXT + super::limits::MAX_TOKEN_LEN;

/// The largest encoded value decoded to be shown; a larger one (a list, a
/// map) shows as its size, so a huge argument costs no more than its bytes.
const MAX_SHOWN_VALUE: usize = 16 * 1024;

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
    lease: Option<ScopeLease>,
}

impl CallInfo {
    /// A call as a guard would see it, with no caller process: for testing
    /// a guard (or the `policy` feature's rules) without a server.
    /// `args` are keyed by wire name, as [`args`](CallInfo::args) describes;
    /// they are taken as given (nothing is redacted or cut).
    pub fn new(scope: Option<&str>, command: &str, args: Value) -> Self {
        CallInfo {
            scope: scope.map(Arc::from),
            command: command.to_owned(),
            args,
            peer: None,
            lease: None,
        }
    }

    /// The same call, made through a scope whose life is `lease`.
    #[cfg(all(test, feature = "policy"))]
    pub(crate) fn with_lease(mut self, lease: ScopeLease) -> Self {
        self.lease = Some(lease);
        self
    }

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

    /// The arguments the call gives, as a JSON object keyed by their wire
    /// names (arguments left to their defaults are absent); secret ones
    /// (`#[ipc(secret)]`) read `"<redacted>"`, bytes their length
    /// (`"<12 bytes>"`), text over 1,224 bytes is cut, a list or map over
    /// 16 KiB encoded shows its size, and a float that is infinite or NaN
    /// reads [`NOT_FINITE`] (JSON has no such number, and `null` would read
    /// as an argument not given).
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// The calling process, over a Unix socket; `None` over TCP.
    pub fn peer(&self) -> Option<PeerCredentials> {
        self.peer
    }

    /// The life of the scope (or full-access token) the call came
    /// through: what a guard keys what it remembers for "this session"
    /// on, so that it ends when the scope is revoked or expires, or its
    /// server stops. `None` for a call made with [`CallInfo::new`].
    pub fn lease(&self) -> Option<&ScopeLease> {
        self.lease.as_ref()
    }
}

impl fmt::Debug for CallInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallInfo")
            .field("scope", &self.scope)
            .field("command", &self.command)
            .field("args", &self.args)
            .field("peer", &self.peer)
            .field("lease", &self.lease)
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

    /// Decides on one call, naming the rule that decided, which the call's
    /// audit record keeps (`rule`). What the server asks; by default,
    /// [`check`](CallGuard::check)'s decision, with no rule named. A guard
    /// made of rules (a [`Policy`](crate::policy::Policy)) names them.
    fn ruling<'a>(
        &'a self,
        call: &'a CallInfo,
    ) -> Pin<Box<dyn Future<Output = Ruling> + Send + 'a>> {
        Box::pin(async move { Ruling::new(self.check(call).await) })
    }
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
    lease: Option<ScopeLease>,
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
    /// The rule the guard named as deciding.
    pub(crate) rule: Option<String>,
    /// A person's answer, when one decided.
    pub(crate) approval: Option<ApprovalOutcome>,
}

impl Admission {
    pub(crate) fn new(
        scope: Option<Arc<str>>,
        peer: Option<PeerCredentials>,
        lease: Option<ScopeLease>,
        guard: Option<Arc<dyn CallGuard>>,
        wants_args: bool,
    ) -> Self {
        Admission {
            wants_args: wants_args || guard.is_some(),
            scope,
            peer,
            lease,
            guard,
            seen: Mutex::new(Seen::default()),
        }
    }

    /// Whether anything reads the bound arguments (else there is nothing to
    /// decide, and nothing to decode).
    pub(crate) fn wants_args(&self) -> bool {
        self.wants_args
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

    /// Admits a bound call (its `params` applied to a command of this
    /// `schema`): records its arguments and asks the guard. `Err(Denied)`
    /// when the guard refuses.
    pub(crate) async fn admit(
        &self,
        command: &str,
        params: &[u8],
        schema: &ToolSchema,
    ) -> Result<(), IpcError> {
        let info = CallInfo {
            scope: self.scope.clone(),
            command: command.to_owned(),
            args: shown_args(params, schema),
            peer: self.peer,
            lease: self.lease.clone(),
        };
        // Kept before the guard decides: a call cut short while it waits
        // (Ctrl-C, its timeout, a revocation) is recorded with them.
        self.seen.lock_unpoisoned().args = Some(info.args.clone());
        let Ruling {
            decision,
            rule,
            approval,
        } = match &self.guard {
            Some(guard) => guard.ruling(&info).await,
            None => Ruling::new(Decision::Allow),
        };
        {
            let mut seen = self.seen.lock_unpoisoned();
            seen.decision = Some(decision.clone());
            seen.rule = rule;
            seen.approval = approval;
        }
        match decision {
            Decision::Allow => Ok(()),
            Decision::Deny(reason) => Err(IpcError::Denied {
                command: command.to_owned(),
                reason,
            }),
        }
    }
}

/// A call's arguments (its MessagePack `params`) as shown to a guard and
/// written to an audit log: only the schema's parameters, secrets redacted,
/// bytes as their length, long text cut, large values as their size. Each
/// value is looked at where it lies in `params`, so a large one is never
/// copied whole.
pub(crate) fn shown_args(params: &[u8], schema: &ToolSchema) -> Value {
    let wires: Vec<&str> = schema.params.iter().map(|p| &*p.name).collect();
    let names: Vec<(&str, usize)> = schema
        .params
        .iter()
        .enumerate()
        .flat_map(|(index, param)| {
            std::iter::once((&*param.name, index))
                .chain(param.aliases.iter().map(move |alias| (&**alias, index)))
        })
        .collect();
    let mut slots = vec![None; wires.len()];
    let mut shown = serde_json::Map::new();
    if crate::msgpack_args::split_args(params, &names, &wires, &mut slots).is_ok() {
        for (param, slot) in schema.params.iter().zip(slots) {
            if let Some(encoded) = slot {
                shown.insert(param.name.to_string(), shown_value(param, encoded));
            }
        }
    }
    Value::Object(shown)
}

/// Text over [`MAX_SHOWN_TEXT`] bytes, cut at a character boundary with its
/// length noted; in lists and maps too.
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
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(key, value)| (key, cut_long_text(value)))
                .collect(),
        ),
        other => other,
    }
}

/// One encoded argument as shown.
fn shown_value(param: &ParamSchema, encoded: &[u8]) -> Value {
    if param.secret {
        return Value::String(REDACTED.to_owned());
    }
    let mut reader = encoded;
    match encoded.first() {
        // bin 8/16/32: bytes.
        Some(0xc4..=0xc6) => {
            let len = rmp::decode::read_bin_len(&mut reader).unwrap_or(0);
            return Value::String(format!("<{len} bytes>"));
        }
        // fixstr, str 8/16/32: its first `MAX_SHOWN_TEXT` bytes, read in
        // place.
        Some(0xa0..=0xbf | 0xd9..=0xdb) if encoded.len() > MAX_SHOWN_VALUE => {
            let len = rmp::decode::read_str_len(&mut reader).unwrap_or(0) as usize;
            let head = &reader[..MAX_SHOWN_TEXT.min(reader.len())];
            let valid = match std::str::from_utf8(head) {
                Ok(text) => text,
                Err(error) => std::str::from_utf8(&head[..error.valid_up_to()]).unwrap_or(""),
            };
            return Value::String(format!("{valid}… ({len} bytes)"));
        }
        // array 16/32 of a bytes argument: its length.
        Some(0xdc | 0xdd) if param.kind == ValueKind::Bytes => {
            let len = rmp::decode::read_array_len(&mut reader).unwrap_or(0);
            return Value::String(format!("<{len} bytes>"));
        }
        _ if encoded.len() > MAX_SHOWN_VALUE => {
            return Value::String(format!("<a value of {} bytes>", encoded.len()));
        }
        _ => {}
    }
    match rmp_serde::from_slice::<Shown>(encoded) {
        Ok(Shown(Value::Array(items))) if param.kind == ValueKind::Bytes => {
            Value::String(format!("<{} bytes>", items.len()))
        }
        Ok(Shown(value)) => cut_long_text(value),
        Err(_) => Value::String(format!("<{} bytes>", encoded.len())),
    }
}

/// What a guard is shown for a float that is not a finite number (JSON has
/// none): not `null`, which reads as an argument not given.
pub const NOT_FINITE: &str = "<not a finite number>";

/// An argument's value as JSON, as `serde_json::Value` decodes it but for
/// a float that is infinite or NaN, which becomes [`NOT_FINITE`].
struct Shown(Value);

impl<'de> serde::Deserialize<'de> for Shown {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShownVisitor).map(Shown)
    }
}

struct ShownVisitor;

impl<'de> serde::de::Visitor<'de> for ShownVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a MessagePack value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or_else(|| Value::from(NOT_FINITE), Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Value, E> {
        Ok(Value::Array(v.iter().map(|b| Value::from(*b)).collect()))
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ShownVisitor)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(Shown(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = serde_json::Map::new();
        while let Some((Shown(key), Shown(value))) = map.next_entry()? {
            // JSON keys are text. A key of another kind fails the whole
            // value, which is then shown as its size: written out as JSON
            // text, a map keyed by maps doubles in size at each level.
            let Value::String(key) = key else {
                return Err(serde::de::Error::custom("a map key that is not text"));
            };
            fields.insert(key, value);
        }
        Ok(Value::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_arguments_hide_secrets_and_bulk_and_leave_out_the_rest() {
        let mut password = ParamSchema::new("password", ValueKind::String);
        password.secret = true;
        let schema = ToolSchema::new("login")
            .with_param(ParamSchema::new("user", ValueKind::String).alias("account"))
            .with_param(password)
            .with_param(ParamSchema::new("blob", ValueKind::Bytes))
            .with_param(ParamSchema::new("list", ValueKind::Bytes))
            .with_param(ParamSchema::new("note", ValueKind::String))
            .with_param(ParamSchema::new("big", ValueKind::Int).repeatable())
            .with_param(ParamSchema::new("unused", ValueKind::Int))
            .with_param(ParamSchema::new("huge", ValueKind::String))
            .with_param(ParamSchema::new("bulk", ValueKind::Bytes));
        #[derive(serde::Serialize)]
        struct Params {
            account: String,
            password: String,
            blob: serde_bytes::ByteBuf,
            list: Vec<u8>,
            note: String,
            big: Vec<u32>,
            huge: String,
            bulk: Vec<u8>,
        }
        let params = rmp_serde::to_vec_named(&Params {
            account: "ada".into(),
            password: "hunter2-hunter2".into(),
            blob: serde_bytes::ByteBuf::from(vec![1, 2, 3]),
            list: vec![4, 5],
            note: "é".repeat(700),
            big: vec![70_000; 10_000],
            huge: "é".repeat(20_000),
            bulk: vec![7; 20_000],
        })
        .unwrap();
        let shown = shown_args(&params, &schema);
        let text = shown.to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert_eq!(shown["password"], REDACTED);
        assert_eq!(shown["user"], "ada", "an alias shows under the wire name");
        assert!(shown.get("unused").is_none(), "only what the call gives");
        assert_eq!(shown["blob"], "<3 bytes>");
        assert_eq!(shown["list"], "<2 bytes>");
        assert_eq!(shown["big"], "<a value of 50003 bytes>");
        assert_eq!(shown["bulk"], "<20000 bytes>");
        let huge = shown["huge"].as_str().unwrap();
        assert!(
            huge.starts_with("éé") && huge.ends_with("… (40000 bytes)"),
            "{huge}"
        );
        assert!(huge.len() < MAX_SHOWN_TEXT + 30, "{}", huge.len());
        let note = shown["note"].as_str().unwrap();
        assert!(
            note.ends_with("… (1400 bytes)") && note.len() < MAX_SHOWN_TEXT + 30,
            "{note}"
        );
        assert_eq!(shown_args(b"\xc0", &schema), serde_json::json!({}));
        assert_eq!(shown_args(b"not msgpack", &schema), serde_json::json!({}));
    }

    #[test]
    fn a_float_that_is_not_a_finite_number_is_shown_as_such_not_as_null() {
        let schema = ToolSchema::new("pay")
            .with_param(ParamSchema::new("amount", ValueKind::Float))
            .with_param(ParamSchema::new("steps", ValueKind::Float).repeatable())
            .with_param(ParamSchema::new("fee", ValueKind::Float));
        #[derive(serde::Serialize)]
        struct Params {
            amount: f64,
            steps: Vec<f64>,
            fee: f64,
        }
        let params = rmp_serde::to_vec_named(&Params {
            amount: f64::INFINITY,
            steps: vec![1.5, f64::NAN],
            fee: 0.25,
        })
        .unwrap();
        let shown = shown_args(&params, &schema);
        assert_eq!(shown["amount"], NOT_FINITE, "{shown}");
        assert_eq!(
            shown["steps"],
            serde_json::json!([1.5, NOT_FINITE]),
            "{shown}"
        );
        assert_eq!(shown["fee"], 0.25, "{shown}");
    }

    #[test]
    fn a_map_keyed_by_anything_but_text_is_shown_as_its_size() {
        let schema = ToolSchema::new("opts").with_param(ParamSchema::new("opts", ValueKind::Json));
        // `{"opts": {{1: 2}: 3}}`: a map keyed by a map.
        let mut params = vec![0x81, 0xa4];
        params.extend_from_slice(b"opts");
        params.extend_from_slice(&[0x81, 0x81, 0x01, 0x02, 0x03]);
        let shown = shown_args(&params, &schema);
        assert_eq!(shown["opts"], "<5 bytes>", "{shown}");
    }
}
