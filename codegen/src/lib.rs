//! The command model of [gangway](https://docs.rs/gangway), shared by its
//! proc-macros and its code generators.
//!
//! - [`schema`]: what a command accepts, as data (always available).
//! - [`args`]: parsed arguments and their clap-compatible argv.
//! - [`bind`]: the one binder from shell words or JSON to arguments, and help.
//! - `model` (feature `model`): the parser and checks of `#[ipc(...)]`
//!   attributes, used by `gangway-macros` and by the source scanner.
//!
//! Most users never name this crate: `gangway` re-exports the schema types.

pub mod args;
pub mod bind;
mod help;
mod json_schema;
pub mod schema;

#[cfg(feature = "model")]
pub mod model;
