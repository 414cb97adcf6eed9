//! gangway exposes host-side commands and tools to sandboxed processes and
//! agents.
//!
//! Annotate a struct once: `#[derive(IpcCommand)]` generates argument
//! binding, metadata and a compile-time schema; the [`ipc::IpcRouter`]
//! dispatches calls to it; the `gangway` CLI renders shell wrappers so a
//! sandboxed shell can call it like any other command.
//!
//! ```
//! use gangway::IpcCommand;
//! use gangway::ipc::IpcRouter;
//! use serde::Serialize;
//!
//! /// Search the web and print the top results.
//! #[derive(Clone, Serialize, IpcCommand)]
//! #[ipc(name = "web_search", response = Vec<String>)]
//! struct WebSearch {
//!     /// What to search for.
//!     #[ipc(positional)]
//!     query: String,
//!     /// How many results to print.
//!     #[ipc(short = 'n', default = 10)]
//!     limit: u32,
//! }
//!
//! impl WebSearch {
//!     async fn handle(&mut self) -> Vec<String> {
//!         (1..=self.limit).map(|i| format!("{} #{i}", self.query)).collect()
//!     }
//! }
//!
//! let router = IpcRouter::new().register(WebSearch { query: String::new(), limit: 0 });
//! assert_eq!(router.command("web_search").unwrap().positional_args, ["query"]);
//! ```
//!
//! # Where things are
//!
//! | module | feature | what it is for |
//! |---|---|---|
//! | [`ipc`] | always; the socket side with `ipc` | the [`IpcCommand`](trait@IpcCommand) trait, [`IpcRouter`](ipc::IpcRouter) (`ipc/command/`); call errors and their kinds (`ipc/error/`); the handler's [`CallContext`](ipc::CallContext) and input (`ipc/call/`); scopes, with `ipc` the guard and audit log (`ipc/authority/`); with `ipc`: the server, the clients, the wire protocol |
//! | [`sandbox`] | `ipc` or `client` | what a child needs to reach the host ([`SandboxEnv`](sandbox::SandboxEnv), [`CommandEnv`](sandbox::CommandEnv)); with `ipc`, the bubblewrap profile ([`Bwrap`](sandbox::Bwrap)); also re-exported under `ipc` |
//! | `exit` | always | every exit code a call ends in, one table (the client's `--help` is made from it) |
//! | [`tool`](mod@tool) | always | schemas, [`ToolArgs`](tool::ToolArgs), the binder, the [`Tool`](tool::Tool) trait of `#[gangway::tool]` |
//! | [`stdio`] | `stdio` | JSON-RPC 2.0 over a child process's standard streams, for local agents (ACP) and tool servers (MCP) |
//! | [`controller`] | `controller` | starting, supervising and stopping commands, shells and agents, sandboxed or not |
//! | `wrappers` | `wrappers` | wrapper scripts written from a router's manifest at run time |
//! | `caller` | `client` | the in-sandbox client (what a wrapper runs for one call), for a host binary that is its own client; `cli` is its old, deprecated name |
//! | `process_tree`, `sync`, `msgpack_args` (private) | | process groups and sessions found in `/proc`; locks that survive a panic; the arguments of a MessagePack call split and decoded (for the derive's `apply_args` and the guard) |
//! | `__private` (hidden) | always | what the derives' generated code calls |
//!
//! # In your `Cargo.toml`
//!
//! The package is `gangway-runtime` (crates.io's `gangway` is another
//! crate); its library is `gangway`, so code says `use gangway::...`. A host
//! that writes its wrappers and is its own in-sandbox client needs this
//! crate alone, with two features, beside serde and tokio:
//!
//! ```toml
//! [dependencies]
//! gangway-runtime = { version = "0.1", features = ["wrappers", "client"] }
//! serde = { version = "1", features = ["derive"] }
//! tokio = { version = "1", features = ["rt-multi-thread"] }
//! ```
//!
//! The README's "Use it in your crate" has the complete `main.rs`.
//!
//! # Cargo features
//!
//! `ipc`, `stdio` and `controller` are on by default; a host that needs
//! less turns them off with `default-features = false` and names the ones
//! it uses. `wrappers`, `client`, `mcp`, `mcp-http`, `policy` and `test-util` are off
//! by default.
//!
//! | feature | default | what it brings | what it pulls in |
//! |---|---|---|---|
//! | `ipc` | yes | [`IpcServer`](crate::ipc::IpcServer), the clients ([`IpcClient`](crate::ipc::IpcClient), [`AsyncIpcClient`](crate::ipc::AsyncIpcClient)), [`SandboxEnv`](crate::ipc::SandboxEnv), the wire protocol ([`ipc::protocol`]); with `controller`, [`LaunchSpec::sandbox_env`](crate::controller::LaunchSpec::sandbox_env) | tokio (`net`, `rt`, `io-util`, `process`, ...), tokio-util, subtle, getrandom, tempfile |
//! | `stdio` | yes | the [`stdio`] module: JSON-RPC 2.0 over a child's standard streams | tokio (`process`, `rt`, `io-util`, ...), tokio-util, nix (`signal`, `process`), tracing |
//! | `controller` | yes | the [`controller`] module: subprocess, PTY shell and ACP agent controllers; turns on `stdio` (the agent controller speaks ACP through it) | what `stdio` pulls in, plus pty-process and nix's `term` |
//! | `wrappers` | no | `gangway::wrappers`: `write_wrappers`/`check_wrappers` (and `_with` a `WrapperStyle`: scripts or links) from a router's manifest | gangway-codegen's `wrappers` (handlebars, shlex, similar, tempfile, libc; not `syn`) |
//! | `client` | no | `gangway::caller`: `run_if_call`/`run`, the in-sandbox client, with the blocking `IpcClient`, `SandboxEnv` and the wire protocol; std only (no tokio) | rmpv |
//! | `mcp` | no | `gangway::mcp`: `McpServer`, a router's commands as Model Context Protocol tools on stdio (turns on `ipc`) | rmcp 3 (it brings schemars, and a second `syn` for its derive) |
//! | `mcp-http` | no | `McpServer::serve_http`: the same over Streamable HTTP (turns on `mcp`) | rmcp's Streamable HTTP server transport, hyper (HTTP/1), hyper-util, http-body-util, bytes, futures-core |
//! | `policy` | no | `gangway::policy`: a rules file (TOML) deciding each call, as a `CallGuard` (turns on `ipc`) | toml_edit, globset, regex |
//! | `test-util` | no | `StdioTransport::new_for_testing` and the hooks that drive its peer's side in tests (turns on `stdio`) | nothing more |
//!
//! Always built, whatever the features: the derives
//! ([`IpcCommand`](derive@IpcCommand), [`ArgEnum`](derive@ArgEnum)),
//! `#[gangway::tool]`, the [`tool`](mod@tool) module, the exit codes
//! ([`exit`], also at `gangway::ipc::exit`), and the in-process part of
//! [`ipc`]: the [`IpcCommand`](trait@IpcCommand) trait,
//! [`IpcRouter`](crate::ipc::IpcRouter) (`dispatch`, `dispatch_argv` and
//! `dispatch_json`),
//! [`Reply`](crate::ipc::Reply), [`CommandError`](crate::ipc::CommandError)
//! and the errors. They need only serde, serde_json, MessagePack (rmp,
//! rmp-serde, serde_bytes), clap and gangway's own codegen and macros
//! crates, and no async runtime: a host may dispatch calls in process on
//! the executor of its choice.

#![cfg_attr(docsrs, feature(doc_cfg))]
// The docs are written for the default features (docs.rs builds with all
// of them); with some off, links to what is left out cannot resolve.
#![cfg_attr(
    not(all(feature = "ipc", feature = "stdio", feature = "controller")),
    allow(rustdoc::broken_intra_doc_links)
)]

#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod caller;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
#[doc(hidden)]
pub mod cli;
#[cfg(feature = "controller")]
#[cfg_attr(docsrs, doc(cfg(feature = "controller")))]
pub mod controller;
pub mod exit;
pub mod ipc;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
#[cfg(feature = "policy")]
#[cfg_attr(docsrs, doc(cfg(feature = "policy")))]
pub mod policy;
#[cfg(any(feature = "ipc", feature = "client"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "ipc", feature = "client"))))]
pub mod sandbox;
#[cfg(feature = "stdio")]
#[cfg_attr(docsrs, doc(cfg(feature = "stdio")))]
pub mod stdio;
pub mod tool;

#[cfg(any(feature = "ipc", feature = "controller"))]
mod clean_env;
#[cfg(any(feature = "client", feature = "policy"))]
mod invisible;
mod msgpack_args;
#[cfg(feature = "stdio")]
mod process_tree;
#[cfg(any(feature = "ipc", feature = "stdio", feature = "client"))]
mod sync;

#[doc(hidden)]
#[path = "private/mod.rs"]
pub mod __private;

pub use ipc::IpcCommand;

/// Wrapper scripts from a router's manifest, written at run time:
/// [`write_wrappers`](wrappers::write_wrappers) (atomic, idempotent, never
/// replacing a file it did not write) and
/// [`check_wrappers`](wrappers::check_wrappers).
#[cfg(feature = "wrappers")]
#[cfg_attr(docsrs, doc(cfg(feature = "wrappers")))]
pub use gangway_codegen::wrappers;

/// The MessagePack codec the wire protocol uses, re-exported so a
/// hand-written [`IpcCommand`](trait@IpcCommand) names the same version.
pub use rmp_serde;

/// Derives [`IpcCommand`](trait@IpcCommand) for a struct with named fields.
///
/// ```
/// use std::sync::Arc;
/// use gangway::IpcCommand;
/// use serde::Serialize;
///
/// # struct SearchClient;
/// # #[derive(serde::Serialize, serde::Deserialize)] struct SearchResult { hits: Vec<String> }
/// fn ten() -> u32 { 10 }
///
/// /// Search the web and print the top results.
/// #[derive(Clone, Serialize, IpcCommand)]
/// #[ipc(name = "web_search", response = SearchResult)]
/// struct WebSearch {
///     /// What to search for.
///     #[ipc(positional)]
///     query: String,
///     /// How many results to print.
///     #[ipc(short = 'n')]
///     #[serde(default = "ten")]
///     limit: u32,
///     /// Text piped in on standard input, used as extra context.
///     #[ipc(stdin)]
///     context: Option<String>,
///     /// Host state: never read from a request, kept across calls.
///     #[ipc(state)]
///     #[serde(skip)]
///     client: Arc<SearchClient>,
/// }
///
/// impl WebSearch {
///     async fn handle(&mut self) -> SearchResult {
///         SearchResult { hits: vec![self.query.clone()] }
///     }
/// }
/// ```
///
/// # Struct attributes: `#[ipc(...)]`
///
/// - `response = Type` (required): what the handler returns. A `Result<T, E>`
///   with `E: Display` reports an `Err` as a failure on the wire. Raw bytes
///   written as `Vec<u8>` or `Box<[u8]>` (or a `Result`'s success of those)
///   travel as MessagePack `bin` and print byte for byte.
/// - `name = "..."`: the command name; the type's name in snake_case by
///   default. It must match `[A-Za-z][A-Za-z0-9_-]*`.
/// - `handler = method`: the inherent `async fn method(&mut self) -> Response`
///   that serves a call; `handle` by default. If the compiler reports
///   "multiple applicable items in scope" for `handle`, the inherent method is
///   missing, or its `impl` block has bounds the struct's generics lack (add
///   them with `bound`).
/// - `timeout = "30s"`: how long a call may run (a whole number and `ms`,
///   `s`, `m` or `h`, checked at compile time); past it the call is
///   cancelled and the caller exits 124. The server's `call_timeout` by
///   default.
/// - `bound = "T: Trait, ..."`: extra where-clause predicates for the
///   generated impl. Each type parameter already gets `Send + 'static`.
/// - `crate = path`: where `gangway` is, if the dependency is renamed.
/// - `read_only`, `destructive`, `idempotent`, `open_world`: behaviour
///   hints, in the schema and as an MCP tool's annotations.
/// - `output_schema` (with the `mcp` feature): the response type's JSON
///   Schema, from its `schemars::JsonSchema` (schemars 1; for a
///   `Result<T, E>`, `T`'s), is the command's
///   [`OutputSchema`](tool::OutputSchema) and the MCP tool's
///   `outputSchema`: an object root (any other answer is wrapped as
///   `{"result": ...}`), inlined, no null unions (an `Option` is a property
///   not required). Each MCP result then carries `structuredContent`, and
///   the same JSON as text. A type that contains itself cannot be inlined:
///   registering the command fails ([`RegisterError::OutputSchema`](ipc::RegisterError::OutputSchema)).
///
/// # Field attributes: `#[ipc(...)]`
///
/// - `positional`: filled by the next bare word, in field order; a last
///   positional of type `Vec<T>` takes all remaining words.
/// - `stdin`: filled by piped standard input (one field; `String`,
///   `Vec<u8>`, or either in an `Option`). It is also an ordinary option
///   (`--context text`), and a value given that way wins: stdin is then not
///   read at all. Empty input is no input: with stdin on `/dev/null`,
///   closed or an empty pipe, an `Option` stays `None` and a required field
///   gets its empty value. A terminal is never read.
/// - `state`: host state, never read from a request and kept as it is by
///   `apply_args`; must be `#[serde(skip)]`.
/// - `method`: a `String` receiving the name the command was called by;
///   when non-empty at registration, it is the command's name, so one struct
///   can serve several names. Must be `#[serde(skip)]`.
/// - `context`: a [`CallContext`](ipc::CallContext) receiving the call's
///   context (is it cancelled, and why); one field, `#[serde(skip)]`.
/// - `short = 'x'`: the short flag (an ASCII letter or digit; `h` is
///   reserved for help).
/// - `default = expr`: the value when the argument is missing. A string
///   literal is converted with `Into`. Help shows a literal's value.
/// - `default_text = "..."`: what help shows as the default, for a default
///   that is not a literal (`default = Speed::Slow, default_text = "slow"`).
///
/// serde's `rename`, `rename_all`, `alias`, `default`, `skip`,
/// `deserialize_with` and `with` are honoured, so the wire name, the CLI name
/// and serde never disagree. Arguments of type `bool`, `Option<T>` and
/// `Vec<T>` are optional; any other argument is required unless it has a
/// default (its own, or the struct's `#[serde(default)]`).
///
/// The type of each argument is read from its syntax for common types
/// (`String`, integers, floats, `bool`, `PathBuf`, `serde_json::Value`, raw
/// bytes as `Vec<u8>`, `Box<[u8]>` or any type named `Bytes` or `ByteBuf`,
/// `Option<T>`, `Vec<T>` and sets); any other type must implement
/// [`ArgType`](tool::ArgType) (derive [`ArgEnum`](derive@ArgEnum) for enums).
/// A type alias is not seen through: write `Option<T>`, `Vec<T>` or `bool`
/// out, since they change how the argument is bound.
pub use gangway_macros::IpcCommand;

/// Turns a clap-style struct into a [`Tool`](tool::Tool): the attribute
/// documented at [`gangway::tool::tool`](macro@tool::tool), also reachable
/// here so `#[gangway::tool]` reads as `#[rmcp::tool]` does. (A macro and a
/// module may share a name: `gangway::tool::Value` is still the module's.)
#[doc(inline)]
pub use gangway_macros::tool;

/// Derives [`ArgType`](tool::ArgType) for an enum of unit variants, so a
/// command argument can be one of its names (serde's names for the variants,
/// following `rename`, `rename_all` and `skip`). `#[arg_enum(crate = path)]`
/// names a renamed `gangway` dependency.
///
/// ```
/// use gangway::ArgEnum;
/// use gangway::tool::{ArgType, ValueKind};
///
/// #[derive(serde::Deserialize, ArgEnum)]
/// #[serde(rename_all = "lowercase")]
/// enum Speed { Fast, Slow }
///
/// assert_eq!(Speed::KIND, ValueKind::Enum(vec!["fast".into(), "slow".into()].into()));
/// ```
pub use gangway_macros::ArgEnum;
