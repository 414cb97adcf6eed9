//! The IPC server: an [`IpcRouter`](crate::ipc::IpcRouter) served on a Unix socket in a private
//! directory (or on TCP loopback for containers and VMs), every connection
//! authenticated by a random token before anything larger than a few KiB is
//! read, every stage bounded in time and memory.
//!
//! The files, in the order a connection meets them:
//! - `host`: the public [`IpcServer`], its scopes and its shutdown;
//! - `builder`: [`IpcServerBuilder`], its options and limits, and `start`;
//! - `state`: what the listeners, connections and calls share;
//! - `listen`: the private directory and the main listener;
//! - `accept`: the accept loop every listener runs, and each socket's room
//!   for connections before their hello;
//! - `rooms`: each grant's own directory, token file and socket, served
//!   until the scope lapses;
//! - `handshake`: the hello and the welcome, the token check, and turning
//!   a connection away;
//! - `grants`: the tokens accepted, each bound to a scope (the server's
//!   own to every command), and each scope's connection quota;
//! - `connection`: one connection's room among the others, and its
//!   pipeline: the calls started, bounded in number and bytes;
//! - `reader`: the frames a connection takes in, and its idle timeout;
//! - `calls`: a connection's list of calls, and each call's audit record;
//! - `outbox`: the one writer per connection, answers and output in order;
//! - `call`: running one call, within its time limit, and its answer;
//! - `call_io`: a call's output, progress and streamed input;
//! - `gather`: a call's small writes gathered while the writer is busy,
//!   written as few frames in one system call;
//! - `auditor`: the queue and thread that feed the audit sink.
//!
//! This file is the table of contents: every other file imports what it
//! needs from the file that defines it, and no two import each other.

mod accept;
mod auditor;
mod builder;
mod call;
mod call_io;
mod calls;
mod connection;
mod gather;
mod grants;
mod handshake;
mod host;
mod listen;
mod outbox;
mod reader;
mod rooms;
mod state;

#[cfg(feature = "mcp")]
pub(crate) use auditor::Auditor;

pub use builder::IpcServerBuilder;
pub use host::{IpcServer, ShutdownReport};
