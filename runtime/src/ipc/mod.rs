//! Commands that sandboxed processes call on the host: the [`IpcCommand`]
//! trait, the [`IpcRouter`] that dispatches calls to them, the
//! [`IpcServer`] that serves a router on a socket (with its authority
//! model: [`Scope`]s bound to tokens, a [`CallGuard`], an [`AuditSink`]),
//! the clients ([`IpcClient`], [`AsyncIpcClient`]), the [`SandboxEnv`] a
//! child needs to reach the server, and the errors a call can end in.
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

// Always built: the trait, the router (in-process dispatch, argv included),
// the errors, their kinds and exit codes need nothing beyond serde and
// MessagePack. The socket side (endpoint, server, clients, sandbox
// environment, wire protocol) is the `ipc` feature; the std-only part a
// client needs (blocking client, endpoint, environment, wire protocol
// without its async halves) is also built by `client`, which brings no
// tokio.
//
// Each file imports what it needs from the file that defines it, never
// through this one, and no two files import each other.
mod argv;
#[cfg(feature = "ipc")]
mod audit;
#[cfg(feature = "ipc")]
mod audit_caps;
#[cfg(feature = "ipc")]
mod bwrap;
#[cfg(any(feature = "ipc", feature = "client"))]
mod client;
mod command;
mod context;
#[cfg(any(feature = "ipc", feature = "client"))]
mod endpoint;
#[cfg(any(feature = "ipc", feature = "client"))]
mod env;
mod error;
pub use crate::exit;
#[cfg(feature = "ipc")]
mod guard;
mod input;
mod json;
mod kind;
#[cfg(any(feature = "ipc", feature = "client"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "ipc", feature = "client"))))]
pub mod protocol;
mod router;
mod scope;
#[cfg(feature = "ipc")]
mod server;

pub use argv::{ArgvOutcome, ArgvPlan};
#[cfg(feature = "ipc")]
#[cfg_attr(docsrs, doc(cfg(feature = "ipc")))]
pub use audit::{AuditLog, AuditOutcome, AuditRecord, AuditSink};
#[cfg(feature = "ipc")]
#[cfg_attr(docsrs, doc(cfg(feature = "ipc")))]
pub use bwrap::{Access, Bwrap, BwrapError, SandboxPath};
#[cfg(feature = "ipc")]
#[cfg_attr(docsrs, doc(cfg(feature = "ipc")))]
pub use client::{AsyncIpcClient, CallStream};
#[cfg(any(feature = "ipc", feature = "client"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "ipc", feature = "client"))))]
pub use client::{CallCanceller, CallEvent, ClientError, IpcClient, RemoteError};
pub use command::{CommandError, CommandResult, IpcCommand, Reply};
#[cfg(feature = "mcp")]
pub(crate) use context::CallSink;
pub use context::{CallContext, CallEnded, CancelReason, Cancelled};
#[cfg(any(feature = "ipc", feature = "client"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "ipc", feature = "client"))))]
pub use endpoint::Endpoint;
#[cfg(any(feature = "ipc", feature = "client"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "ipc", feature = "client"))))]
pub use env::{
    CommandEnv, ENV_BIN, ENV_ENDPOINT, ENV_TOKEN, ENV_TOKEN_FILE, SandboxEnv, locate_client_bin,
};
pub use error::{IpcError, RegisterError};
#[cfg(feature = "mcp")]
pub(crate) use guard::Admission;
#[cfg(feature = "ipc")]
#[cfg_attr(docsrs, doc(cfg(feature = "ipc")))]
pub use guard::{CallGuard, CallInfo, Decision, PeerCredentials, REDACTED};
pub use input::InputStream;
pub use kind::ErrorKind;
pub use router::{CommandInfo, IpcRouter, TryRegisterError};
pub use scope::{Scope, ScopeError};
#[cfg(feature = "mcp")]
pub(crate) use server::{Auditor, shown_duration};
#[cfg(feature = "ipc")]
#[cfg_attr(docsrs, doc(cfg(feature = "ipc")))]
pub use server::{IpcServer, IpcServerBuilder, ShutdownReport};

/// The error [`IpcCommand::apply_args`] and [`IpcCommand::decode_reply`] return.
pub type DecodeError = rmp_serde::decode::Error;

/// The error [`IpcCommand::encode_reply`] returns.
pub type EncodeError = rmp_serde::encode::Error;
