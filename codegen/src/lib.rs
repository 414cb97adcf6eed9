//! The command model of [gangway](https://docs.rs/gangway-runtime), shared by its
//! proc-macros and its code generators.
//!
//! - [`schema`]: what a command accepts, as data (always available).
//! - [`args`]: parsed arguments and their clap-compatible argv.
//! - [`bind`]: the one binder from shell words or JSON to arguments, and help.
//! - `model` (feature `model`): the parser and checks of `#[ipc(...)]`
//!   attributes, used by `gangway-macros` and by the source scanner.
//! - `render`, `wrappers` (feature `wrappers`): wrapper scripts and the
//!   agent reference from handlebars templates, written atomically.
//! - `scan` (feature `render`, which includes `wrappers` and `model`): a
//!   crate's commands read from its source.
//!
//! Most users never name this crate: the runtime (`gangway-runtime`,
//! imported as `gangway`) re-exports the schema types, and with its
//! `wrappers` feature, `write_wrappers`
//! as `gangway::wrappers`.

pub mod args;
pub mod bind;
mod help;
mod json_schema;
pub mod schema;

#[cfg(feature = "model")]
pub mod model;

#[cfg(feature = "wrappers")]
pub mod render;
#[cfg(feature = "render")]
pub mod scan;
#[cfg(feature = "wrappers")]
pub mod wrappers;

#[cfg(feature = "wrappers")]
pub use wrappers::{check_wrappers, write_wrappers};
