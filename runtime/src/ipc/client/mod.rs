//! Clients of an [`IpcServer`](crate::ipc::IpcServer): [`IpcClient`],
//! blocking, std only (what the in-sandbox `gangway` binary uses, so it
//! starts fast), and [`AsyncIpcClient`] for tokio, with any number of
//! calls in flight.
//!
//! - `error`: [`ClientError`] and [`RemoteError`];
//! - `exchange`: what both clients do alike (the hello, requests within
//!   the frame limit, responses into results);
//! - `blocking`: [`IpcClient`];
//! - `asynchronous`: [`AsyncIpcClient`].

#[cfg(feature = "ipc")]
mod asynchronous;
mod blocking;
mod error;
mod exchange;

#[cfg(feature = "ipc")]
pub use asynchronous::AsyncIpcClient;
pub use blocking::IpcClient;
pub use error::{ClientError, RemoteError};
