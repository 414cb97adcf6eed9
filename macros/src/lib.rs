//! Procedural macros for [gangway](https://docs.rs/gangway-runtime): a thin front end
//! that parses with the shared model in `gangway-codegen`, and expands.
//!
//! Use them through the `gangway` crate, which documents them:
//! `use gangway::IpcCommand;` brings the trait and the derive.

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

mod arg_enum;
mod ipc_command;
#[cfg(test)]
mod test_tokens;
mod tool;

/// Derives `gangway::IpcCommand`; documented in the `gangway` crate.
#[proc_macro_derive(IpcCommand, attributes(ipc))]
pub fn derive_ipc_command(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    ipc_command::expand(&input).into()
}

/// Derives `gangway::tool::ArgType` for an enum of unit variants; documented
/// in the `gangway` crate.
#[proc_macro_derive(ArgEnum, attributes(arg_enum))]
pub fn derive_arg_enum(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    arg_enum::expand(&input).into()
}

/// Turns a clap-style struct into a `gangway::tool::Tool`; documented in the
/// `gangway` crate.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(args.into(), item.into()).into()
}
