//! Commands that sandboxed processes call on the host: the [`IpcCommand`]
//! trait, the [`IpcRouter`] that dispatches calls to them, the
//! [`IpcServer`] that serves a router on a socket (with its authority
//! model: [`Scope`]s bound to tokens, a [`CallGuard`], an [`AuditSink`]),
//! the clients ([`IpcClient`], [`AsyncIpcClient`]), and the errors a call
//! can end in. The [`SandboxEnv`] a child needs to reach the server lives in
//! [`sandbox`](crate::sandbox) and is re-exported here.
//!
//! ```
//! use gangway::IpcCommand;
//! use gangway::ipc::{CommandResult, CommandError, IpcError, IpcRouter};
//! use serde::Serialize;
//!
//! /// Divide two numbers.
//! #[derive(Clone, Serialize, IpcCommand)]
//! #[ipc(response = CommandResult<f64>)]
//! struct Divide {
//!     #[ipc(positional)]
//!     a: f64,
//!     #[ipc(positional)]
//!     b: f64,
//! }
//!
//! impl Divide {
//!     async fn handle(&mut self) -> CommandResult<f64> {
//!         if self.b == 0.0 {
//!             return Err(CommandError::new("cannot divide by zero"));
//!         }
//!         Ok(self.a / self.b)
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let router = IpcRouter::new().register(Divide { a: 0.0, b: 0.0 });
//! let params = rmp_serde::to_vec_named(&Divide { a: 1.0, b: 0.0 }).unwrap();
//! let error = router.dispatch("divide", &params).await.unwrap_err();
//! assert!(matches!(error, IpcError::Handler { .. }));
//! assert_eq!(error.to_string(), "divide: cannot divide by zero");
//! # });
//! ```

// The folders, each one concern (see their module docs): `command`, what
// a command is and in-process dispatch (always built); `call`, the
// handler's view of one call; `authority`, scopes, the guard and the
// audit log; `protocol`, the wire; `server` and `client`, the two ends of
// a socket. What a sandboxed child needs to reach the host (`SandboxEnv`,
// `Bwrap`) is `crate::sandbox`, re-exported here under its old paths.
//
// The socket side (endpoint, server, clients, wire protocol) is the `ipc`
// feature; the std-only part a client needs (blocking client, endpoint,
// wire protocol without its async halves) is also built by `client`, which
// brings no tokio.
//
// Each file imports what it needs from the file that defines it, never
// through this one, and no two files import each other
// (`scripts/check-layout` checks it).
pub(crate) mod authority;
pub(crate) mod call;
#[cfg(any(feature = "ipc", feature = "client"))]
mod client;
pub(crate) mod command;
#[cfg(any(feature = "ipc", feature = "client"))]
pub(crate) mod endpoint;
pub(crate) mod error;
pub use crate::exit;
#[cfg(any(feature = "ipc", feature = "client"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "ipc", feature = "client"))))]
pub mod protocol;
#[cfg(feature = "ipc")]
mod server;

#[cfg(feature = "ipc")]
#[cfg_attr(docsrs, doc(cfg(feature = "ipc")))]
pub use authority::audit::{AuditLog, AuditOutcome, AuditRecord, AuditSink};
#[cfg(feature = "mcp")]
pub(crate) use authority::guard::Admission;
#[cfg(feature = "ipc")]
#[cfg_attr(docsrs, doc(cfg(feature = "ipc")))]
pub use authority::guard::{
    ApprovalOutcome, CallGuard, CallInfo, Decision, NOT_FINITE, PeerCredentials, REDACTED, Ruling,
};
#[cfg(feature = "ipc")]
#[cfg_attr(docsrs, doc(cfg(feature = "ipc")))]
pub use authority::lease::ScopeLease;
pub use authority::scope::{Scope, ScopeError};
#[cfg(feature = "mcp")]
pub(crate) use authority::scrub::KnownSecrets;
pub use call::cancel::{CallEnded, CancelReason};
pub use call::context::{CallContext, Cancelled};
pub use call::input::InputStream;
#[cfg(feature = "ipc")]
#[cfg_attr(docsrs, doc(cfg(feature = "ipc")))]
pub use client::{AsyncIpcClient, CallStream};
#[cfg(any(feature = "ipc", feature = "client"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "ipc", feature = "client"))))]
pub use client::{CallCanceller, CallEvent, ClientError, IpcClient, RemoteError};
pub use command::argv::{ArgvOutcome, ArgvPlan};
pub use command::ipc_command::{CommandError, CommandResult, IpcCommand, Reply};
pub use command::router::{CommandInfo, IpcRouter, TryRegisterError};
#[cfg(any(feature = "ipc", feature = "client"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "ipc", feature = "client"))))]
pub use endpoint::Endpoint;
pub use error::ipc_error::{IpcError, RegisterError};
pub use error::kind::ErrorKind;
#[cfg(feature = "mcp")]
pub(crate) use server::Auditor;
#[cfg(feature = "ipc")]
#[cfg_attr(docsrs, doc(cfg(feature = "ipc")))]
pub use server::{IpcServer, IpcServerBuilder, ShutdownReport};

#[cfg(feature = "ipc")]
#[cfg_attr(docsrs, doc(cfg(feature = "ipc")))]
pub use crate::sandbox::{Access, Bwrap, BwrapError, SandboxPath};
#[cfg(any(feature = "ipc", feature = "client"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "ipc", feature = "client"))))]
pub use crate::sandbox::{
    CommandEnv, ENV_BIN, ENV_ENDPOINT, ENV_TOKEN, ENV_TOKEN_FILE, SandboxEnv, locate_client_bin,
};

/// The error [`IpcCommand::apply_args`] and [`IpcCommand::decode_reply`] return.
pub type DecodeError = rmp_serde::decode::Error;

/// The error [`IpcCommand::encode_reply`] returns.
pub type EncodeError = rmp_serde::encode::Error;
