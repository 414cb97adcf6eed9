//! The checks: what the attributes say, read by `attr` and
//! friends, is held against what a command line can carry, after the
//! model is resolved and before anything is expanded (thiserror-impl's
//! `valid` pass). Each check reports into the one [`Ctxt`], so every
//! mistake of an item shows at once.
//!
//! - [`command`]: a `#[derive(IpcCommand)]` struct.
//! - [`tool`]: a `#[tool]` struct.
//! - this module: the checks both make: the name, the help flags, and two
//!   arguments answering to one flag.

pub(super) mod command;
pub(super) mod tool;

use syn::Ident;

use super::ctxt::Ctxt;
use crate::schema::{MAX_COMMAND_NAME, is_valid_command_name};

/// What a name check is about: a command's name or a tool's.
#[derive(Clone, Copy)]
pub(super) enum Named {
    /// `#[derive(IpcCommand)]`, named with `#[ipc(name = "...")]`.
    Command,
    /// `#[tool]`, named with `#[tool(name = "...")]`.
    Tool,
}

impl Named {
    fn word(self) -> &'static str {
        match self {
            Named::Command => "command",
            Named::Tool => "tool",
        }
    }

    fn attr(self) -> &'static str {
        match self {
            Named::Command => "ipc",
            Named::Tool => "tool",
        }
    }
}

/// Checks that `name` can be a command name, which becomes a file name and a
/// shell word: the one given (spanned on `given`), or else the one derived
/// from the type's name `ident`.
pub(super) fn check_name(
    cx: &mut Ctxt,
    named: Named,
    name: &str,
    given: Option<proc_macro2::Span>,
    ident: &Ident,
) {
    if is_valid_command_name(name) {
        return;
    }
    let word = named.word();
    if name.len() > MAX_COMMAND_NAME {
        let message = format!(
            "the {word} name `{name}` is {} bytes; a name is at most {MAX_COMMAND_NAME}",
            name.len()
        );
        match given {
            Some(span) => cx.error(&span, message),
            None => cx.error(ident, message),
        }
        return;
    }
    match given {
        Some(span) => cx.error(
            &span,
            format!(
                "invalid {word} name `{name}`: a name becomes a file name and a shell word, so it \
                 must match `[A-Za-z][A-Za-z0-9_-]*`"
            ),
        ),
        None => cx.error(
            ident,
            format!(
                "`{ident}` would be the {word} `{name}`, which is not a valid {word} name (it must \
                 match `[A-Za-z][A-Za-z0-9_-]*`); give it one with `#[{}(name = \"...\")]`",
                named.attr()
            ),
        ),
    }
}

/// The flags (long names or short letters) the fields of one item answer
/// to, each kept for the first field that claimed it, so a second claim is
/// reported on the field that makes it.
pub(super) struct FlagClaims<'a, T> {
    claimed: Vec<(T, &'a Ident)>,
}

impl<T> Default for FlagClaims<'_, T> {
    fn default() -> Self {
        FlagClaims {
            claimed: Vec::new(),
        }
    }
}

impl<'a, T: PartialEq> FlagClaims<'a, T> {
    /// Claims `flag` for `field`; when another field claimed it first,
    /// reports `clash(first)` on `field`. A field may claim its own flag
    /// again (an alias that is its long name).
    pub fn claim(
        &mut self,
        cx: &mut Ctxt,
        flag: T,
        field: &'a Ident,
        clash: impl FnOnce(&Ident) -> String,
    ) {
        match self.claimed.iter().find(|(claimed, _)| *claimed == flag) {
            Some((_, first)) if *first != field => cx.error(field, clash(first)),
            Some(_) => {}
            None => self.claimed.push((flag, field)),
        }
    }
}
