//! Tools and their schemas: what a command or tool accepts, as data.
//!
//! Every command has a [`ToolSchema`], known at compile time: its name, its
//! description, and each argument's wire name, flag names, type, default and
//! description. The router publishes the schemas in its
//! [`Manifest`], which the `gangway` CLI turns into shell wrappers.
//!
//! ```
//! use gangway::IpcCommand;
//! use gangway::tool::ValueKind;
//! use serde::Serialize;
//!
//! /// Search the web.
//! #[derive(Clone, Serialize, IpcCommand)]
//! #[ipc(response = Vec<String>)]
//! struct WebSearch {
//!     /// What to search for.
//!     #[ipc(positional)]
//!     query: String,
//!     /// How many results to print.
//!     #[ipc(short = 'n', default = 10)]
//!     max_results: u32,
//! }
//! # impl WebSearch { async fn handle(&mut self) -> Vec<String> { vec![] } }
//!
//! let schema = <WebSearch as IpcCommand>::SCHEMA.unwrap();
//! let limit = schema.param("max_results").unwrap();
//! assert_eq!(limit.long, "max-results");
//! assert_eq!(limit.short, Some('n'));
//! assert_eq!(limit.kind, ValueKind::UInt);
//! assert_eq!(limit.default.as_deref(), Some("10"));
//! ```

pub use gangway_codegen::schema::{
    ArgBinding, ArgType, Manifest, ParamSchema, ToolSchema, ValueKind, cli_long_name, closest,
    is_valid_command_name,
};
