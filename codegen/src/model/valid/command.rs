//! The checks of a `#[derive(IpcCommand)]` struct: its shape, name and
//! response, each field's keys against its type and role, then what the
//! fields claim together (standard input, the method name, the order of
//! positionals, flags).

use syn::Ident;

use super::{FlagClaims, Named, check_name};
use crate::case::cli_long_name;
use crate::model::attr::{CommandOpts, FieldOpts, HintOpts, literal_text};
use crate::model::command::{ArgModel, CommandModel, FieldModel, FieldRole, usable_short};
use crate::model::ctxt::Ctxt;
use crate::model::ty::{self, KindSource, ShapeError};
use crate::schema::HELP_LONG;

/// Refuses anything but a struct with named fields (or none): then no
/// other mistake is worth showing.
pub(in crate::model) fn check_shape(input: &syn::DeriveInput) -> darling::Result<()> {
    let what = "`#[derive(IpcCommand)]` needs a struct with named fields";
    match &input.data {
        syn::Data::Struct(data) => match &data.fields {
            syn::Fields::Named(_) | syn::Fields::Unit => Ok(()),
            syn::Fields::Unnamed(fields) => Err(darling::Error::custom(format!(
                "{what}; a tuple struct's fields have no names to use as arguments"
            ))
            .with_span(&fields.paren_token.span.join())),
        },
        syn::Data::Enum(data) => Err(darling::Error::custom(format!(
            "{what}, not an enum; give each command its own struct"
        ))
        .with_span(&data.enum_token)),
        syn::Data::Union(data) => {
            Err(darling::Error::custom(format!("{what}, not a union")).with_span(&data.union_token))
        }
    }
}

/// Checks a command struct's attributes against the model resolved from
/// them.
pub(in crate::model) fn check(opts: &CommandOpts, model: &CommandModel, cx: &mut Ctxt) {
    for (key, span) in &opts.serde.unsupported {
        cx.error(
            span,
            format!(
                "`#[serde({key})]` changes the struct's shape on the wire, which a command's \
                 arguments cannot follow; remove it"
            ),
        );
    }
    check_name(
        cx,
        Named::Command,
        &model.name,
        opts.name.as_ref().map(|name| name.span),
        &opts.ident,
    );
    for lifetime in opts.generics.lifetimes() {
        cx.error(
            &lifetime.lifetime,
            format!(
                "a command cannot borrow (`IpcCommand` is `'static`, and arguments are decoded into \
                 owned values); remove the lifetime `{}`",
                lifetime.lifetime
            ),
        );
    }
    if opts.response.is_none() {
        cx.error(
            &opts.ident,
            format!(
                "missing `#[ipc(response = Type)]` on `{}`: name the type the handler returns, \
                 for example `#[ipc(response = String)]`",
                opts.ident
            ),
        );
    }
    if let Some(timeout) = &opts.timeout
        && let Err(why) = crate::model::command::parse_duration_ms(&timeout.value)
    {
        cx.error(
            &timeout.span,
            format!(
                "`timeout = \"{}\"` is not a duration: {why}; write a whole number and a unit \
                 (ms, s, m or h), as in `timeout = \"30s\"`",
                timeout.value
            ),
        );
    }
    check_hints(&opts.hints, cx);
    let contexts: Vec<_> = opts
        .fields
        .iter()
        .filter(|f| f.context.is_present())
        .collect();
    if contexts.len() > 1 {
        cx.error(
            &contexts[1].context.span(),
            "only one field can be `#[ipc(context)]`: every clone of the context is the same",
        );
    }
    for field in &opts.fields {
        check_field(field, model, cx);
    }
    check_fields(&model.fields, cx);
}

/// The behaviour hints: a read-only command destroys nothing. (Read-only
/// and idempotent together is redundant, not wrong.)
fn check_hints(hints: &HintOpts, cx: &mut Ctxt) {
    if hints.read_only.is_present() && hints.destructive.is_present() {
        let later = if hints.destructive_last {
            hints.destructive.span()
        } else {
            hints.read_only.span()
        };
        cx.error(
            &later,
            "a command cannot be both `read_only` and `destructive`: a read-only command does not \
             change its environment, so it destroys nothing; remove one of the two",
        );
    }
}

fn check_field(field: &FieldOpts, model: &CommandModel, cx: &mut Ctxt) {
    let Some(ident) = &field.ident else { return };
    if let Some(span) = field.serde.flatten {
        cx.error(
            &span,
            "`#[serde(flatten)]` is not supported on a command: every argument must be a field \
             of the command struct itself",
        );
    }
    // Roles that exclude each other, each named by the key that set it.
    let roles: Vec<(&str, proc_macro2::Span)> = [
        ("positional", &field.positional),
        ("stdin", &field.stdin),
        ("state", &field.state),
        ("method", &field.method),
        ("context", &field.context),
    ]
    .into_iter()
    .filter(|(_, flag)| flag.is_present())
    .map(|(name, flag)| (name, flag.span()))
    .collect();
    if roles.len() > 1 {
        let names = roles
            .iter()
            .map(|(n, _)| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(" and ");
        cx.error(
            &roles[1].1,
            format!(
                "field `{ident}` cannot be both {names}: pick the one that says where its value comes from"
            ),
        );
    }
    if field.state.is_present() || field.method.is_present() || field.context.is_present() {
        check_not_an_arg(field, ident, cx);
        return;
    }
    if let Some(span) = field.serde.skip_deserializing {
        cx.error(
            &span,
            format!(
                "field `{ident}` is skipped by serde, so it is not an argument; mark it \
                 `#[ipc(state)]` to keep it across calls"
            ),
        );
        return;
    }
    if let Err(ShapeError::Borrowed) = ty::classify(&field.ty) {
        cx.error(
            &field.ty,
            format!(
                "argument `{ident}` borrows its value; arguments are decoded into owned values, so \
                 use an owned type such as `String` or `Vec<u8>`"
            ),
        );
        return;
    }
    if let Some(FieldModel {
        role: FieldRole::Arg(arg),
        ..
    }) = model.field(ident)
    {
        check_arg(field, ident, arg, cx);
    }
}

/// A `state`, `method` or `context` field: not an argument, so no argument
/// keys.
fn check_not_an_arg(field: &FieldOpts, ident: &Ident, cx: &mut Ctxt) {
    let (key, key_span) = if field.state.is_present() {
        ("state", field.state.span())
    } else if field.context.is_present() {
        ("context", field.context.span())
    } else {
        ("method", field.method.span())
    };
    if field.serde.skip_deserializing.is_none() || !field.serde.skip_serializing {
        cx.error(
            &key_span,
            format!(
                "`#[ipc({key})]` field `{ident}` must also be `#[serde(skip)]`: it is not an argument, \
                 so a client must never send it"
            ),
        );
    }
    if let Some(short) = &field.short {
        cx.error(
            &short.span,
            format!("`short` is for arguments; `{ident}` is `#[ipc({key})]`"),
        );
    }
    if field.secret.is_present() {
        cx.error(
            &field.secret.span(),
            format!(
                "`secret` marks an argument, and `#[ipc({key})]` field `{ident}` is not one: remove \
                 `secret` (a `{key}` field is never read from a request's arguments, so it has no \
                 value to hide)"
            ),
        );
    }
    if let Some(default) = &field.default {
        cx.error(
            default,
            format!("`default` is for arguments; `{ident}` is `#[ipc({key})]` and keeps its value"),
        );
    }
    if field.method.is_present() && !ty::is_string(&field.ty) {
        cx.error(
            &field.ty,
            format!(
                "`#[ipc(method)]` field `{ident}` must be a `String`: it receives the name the \
                 command was called by"
            ),
        );
    }
}

/// An argument field: its names, keys and default against its type.
fn check_arg(field: &FieldOpts, ident: &Ident, arg: &ArgModel, cx: &mut Ctxt) {
    check_arg_names(ident, arg, cx);
    // A `bool` (not an `Option<bool>`) is a flag that takes no value.
    let flag = ty::is_bool(&field.ty) && !arg.shape.optional;
    check_arg_keys(field, ident, arg, flag, cx);
    check_arg_default(field, ident, arg, flag, cx);
}

/// Whether a long name (as the command line spells it) can be a flag.
fn valid_long(long: &str) -> bool {
    long.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && long
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// An argument's wire name and aliases, each of which must make a flag.
fn check_arg_names(ident: &Ident, arg: &ArgModel, cx: &mut Ctxt) {
    let (wire, long) = (&arg.wire, &arg.long);
    if !valid_long(long) {
        cx.error(
            ident,
            format!(
                "argument `{ident}` has the wire name `{wire}`, which cannot be a command-line flag; \
                 use ASCII letters, digits, `_` and `-` in `#[serde(rename = \"...\")]`"
            ),
        );
    }
    for alias in &arg.aliases {
        if !valid_long(&cli_long_name(alias)) {
            cx.error(
                ident,
                format!(
                    "argument `{ident}` has the alias `{alias}`, which cannot be a command-line flag; \
                     use ASCII letters, digits, `_` and `-`"
                ),
            );
        }
    }
}

/// An argument's `positional`, `stdin` and `short` keys against its type;
/// `flag` when it is a `bool` flag.
fn check_arg_keys(field: &FieldOpts, ident: &Ident, arg: &ArgModel, flag: bool, cx: &mut Ctxt) {
    let long = &arg.long;
    if field.positional.is_present() && flag {
        cx.error(
            &field.positional.span(),
            format!(
                "`bool` argument `{ident}` cannot be positional: a bool is a flag (`--{long}`) that takes \
                 no value"
            ),
        );
    }
    if field.positional.is_present()
        && let Some(short) = &field.short
    {
        cx.error(
            &short.span,
            format!(
                "positional argument `{ident}` cannot have a `short` flag; remove `short` or `positional`"
            ),
        );
    }
    if field.stdin.is_present() {
        let text_or_bytes = matches!(&arg.shape.kind, KindSource::Known(k) if k.is_text_or_bytes());
        if !text_or_bytes || arg.shape.repeatable || ty::is_char(&field.ty) {
            cx.error(
                &field.ty,
                format!(
                    "`#[ipc(stdin)]` field `{ident}` must hold text or bytes (`String`, `Vec<u8>`, or \
                     either in an `Option`) to receive piped standard input"
                ),
            );
        }
    }
    if let Some(short) = &field.short
        && !usable_short(short.value)
    {
        let c = short.value;
        let message = if c.is_ascii_alphanumeric() {
            format!("short flag `-{c}` is reserved for `--help`; pick another letter")
        } else {
            format!("short flag `{c}` must be an ASCII letter or digit, as in `short = 'n'`")
        };
        cx.error(&short.span, message);
    }
}

/// An argument's default: one way of giving it, `default_text` only with
/// one, and no flag on by default; `flag` when it is a `bool` flag.
fn check_arg_default(field: &FieldOpts, ident: &Ident, arg: &ArgModel, flag: bool, cx: &mut Ctxt) {
    let long = &arg.long;
    if field.default.is_some()
        && let Some((_, serde_span)) = &field.serde.default
    {
        cx.error(
            serde_span,
            format!(
                "argument `{ident}` has both `#[ipc(default = ...)]` and `#[serde(default)]`; keep one"
            ),
        );
    }
    if let Some(text) = &field.default_text
        && arg.required()
    {
        cx.error(
            &text.span,
            format!(
                "`default_text` describes a default, but argument `{ident}` has none; add \
                 `default = ...` or remove `default_text`"
            ),
        );
    }
    if flag
        && let Some(expr) = &field.default
        && literal_text(expr).as_deref() == Some("true")
    {
        cx.error(
            expr,
            format!(
                "flag `--{long}` would be on by default and could never be turned off; use an \
                 `Option<bool>` (given as `--{long}=false`) or invert it, as in `no_{ident}`"
            ),
        );
    }
}

/// Checks across fields: one stdin, one method, positional order, and no two
/// arguments answering to the same flag.
fn check_fields(fields: &[FieldModel], cx: &mut Ctxt) {
    check_single_roles(fields, cx);
    let args: Vec<(&FieldModel, &ArgModel)> = fields
        .iter()
        .filter_map(|f| match &f.role {
            FieldRole::Arg(arg) => Some((f, &**arg)),
            _ => None,
        })
        .collect();
    check_positional_order(&args, cx);
    check_flag_claims(&args, cx);
}

/// At most one field takes standard input, and one the method name.
fn check_single_roles(fields: &[FieldModel], cx: &mut Ctxt) {
    let mut stdin: Option<&Ident> = None;
    let mut method: Option<&Ident> = None;
    for field in fields {
        match &field.role {
            FieldRole::Arg(arg) if arg.stdin => match stdin {
                Some(first) => cx.error(
                    &field.ident,
                    format!(
                        "only one field can take standard input, and `{first}` already does; \
                         remove `stdin` from `{}`",
                        field.ident
                    ),
                ),
                None => stdin = Some(&field.ident),
            },
            FieldRole::Method => match method {
                Some(first) => cx.error(
                    &field.ident,
                    format!(
                        "only one field can receive the method name, and `{first}` already does"
                    ),
                ),
                None => method = Some(&field.ident),
            },
            _ => {}
        }
    }
}

/// Positionals: a list only last, and no required one after an optional
/// one.
fn check_positional_order(args: &[(&FieldModel, &ArgModel)], cx: &mut Ctxt) {
    let positionals: Vec<&(&FieldModel, &ArgModel)> = args
        .iter()
        .filter(|(_, arg)| arg.positional.is_some())
        .collect();
    for (i, (field, arg)) in positionals.iter().enumerate() {
        let is_last = i + 1 == positionals.len();
        if arg.shape.repeatable && !is_last {
            cx.error(
                &field.ident,
                format!(
                    "list positional `{}` takes all remaining words, so it must be the last positional",
                    field.ident
                ),
            );
        }
        // A list that is not last is reported above; it is optional by nature.
        if !arg.required()
            && !arg.shape.repeatable
            && let Some((later, _)) = positionals[i + 1..].iter().find(|(_, a)| a.required())
        {
            cx.error(
                &later.ident,
                format!(
                    "required positional `{}` comes after optional positional `{}`, so a single word \
                     could fill either; make `{}` required or move it after `{}`",
                    later.ident, field.ident, field.ident, later.ident
                ),
            );
        }
    }
}

/// No long flag reserved for help, and no two arguments answering to the
/// same long or short flag.
fn check_flag_claims(args: &[(&FieldModel, &ArgModel)], cx: &mut Ctxt) {
    let mut longs = FlagClaims::default();
    let mut shorts = FlagClaims::default();
    for (field, arg) in args {
        let ident = &field.ident;
        let aliases = arg.aliases.iter().map(|a| cli_long_name(a));
        for name in std::iter::once(arg.long.clone()).chain(aliases) {
            if name == HELP_LONG {
                cx.error(
                    ident,
                    format!(
                        "argument `{ident}` would be `--{name}`, which is reserved; rename it with \
                         `#[serde(rename = \"...\")]`"
                    ),
                );
                continue;
            }
            let clash = |first: &Ident| {
                format!(
                    "arguments `{first}` and `{ident}` both answer to `--{name}`; rename one with \
                     `#[serde(rename = \"...\")]`"
                )
            };
            longs.claim(cx, name.clone(), ident, clash);
        }
        if let Some(short) = arg.short {
            shorts.claim(cx, short, ident, |first| {
                format!(
                    "arguments `{first}` and `{ident}` both use the short flag `-{short}`; give one \
                     another letter"
                )
            });
        }
    }
}
