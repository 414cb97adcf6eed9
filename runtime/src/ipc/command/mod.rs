//! What a command is and how a call reaches it, with no socket involved:
//! the [`IpcCommand`](crate::ipc::IpcCommand) trait, the
//! [`IpcRouter`](crate::ipc::IpcRouter) (in-process dispatch of MessagePack,
//! argv and JSON calls). Always built: it needs nothing beyond serde and
//! MessagePack. The errors a call ends in are `ipc/error/`, below it.

pub(crate) mod argv;
#[cfg(feature = "ipc")]
mod argv_call;
pub(crate) mod ipc_command;
pub(crate) mod json;
pub(crate) mod router;
