//! The command model shared by the proc-macros and the source scanner: one
//! parser of `#[ipc(...)]`, one set of checks, one schema.
//!
//! The macro crate turns a [`CommandModel`] into an `impl IpcCommand`; the
//! scanner turns the same model into a [`ToolSchema`](crate::schema::ToolSchema)
//! value. Both go through [`CommandModel::from_derive_input`].
//!
//! This module serves gangway's own crates, which move in lockstep: it is not
//! covered by semver, and its types may change in any release.

mod arg_enum;
mod attr;
mod command;
mod naming;
mod tokens;
mod tool;
mod ty;

pub use arg_enum::ArgEnumModel;
pub use attr::{SerdeDefault, docs, split_paragraphs};
pub use command::{ArgModel, CommandModel, FieldModel, FieldRole, Missing, Rejected};
pub use naming::{RenameRule, kebab_case, snake_case};
pub use tokens::{kind_tokens, schema_tokens, value_kind_tokens};
pub use tool::{ToolDefault, ToolField, ToolModel};
pub use ty::{
    ArgShape, ByteResponse, Decode, KindSource, byte_response, classify, is_bool, is_string,
};
