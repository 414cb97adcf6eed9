//! Clients of an [`IpcServer`](crate::ipc::IpcServer): [`IpcClient`],
//! blocking, std only (what the in-sandbox `gangway` binary uses, so it
//! starts fast), and [`AsyncIpcClient`] for tokio, with any number of
//! calls in flight.
//!
//! - `error`: [`ClientError`] and [`RemoteError`];
//! - `exchange`: what both clients do alike (the hello, requests within
//!   the frame limit, responses into results);
//! - `event`: [`CallEvent`], what a streaming call reports;
//! - `blocking`: [`IpcClient`], and its stdin pump and canceller;
//! - `asynchronous`: [`AsyncIpcClient`].

#[cfg(feature = "ipc")]
mod asynchronous;
mod blocking;
mod calls;
mod error;
mod event;
mod exchange;
mod pump;

#[cfg(feature = "ipc")]
pub use asynchronous::{AsyncIpcClient, CallStream};
pub use blocking::{CallCanceller, IpcClient};
pub use error::{ClientError, RemoteError};
pub use event::CallEvent;
