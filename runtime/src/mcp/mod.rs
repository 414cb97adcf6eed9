//! Every command as a Model Context Protocol tool: [`McpServer`] serves a
//! router's commands to an agent over MCP, built on `rmcp`, the official
//! Rust SDK, which does the protocol and the transport. The tools come from
//! the commands' compile-time schemas; a call goes through the same binder
//! as shell words and the same handler path, so a command behaves the same
//! from a sandboxed shell and from an agent.
//!
//! Transports: standard input and output ([`McpServer::serve_stdio`]), any
//! byte stream ([`McpServer::serve_io`]), and with the `mcp-http` feature
//! Streamable HTTP (`McpServer::serve_http`, at `/mcp`: loopback only
//! unless allowed, a bearer token required unless opted out of on
//! loopback). Each connection or HTTP
//! session has its own state. When an HTTP session closes, its running
//! calls are cancelled at once (`CancelReason::CallerGone`); when a
//! stream's input ends, rmcp gives them 5 seconds to answer, then cancels
//! them.
//!
//! - `tools/list`: each command's name, its doc comment as the description,
//!   and its JSON Schema as `inputSchema` (an object root, no null unions,
//!   no `$ref`).
//! - `tools/call`: the arguments are bound by the command's schema (types
//!   checked, "did you mean" for a misspelt name); a stdin argument is an
//!   ordinary argument: a string, or for bytes (`Vec<u8>`, `ByteBuf`,
//!   `InputStream`, given whole) a string or `{"base64": "..."}` for bytes
//!   that are not text. A handler's error, a binding error, an
//!   unknown tool and a timeout are results with `isError: true` and the
//!   message, so the model can read it and try again, never protocol
//!   errors. A `String` response is text content; any other is its JSON as
//!   text; what the handler streamed (`ctx.stdout` and `ctx.stderr`, in the
//!   order written, at most 1 MiB) comes first in the text.
//! - Typed results: a command with `#[ipc(output_schema)]` (its response
//!   type implements `schemars::JsonSchema`) has an `outputSchema` (an
//!   object root, a non-object answer wrapped as `{"result": ...}`,
//!   inlined, no null unions: see [`OutputSchema`](crate::tool::OutputSchema)),
//!   and each successful result carries `structuredContent` and the same
//!   JSON as a text block (what the handler streamed is a text block before
//!   it). The structured answer is the JSON `serde_json` writes of the
//!   success value (decoded from the answer by the command's type, on the
//!   host, so an `IpAddr` is its text and a unit struct `null`), with a
//!   `None` property left out. An error result never carries
//!   `structuredContent`. Not matched to their schema: `None` items of a
//!   list (kept as `null`, which a schema without null unions cannot
//!   describe) and 128-bit integers past `u64`.
//!   A forwarding server takes each tool's output schema from the host's
//!   list.
//! - The command's timeout (`#[ipc(timeout = "...")]`), else the server's
//!   (5 minutes), applies as it does over the socket, and so do a guard
//!   and an audit log ([`McpServer::guard`], [`McpServer::audit`]: the same
//!   as [`IpcServer`](crate::ipc::IpcServer)'s, the records' scope `mcp`).
//! - `notifications/cancelled` cancels the running handler
//!   (`ctx.cancelled()` completes with `CancelReason::Interrupted`); it then
//!   has the cancel grace (2 s) to finish.
//! - `ctx.progress(...)` becomes `notifications/progress` when the request
//!   carried a `progressToken`.
//! - Secrets: rmcp itself logs every request it receives, its arguments
//!   (an `#[ipc(secret)]` one too) included, at `debug` under the target
//!   `rmcp::service`; a host logging at `debug` filters it (`rmcp=info`).
//!
//! [`McpServer::forwarding`] serves a gangway host's commands instead (what
//! `gangway mcp` runs inside a sandbox): the tools are those the sandbox's
//! token may call, as the host lists them, and each call runs on the host,
//! so the host's binder, guard, audit log, timeouts and cancel grace apply
//! there; this side adds only what [`McpServer::with_call_timeout`] sets.
//! It ends when the host's connection is lost.
//!
//! ```no_run
//! # async fn demo(router: gangway::ipc::IpcRouter) -> std::io::Result<()> {
//! gangway::mcp::McpServer::new(router).serve_stdio().await
//! # }
//! ```

mod authority;
mod call;
mod forward;
#[cfg(feature = "mcp-http")]
mod http;
#[cfg(feature = "mcp-http")]
mod http_settings;
mod progress;
mod serve;
mod server;
mod session;
mod structured;
mod tools;

#[cfg(feature = "mcp-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub use http::MCP_PATH;
pub use server::McpServer;
