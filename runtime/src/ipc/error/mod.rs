//! How a call fails, in terms a caller can act on: [`IpcError`](crate::ipc::IpcError)
//! and its stable [`ErrorKind`](crate::ipc::ErrorKind) (each with its exit
//! code), [`RegisterError`](crate::ipc::RegisterError) for a command that
//! cannot be registered, and how durations read in their messages. Always
//! built, and below every other part of `ipc`: the command trait, the
//! call's context, the authority model and the wire all speak of it.

pub(crate) mod duration_text;
pub(crate) mod ipc_error;
pub(crate) mod kind;
