//! The handler's view of one call: its [`CallContext`](crate::ipc::CallContext)
//! (output, progress, cancellation and why), the caller's live standard
//! input ([`InputStream`](crate::ipc::InputStream)), and the line through
//! which both reach whoever serves the call (a socket connection or an MCP
//! request), so nothing here depends on either.
//!
//! Without the `ipc` feature no call is served: `detached.rs` stands in for
//! the shared state, so the context's methods are written once.

#[cfg(feature = "ipc")]
pub(crate) mod bounded;
pub(crate) mod cancel;
pub(crate) mod context;
#[cfg(not(feature = "ipc"))]
mod detached;
#[cfg(not(feature = "ipc"))]
mod detached_input;
pub(crate) mod input;
#[cfg(feature = "ipc")]
pub(crate) mod line;
#[cfg(feature = "ipc")]
pub(crate) mod live_input;
pub(crate) mod output_stream;
#[cfg(feature = "ipc")]
pub(crate) mod state;
