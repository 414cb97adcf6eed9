//! The router: commands registered by name, and dispatch of a call to one.

use std::any::Any;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::ipc_command::{IpcCommand, Reply};
use crate::ipc::error::ipc_error::{IpcError, RegisterError};
use crate::tool::{Manifest, ToolSchema, closest, is_valid_command_name};

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Routes calls to registered commands by name.
///
/// Each registered command is kept as a prototype. A call clones it, applies
/// the request's arguments, tells it the method name, runs its handler and
/// encodes the response as MessagePack. The router is `Send + Sync`; any
/// number of calls may run at once, and a panicking handler fails only its
/// own call.
///
/// ```
/// use gangway::IpcCommand;
/// use gangway::ipc::IpcRouter;
/// use serde::Serialize;
///
/// /// Say hello.
/// #[derive(Clone, Serialize, IpcCommand)]
/// #[ipc(response = String)]
/// struct Greet {
///     /// Who to greet.
///     #[ipc(positional)]
///     name: String,
/// }
///
/// impl Greet {
///     async fn handle(&mut self) -> String {
///         format!("hello, {}", self.name)
///     }
/// }
///
/// # tokio_test_block_on(async {
/// let router = IpcRouter::new().register(Greet { name: String::new() });
/// let params = rmp_serde::to_vec_named(&Greet { name: "sandbox".into() }).unwrap();
/// let reply = router.dispatch("greet", &params).await.unwrap();
/// assert_eq!(rmp_serde::from_slice::<String>(&reply).unwrap(), "hello, sandbox");
/// # });
/// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Clone, Default)]
pub struct IpcRouter {
    commands: BTreeMap<String, Entry>,
}

#[derive(Clone)]
struct Entry {
    handler: Arc<dyn ErasedHandler>,
    info: CommandInfo,
    /// The command's [`IpcCommand::reply_json`] (for the socket's and
    /// MCP's JSON calls).
    #[cfg(feature = "ipc")]
    reply_json: ReplyJson,
}

/// An answer's JSON form, from its payload.
#[cfg(feature = "ipc")]
type ReplyJson = fn(&[u8]) -> Option<Result<serde_json::Value, String>>;

/// What the router knows about one registered command.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CommandInfo {
    /// The name calls use.
    pub name: String,
    /// The arguments positional words fill, in order.
    pub positional_args: Vec<String>,
    /// The argument piped standard input fills.
    pub stdin_arg: Option<String>,
    /// Everything the command accepts.
    pub schema: ToolSchema,
    /// How long a call may run (`#[ipc(timeout = "...")]`); `None` leaves it
    /// to the server's call timeout.
    pub timeout: Option<std::time::Duration>,
    /// Whether the stdin argument is an [`InputStream`](crate::ipc::InputStream)
    /// that takes piped input as it arrives.
    pub streams_stdin: bool,
}

impl std::fmt::Debug for IpcRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IpcRouter")
            .field("commands", &self.commands.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl IpcRouter {
    /// A router with no commands.
    pub fn new() -> Self {
        IpcRouter::default()
    }

    /// Registers a command under its [`name`](IpcCommand::name).
    ///
    /// # Panics
    ///
    /// Panics, with a message naming the problem, when the name is taken or
    /// invalid, or the response type's output schema cannot be made (it
    /// contains itself). Use [`try_register`](IpcRouter::try_register) to handle that.
    #[track_caller]
    pub fn register<C>(mut self, command: C) -> Self
    where
        C: IpcCommand + Clone + Sync,
    {
        if let Err(error) = self.insert(command) {
            panic!("IpcRouter::register: {error}");
        }
        self
    }

    /// Registers a command under its [`name`](IpcCommand::name), or says why
    /// it cannot be and hands the router back unchanged.
    ///
    /// # Errors
    ///
    /// A [`TryRegisterError`] holding the reason ([`RegisterError`]) and the
    /// router.
    pub fn try_register<C>(mut self, command: C) -> Result<Self, TryRegisterError>
    where
        C: IpcCommand + Clone + Sync,
    {
        match self.insert(command) {
            Ok(()) => Ok(self),
            Err(reason) => Err(TryRegisterError {
                reason,
                router: self,
            }),
        }
    }

    /// Registers a command in place: for hosts that add commands one at a
    /// time and carry on past a refused one.
    ///
    /// # Errors
    ///
    /// [`RegisterError::Duplicate`] when the name is taken,
    /// [`RegisterError::InvalidName`] when it is not
    /// `[A-Za-z][A-Za-z0-9_-]*`, [`RegisterError::OutputSchema`] when the
    /// response type of an `#[ipc(output_schema)]` command contains itself
    /// (its schema cannot be inlined). The router is unchanged then.
    pub fn insert<C>(&mut self, command: C) -> Result<(), RegisterError>
    where
        C: IpcCommand + Clone + Sync,
    {
        let name = command.name();
        if !is_valid_command_name(&name) {
            return Err(RegisterError::InvalidName { name });
        }
        if self.commands.contains_key(&name) {
            return Err(RegisterError::Duplicate { name });
        }
        let info = CommandInfo {
            name: name.clone(),
            positional_args: command
                .positional_args()
                .iter()
                .map(|p| p.clone().into_owned())
                .collect(),
            stdin_arg: command.stdin_arg().map(Cow::into_owned),
            schema: with_output_schema(command.schema().into_owned(), C::response_json_schema())
                .map_err(|error| RegisterError::OutputSchema {
                    name: name.clone(),
                    reason: error.to_string(),
                })?,
            timeout: C::TIMEOUT,
            streams_stdin: C::STREAMS_STDIN,
        };
        let handler: Arc<dyn ErasedHandler> = Arc::new(Prototype(command));
        self.commands.insert(
            name,
            Entry {
                handler,
                info,
                #[cfg(feature = "ipc")]
                reply_json: C::reply_json,
            },
        );
        Ok(())
    }

    /// Calls a command: clones its prototype, applies `params` (a
    /// MessagePack map of arguments), sets the method name, runs the handler
    /// and returns the MessagePack-encoded response.
    ///
    /// # Errors
    ///
    /// [`IpcError::UnknownMethod`] (with the nearest registered name),
    /// [`IpcError::InvalidParams`], [`IpcError::Handler`] when the handler
    /// reports failure, [`IpcError::Panicked`], [`IpcError::Encode`].
    pub async fn dispatch(&self, method: &str, params: &[u8]) -> Result<Vec<u8>, IpcError> {
        let Some(entry) = self.commands.get(method) else {
            return Err(self.unknown_method(method));
        };
        match CatchUnwind(entry.handler.call(method, params)).await {
            Ok(result) => result,
            Err(panic) => Err(IpcError::Panicked {
                method: method.to_owned(),
                message: panic_message(&*panic),
            }),
        }
    }

    /// Whether a command is registered under this name.
    pub fn contains(&self, method: &str) -> bool {
        self.commands.contains_key(method)
    }

    /// Every registered command, sorted by name.
    pub fn commands(&self) -> impl ExactSizeIterator<Item = &CommandInfo> {
        self.commands.values().map(|e| &e.info)
    }

    /// The command registered under this name.
    pub fn command(&self, method: &str) -> Option<&CommandInfo> {
        self.commands.get(method).map(|e| &e.info)
    }

    /// Every command's schema, as the code generators read it.
    pub fn manifest(&self) -> Manifest {
        Manifest::new(self.commands().map(|c| c.schema.clone()).collect())
    }

    /// A successful answer of `method` as an agent reads it: for a command
    /// with an output schema, the JSON `serde_json` writes of its success
    /// value (what matches the schema), encoded as MessagePack; otherwise,
    /// or when the answer has no JSON form, `reply` as it is.
    #[cfg(feature = "ipc")]
    pub(crate) fn structured_reply(&self, method: &str, reply: Vec<u8>) -> Vec<u8> {
        let Some(entry) = self.commands.get(method) else {
            return reply;
        };
        if entry.info.schema.output_schema.is_none() {
            return reply;
        }
        match (entry.reply_json)(&reply) {
            Some(Ok(json)) => rmp_serde::to_vec(&json).unwrap_or(reply),
            _ => reply,
        }
    }

    /// The error for calling `method`, which is no command here: a name
    /// that cannot be a command's is refused as such (cut short, with no
    /// search for a near one).
    pub(crate) fn unknown_method(&self, method: &str) -> IpcError {
        unknown_command(method, self.commands.keys().map(String::as_str))
    }
}

/// The error for calling `method`, which is none of `commands`: a name that
/// cannot be a command's is refused as such (cut short, with no search for
/// a near one); otherwise the closest command, if one is close.
pub(crate) fn unknown_command<'a>(
    method: &str,
    commands: impl IntoIterator<Item = &'a str>,
) -> IpcError {
    if !crate::tool::is_valid_command_name(method) {
        return IpcError::invalid_name(method);
    }
    IpcError::UnknownMethod {
        method: method.to_owned(),
        suggestion: closest(method, commands).map(str::to_owned),
    }
}

/// `schema` with the output schema made from `generated`, the response's
/// generated JSON Schema, if there is one.
fn with_output_schema(
    schema: ToolSchema,
    generated: Option<serde_json::Value>,
) -> Result<ToolSchema, crate::tool::OutputSchemaError> {
    match generated {
        Some(generated) => {
            Ok(schema.with_output_schema(crate::tool::OutputSchema::from_json_schema(&generated)?))
        }
        None => Ok(schema),
    }
}

/// A registered command with its type erased.
trait ErasedHandler: Send + Sync {
    fn call<'a>(
        &'a self,
        method: &'a str,
        params: &'a [u8],
    ) -> BoxFuture<'a, Result<Vec<u8>, IpcError>>;
}

struct Prototype<C>(C);

impl<C> ErasedHandler for Prototype<C>
where
    C: IpcCommand + Clone + Sync,
{
    fn call<'a>(
        &'a self,
        method: &'a str,
        params: &'a [u8],
    ) -> BoxFuture<'a, Result<Vec<u8>, IpcError>> {
        Box::pin(async move {
            let mut command = self.0.clone();
            command
                .apply_args(params)
                .map_err(|error| IpcError::InvalidParams {
                    method: method.to_owned(),
                    message: error.to_string(),
                })?;
            let context = crate::ipc::CallContext::current();
            // The guard sees the bound arguments, before anything runs.
            context.admit(method, params, || command.schema()).await?;
            command.set_method_name(method);
            command.set_context(context);
            let response = command.handle().await;
            match C::encode_reply(&response) {
                Ok(Reply::Success(payload)) => Ok(payload),
                Ok(Reply::Failure { message, data }) => Err(IpcError::Handler {
                    method: method.to_owned(),
                    message,
                    data,
                }),
                Err(error) => Err(IpcError::Encode {
                    method: method.to_owned(),
                    message: error.to_string(),
                }),
            }
        })
    }
}

/// Polls a future, turning a panic in it into an `Err` with the payload.
struct CatchUnwind<F>(F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(a panic payload that is not text)".to_owned()
    }
}

/// Why [`IpcRouter::try_register`] refused a command, with the router
/// handed back unchanged.
#[derive(Debug)]
pub struct TryRegisterError {
    /// Why the command was refused.
    pub reason: RegisterError,
    /// The router, as it was before the call.
    pub router: IpcRouter,
}

impl fmt::Display for TryRegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.reason.fmt(f)
    }
}

impl std::error::Error for TryRegisterError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.reason)
    }
}
