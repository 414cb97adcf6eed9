//! The command model of [gangway](https://docs.rs/gangway-runtime), shared by its
//! proc-macros and its code generators.
//!
//! | module | feature | what it holds |
//! | --- | --- | --- |
//! | [`schema`] | always | what a command accepts, as data: [`ToolSchema`](schema::ToolSchema), [`ParamSchema`](schema::ParamSchema), [`Manifest`](schema::Manifest) |
//! | [`args`] | always | parsed arguments ([`ToolArgs`](args::ToolArgs)) and their clap-compatible argv |
//! | [`bind`] | always | the one binder from shell words or a JSON object to arguments |
//! | `help` | always | `--help` text and usage lines rendered from a schema |
//! | `json_schema` | always | a schema as JSON Schema, for MCP tools and LLM function calls |
//! | `output_schema` | always | the JSON Schema of a command's answer made fit for an MCP tool's `outputSchema` ([`OutputSchema`](schema::OutputSchema)) |
//! | `case` | always | the one naming rule: where a name breaks into words, for command names, tool names and long flags |
//! | `model` | `model` | the reading and checks of `#[ipc(...)]`, `#[tool]` and `#[derive(ArgEnum)]` attributes, used by `gangway-macros` and by the source scanner |
//! | `render` | `wrappers` | wrapper scripts and the agent reference from handlebars templates |
//! | `wrappers` | `wrappers` | the wrappers of a manifest (scripts, or the client program and a link per command) written atomically, or checked |
//! | `scan` | `render` (`wrappers` and `model`) | a crate's commands read from its source |
//!
//! Most users never name this crate: the runtime (`gangway-runtime`,
//! imported as `gangway`) re-exports the schema types, and with its
//! `wrappers` feature, `write_wrappers`
//! as `gangway::wrappers`.

mod annotations;
pub mod args;
pub mod bind;
mod case;
mod help;
mod json_schema;
mod output_schema;
pub mod schema;

#[cfg(feature = "model")]
pub mod model;

#[cfg(feature = "wrappers")]
pub mod render;
#[cfg(feature = "render")]
pub mod scan;
#[cfg(feature = "wrappers")]
pub mod wrappers;

/// The client program's file name in a directory of link wrappers: what
/// every link (`search -> gangway`) points to, and how the client knows it
/// was run through one.
pub const CLIENT_FILE: &str = "gangway";

#[cfg(feature = "wrappers")]
pub use wrappers::{
    WrapperStyle, check_wrappers, check_wrappers_with, write_wrappers, write_wrappers_with,
};
