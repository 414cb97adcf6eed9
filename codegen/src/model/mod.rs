//! The command model shared by the proc-macros and the source scanner: one
//! reader of the attributes, one set of checks, one schema.
//!
//! The macro crate turns a [`CommandModel`] into an `impl IpcCommand`; the
//! scanner turns the same model into a [`ToolSchema`](crate::schema::ToolSchema)
//! value. Both go through [`CommandModel::from_derive_input`]. `#[tool]` and
//! `#[derive(ArgEnum)]` have models of their own beside it.
//!
//! An item goes through three stages, as in thiserror-impl (`ast` → `attr`
//! → `valid`), all reporting into one error context:
//!
//! | module | stage | what it holds |
//! | --- | --- | --- |
//! | `entry` | all | the entry points: read, resolve, check |
//! | `keys` | read | the symbol table of gangway's attribute keys, and the reading of `key = value` entries |
//! | `attr` | read | `#[ipc(...)]` on a command struct and its fields |
//! | `serde_attr` | read | the serde keys that change the wire format |
//! | `clap_attr` | read | `#[tool(...)]`, and clap's `#[command]`/`#[arg]` |
//! | `docs` | read | doc comments as description and long description |
//! | `command` | resolve | the command model, resolved from its attributes |
//! | `tool` | resolve | the tool model, resolved from its attributes |
//! | `arg_enum` | all | the model of `#[derive(ArgEnum)]` (small enough for one file) |
//! | `ty` | resolve | what an argument's Rust type means on the command line |
//! | `naming` | resolve | serde's `rename_all` rules |
//! | `valid` | check | the checks, shared and per model |
//! | `ctxt` | all | the one error context, and what a refused item hands back |
//! | `param` | expand | one parameter's schema, as a value or as tokens |
//! | `tokens` | expand | the schema as the tokens the macros emit |
//!
//! This module serves gangway's own crates, which move in lockstep: it is not
//! covered by semver, and its types may change in any release.

mod arg_enum;
mod attr;
mod clap_attr;
mod command;
mod ctxt;
mod docs;
mod entry;
mod keys;
mod naming;
mod param;
mod serde_attr;
mod tokens;
mod tool;
mod ty;
mod valid;

pub use arg_enum::ArgEnumModel;
pub use clap_attr::ToolDefault;
pub use command::{ArgModel, CommandModel, FieldModel, FieldRole, Missing};
pub use ctxt::Rejected;
pub use docs::{docs, split_paragraphs};
pub use naming::RenameRule;
pub use param::ParamSpec;
pub use serde_attr::SerdeDefault;
pub use tokens::{kind_tokens, schema_tokens, tool_param_tokens, value_kind_tokens};
pub use tool::{ToolField, ToolModel};
pub use ty::{
    ArgShape, ByteResponse, Decode, KindSource, byte_response, classify, is_bool, is_input_stream,
    is_string,
};

pub use crate::case::{kebab_case, snake_case};
