//! The command model of [gangway](https://docs.rs/gangway), shared by its
//! proc-macros and its code generators.
//!
//! - [`schema`]: what a command accepts, as data (always available).
//! - [`args`]: parsed arguments and their clap-compatible argv.
//! - [`bind`]: the one binder from shell words or JSON to arguments, and help.
//! - `model` (feature `model`): the parser and checks of `#[ipc(...)]`
//!   attributes, used by `gangway-macros` and by the source scanner.
//! - `render`, `wrappers`, `scan` (feature `render`): wrapper scripts and
//!   the agent reference from handlebars templates, written atomically, and
//!   a crate's commands read from its source.
//!
//! Most users never name this crate: `gangway` re-exports the schema types.

pub mod args;
pub mod bind;
mod help;
mod json_schema;
pub mod schema;

#[cfg(feature = "model")]
pub mod model;

#[cfg(feature = "render")]
pub mod render;
#[cfg(feature = "render")]
pub mod scan;
#[cfg(feature = "render")]
pub mod wrappers;

#[cfg(feature = "render")]
pub use wrappers::{check_wrappers, write_wrappers};
