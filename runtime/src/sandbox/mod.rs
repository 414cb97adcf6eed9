//! What a sandboxed child needs to reach the host, and the sandbox it runs
//! in: the [`SandboxEnv`] an [`IpcServer`](crate::ipc::IpcServer) hands out
//! (endpoint, token, client binary, wrapper directory), the [`CommandEnv`]
//! it applies to a command, and the [`Bwrap`] profile that isolates the
//! child while keeping that way out open. Nothing here speaks the wire
//! protocol; the controllers and the server both build on it.
//!
//! Every name here is also re-exported under [`ipc`](crate::ipc), where it
//! lived before this module existed; both paths keep working.

#[cfg(feature = "ipc")]
pub(crate) mod bwrap;
pub(crate) mod env;

#[cfg(feature = "ipc")]
#[cfg_attr(docsrs, doc(cfg(feature = "ipc")))]
pub use bwrap::{Access, Bwrap, BwrapError, SandboxPath};
pub use env::{
    CommandEnv, ENV_BIN, ENV_ENDPOINT, ENV_TOKEN, ENV_TOKEN_FILE, SandboxEnv, locate_client_bin,
};
