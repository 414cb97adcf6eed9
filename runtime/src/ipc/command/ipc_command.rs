//! The `IpcCommand` trait: a typed command a sandboxed process calls on the
//! host, with the handler that serves it.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::tool::{ParamSchema, ToolSchema, ValueKind};

/// A typed command that sandboxed processes call on the host, together with
/// its handler.
///
/// The struct holds the request's arguments (and any host state the handler
/// needs); [`handle`](IpcCommand::handle) serves one call. The router keeps
/// one registered value as a prototype and, for each call, clones it, applies
/// the request's arguments with [`apply_args`](IpcCommand::apply_args), and
/// runs the handler on the clone.
///
/// Most commands derive this trait; see [`derive@crate::IpcCommand`]. A
/// hand-written impl needs only `name`, `handle` and `apply_args`:
///
/// ```
/// use std::borrow::Cow;
/// use serde::{Deserialize, Serialize};
/// use gangway::ipc::IpcCommand;
///
/// #[derive(Clone, Serialize, Deserialize)]
/// struct SearchCommand {
///     query: String,
/// }
///
/// #[derive(Serialize, Deserialize)]
/// struct SearchResult {
///     items: Vec<String>,
/// }
///
/// impl IpcCommand for SearchCommand {
///     type Response = SearchResult;
///
///     fn name(&self) -> String {
///         "search".to_string()
///     }
///
///     fn positional_args(&self) -> Cow<'static, [Cow<'static, str>]> {
///         // `search "rust"` is `search --query "rust"`.
///         Cow::Borrowed(&[Cow::Borrowed("query")])
///     }
///
///     fn apply_args(&mut self, params: &[u8]) -> Result<(), rmp_serde::decode::Error> {
///         *self = rmp_serde::from_slice(params)?;
///         Ok(())
///     }
///
///     async fn handle(&mut self) -> SearchResult {
///         SearchResult { items: vec![format!("result for {}", self.query)] }
///     }
/// }
/// ```
///
/// # Reporting failure
///
/// A handler reports failure by returning an error *value*; the router then
/// sends a failure on the wire (the `gangway call` client exits 1 and prints
/// the message), not a successful response. With the derive, make the
/// response a `Result<T, E>` whose `E` implements `Display` — for example
/// [`CommandResult<T>`](crate::ipc::CommandResult), whose [`CommandError`]
/// converts from any `std::error::Error` with `?`. A success then carries
/// just `T`. A hand-written impl overrides
/// [`encode_reply`](IpcCommand::encode_reply) and
/// [`decode_reply`](IpcCommand::decode_reply) instead.
///
/// A handler that panics fails only its own call: the router reports
/// [`IpcError::Panicked`](crate::ipc::IpcError::Panicked) and keeps serving.
pub trait IpcCommand: Serialize + Send + 'static {
    /// What the handler returns.
    type Response: Serialize + DeserializeOwned + Send;

    /// The command name for wire-protocol dispatch: requests naming this
    /// method are routed to this command.
    fn name(&self) -> String;

    /// Handles one call and produces the response.
    ///
    /// The handler has mutable access to the command (its arguments and any
    /// host state it carries).
    fn handle(&mut self) -> impl Future<Output = Self::Response> + Send;

    /// Applies a request's arguments (MessagePack-encoded params) to this
    /// command.
    ///
    /// The router calls this on a clone of the registered command, so
    /// stateful fields (registries, connections, ...) must be preserved.
    ///
    /// # Errors
    ///
    /// Returns an error if the params cannot be applied: malformed data, an
    /// unknown argument, a missing required one, or a value of the wrong type.
    fn apply_args(&mut self, params: &[u8]) -> Result<(), rmp_serde::decode::Error>;

    /// The argument names that positional words fill, in order.
    ///
    /// `["query"]` makes `command "foo"` mean `command --query "foo"`;
    /// `["subagent", "prompt"]` makes `command research "task"` mean
    /// `command --subagent research --prompt "task"`. Empty by default.
    fn positional_args(&self) -> Cow<'static, [Cow<'static, str>]> {
        Cow::Borrowed(&[])
    }

    /// The argument that piped standard input fills.
    ///
    /// When set, `cat file | command "prompt"` passes the bytes of `file` as
    /// this argument. `None` by default: standard input is ignored.
    fn stdin_arg(&self) -> Option<Cow<'static, str>> {
        None
    }

    /// Receives the method name a call was routed by, after
    /// [`apply_args`](IpcCommand::apply_args) and before
    /// [`handle`](IpcCommand::handle).
    ///
    /// Override this when one command serves several names and needs to know
    /// which one was called. Does nothing by default.
    fn set_method_name(&mut self, _name: &str) {}

    /// Receives the call's [`CallContext`](crate::ipc::CallContext) (whether
    /// and why it was cancelled), after
    /// [`set_method_name`](IpcCommand::set_method_name) and before
    /// [`handle`](IpcCommand::handle). The derive implements it for a field
    /// marked `#[ipc(context)]`; a hand-written impl may instead call
    /// [`CallContext::current`](crate::ipc::CallContext::current) in its
    /// handler. Does nothing by default.
    fn set_context(&mut self, _context: crate::ipc::CallContext) {}

    /// How long a call may run before it is cancelled and the caller exits
    /// 124 (`#[ipc(timeout = "30s")]`); `None` (the default) leaves it to the
    /// server's call timeout.
    const TIMEOUT: Option<std::time::Duration> = None;

    /// Whether the stdin argument is an [`InputStream`](crate::ipc::InputStream)
    /// (set by the derive): a served call then starts without waiting for
    /// the input, and the command takes the live stream from
    /// [`CallContext::take_input`](crate::ipc::CallContext::take_input) in
    /// [`set_context`](IpcCommand::set_context). `false` by default: piped
    /// input is read whole and sent with the call.
    const STREAMS_STDIN: bool = false;

    /// The command's schema, known at compile time (set by the derive).
    const SCHEMA: Option<&'static ToolSchema> = None;

    /// The JSON Schema of what a successful call answers (a `Result`'s
    /// success), as its generator writes it: the derive's, with
    /// `#[ipc(output_schema)]`, from the response type's
    /// `schemars::JsonSchema`. `None` (the default) for no output schema.
    ///
    /// The router makes it the command's
    /// [`OutputSchema`](crate::tool::OutputSchema) when the command is
    /// registered (an object root, inlined, no null unions), so MCP clients
    /// get it as the tool's `outputSchema`.
    fn response_json_schema() -> Option<serde_json::Value> {
        None
    }

    /// A successful answer's JSON (`payload`, as
    /// [`encode_reply`](IpcCommand::encode_reply) wrote it), as
    /// `serde_json` writes the success value: what an MCP client's
    /// `structuredContent` holds, so that it matches the output schema even
    /// for types whose serde form differs in a binary format (an `IpAddr`
    /// is its text, a unit struct `null`). The derive's, with
    /// `#[ipc(output_schema)]`; `None` (the default) without an output
    /// schema. An error says why the answer has no JSON form (a 128-bit
    /// integer past `u64`, say).
    fn reply_json(payload: &[u8]) -> Option<Result<serde_json::Value, String>> {
        let _ = payload;
        None
    }

    /// The command's schema under its current [`name`](IpcCommand::name).
    ///
    /// The derive's compile-time [`SCHEMA`](IpcCommand::SCHEMA) when there is
    /// one; otherwise a minimal schema built from
    /// [`positional_args`](IpcCommand::positional_args) and
    /// [`stdin_arg`](IpcCommand::stdin_arg), typing positionals as strings
    /// and stdin as bytes.
    fn schema(&self) -> Cow<'static, ToolSchema> {
        let name = self.name();
        if let Some(schema) = Self::SCHEMA {
            return if schema.name == name {
                Cow::Borrowed(schema)
            } else {
                Cow::Owned(schema.renamed(name))
            };
        }
        let mut schema = ToolSchema::new(name);
        for (index, positional) in self.positional_args().iter().enumerate() {
            let index = u16::try_from(index).unwrap_or(u16::MAX);
            schema = schema.with_param(
                ParamSchema::new(positional.clone(), ValueKind::String)
                    .positional(index)
                    .required(),
            );
        }
        if let Some(stdin) = self.stdin_arg() {
            schema = schema.with_param(ParamSchema::new(stdin, ValueKind::Bytes).stdin());
        }
        Cow::Owned(schema)
    }

    /// Puts a response on the wire: a success with its payload, or a
    /// failure with a message.
    ///
    /// By default every response is a success whose payload is the whole
    /// response. The derive, for a `Result<T, E>` response, sends `Ok(t)` as a
    /// success whose payload is `t`, and `Err(e)` as a failure whose message
    /// is `e`'s `Display` text and whose data is `e` itself.
    ///
    /// # Errors
    ///
    /// The encoder's error, when the response cannot be serialized.
    fn encode_reply(response: &Self::Response) -> Result<Reply, rmp_serde::encode::Error> {
        Ok(Reply::Success(rmp_serde::to_vec_named(response)?))
    }

    /// Rebuilds a response from what [`encode_reply`](IpcCommand::encode_reply)
    /// put on the wire, for a typed client.
    ///
    /// # Errors
    ///
    /// The decoder's error, when the payload is not a response of this type.
    fn decode_reply(reply: &Reply) -> Result<Self::Response, rmp_serde::decode::Error> {
        match reply {
            Reply::Success(payload) => rmp_serde::from_slice(payload),
            Reply::Failure { data, .. } => rmp_serde::from_slice(data),
        }
    }
}

/// A response as it travels on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reply {
    /// The call succeeded; the MessagePack-encoded payload.
    Success(Vec<u8>),
    /// The handler reported failure.
    Failure {
        /// What went wrong, for a person.
        message: String,
        /// The MessagePack-encoded error value, for a typed client.
        data: Vec<u8>,
    },
}

/// An error a handler reports, carrying only its message.
///
/// Converts from any [`std::error::Error`] with `?`, so a handler can return
/// [`CommandResult<T>`] and use `?` freely. It deliberately does not
/// implement `std::error::Error` itself (as `anyhow::Error` does not), which
/// is what lets that conversion exist.
///
/// ```
/// use gangway::ipc::{CommandError, CommandResult};
///
/// fn parse(text: &str) -> CommandResult<u32> {
///     let n: u32 = text.parse()?;
///     if n == 0 {
///         return Err(CommandError::new("the count must be at least 1"));
///     }
///     Ok(n)
/// }
///
/// assert_eq!(parse("3").unwrap(), 3);
/// assert_eq!(parse("x").unwrap_err().to_string(), "invalid digit found in string");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct CommandError {
    message: String,
}

/// A handler's result: the value, or the failure it reports.
pub type CommandResult<T> = Result<T, CommandError>;

impl CommandError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        CommandError {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl<E: std::error::Error> From<E> for CommandError {
    fn from(error: E) -> Self {
        CommandError::new(error.to_string())
    }
}
