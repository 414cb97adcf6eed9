//! The checks of a `#[tool]` struct: its shape and name, each field's clap
//! attributes against what the schema-driven binder can follow, then what
//! the fields claim together (positional byte fields, flags).

use syn::Ident;

use super::{FlagClaims, Named, check_name};
use crate::model::clap_attr::{ArgAttrs, ToolOpts, value_count};
use crate::model::ctxt::Ctxt;
use crate::model::tool::{ToolField, ToolModel};
use crate::model::ty;
use crate::schema::{HELP_LONG, HELP_SHORT};

/// Checks a tool's attributes against the model resolved from them.
pub(in crate::model) fn check(opts: &ToolOpts<'_>, model: &ToolModel, cx: &mut Ctxt) {
    let item = opts.item;
    if !item.generics.params.is_empty() {
        cx.error(
            &item.generics,
            "a `#[tool]` struct cannot be generic: its schema is one static value; make a concrete type",
        );
    }
    if let syn::Fields::Unnamed(fields) = &item.fields {
        cx.error(
            &fields.paren_token.span.join(),
            "`#[tool]` needs a struct with named fields; a tuple struct's fields have no names \
             to use as flags",
        );
    }
    for attr in item
        .attrs
        .iter()
        .filter(|a| a.path().segments.iter().any(|s| s.ident == "derive"))
    {
        let mut parser_derived = false;
        let _ = attr.parse_nested_meta(|meta| {
            if meta
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "Parser")
            {
                parser_derived = true;
            }
            Ok(())
        });
        if parser_derived {
            cx.error(
                attr,
                "`#[tool]` derives `clap::Parser` itself; remove `Parser` from this derive",
            );
        }
    }
    check_name(
        cx,
        Named::Tool,
        &model.name,
        opts.name.as_ref().map(|name| name.span),
        &item.ident,
    );
    for (field, attrs) in &opts.fields {
        if let Some(ident) = &field.ident {
            check_field(field, ident, attrs, model.field(ident), cx);
        }
    }
    check_fields(&model.fields, model.verbatim, cx);
}

/// One field's clap attributes; `resolved` is the field in the model, if
/// it is in it.
fn check_field(
    field: &syn::Field,
    ident: &Ident,
    attrs: &ArgAttrs,
    resolved: Option<&ToolField>,
    cx: &mut Ctxt,
) {
    if let Some(span) = attrs.flatten {
        cx.error(
            &span,
            "`#[tool]` binds flat argument lists: `flatten` and `subcommand` fields are not supported; \
             give each subcommand its own tool",
        );
        return;
    }
    if attrs.skip {
        return;
    }
    for (span, hint) in &attrs.refused {
        cx.error(span, hint);
    }
    if let Err(ty::ShapeError::Borrowed) = ty::classify(&field.ty) {
        cx.error(
            &field.ty,
            format!("argument `{ident}` borrows its value; use an owned type"),
        );
        return;
    }
    if let Some(field) = resolved.filter(|f| f.positional.is_none()) {
        if field.short == Some(HELP_SHORT) {
            cx.error(
                ident,
                format!("`-{HELP_SHORT}` is clap's help flag; give `{ident}` another `short`"),
            );
        }
        if field.long == HELP_LONG {
            cx.error(
                ident,
                format!("`--{HELP_LONG}` is clap's help flag; give `{ident}` another `long`"),
            );
        }
    }
    if let Some((name, span)) = &attrs.action
        && name == "SetFalse"
    {
        cx.error(
            span,
            "`ArgAction::SetFalse` turns a flag off, which a schema (a flag is true when given) cannot \
             describe; name the flag for what it turns on, as in `no_color: bool`",
        );
    }
    if let Some(expr) = &attrs.num_args
        && value_count(expr).is_none()
    {
        cx.error(
            expr,
            "gangway reads `num_args` as a literal count or range, such as `2`, `1..` or `1..=3`",
        );
    }
}

/// Checks across fields: byte fields a word can reach, and no two fields
/// answering to one flag.
fn check_fields(fields: &[ToolField], verbatim: bool, cx: &mut Ctxt) {
    let positionals: Vec<&ToolField> = fields.iter().filter(|f| f.positional.is_some()).collect();
    for (i, field) in positionals.iter().enumerate() {
        if field.bytes {
            let is_last = i + 1 == positionals.len();
            let previous_open = i > 0 && {
                let previous = positionals[i - 1];
                previous.shape.repeatable || !previous.required
            };
            if !is_last || previous_open {
                cx.error(
                    &field.ident,
                    format!(
                        "byte field `{}` is positional, but its word cannot be told apart from the \
                         other positionals; make it the last positional after required ones, or give it \
                         a flag with `#[arg(long)]`",
                        field.ident
                    ),
                );
            }
        }
    }
    for field in fields.iter().filter(|f| verbatim && f.bytes) {
        cx.error(
            &field.ident,
            format!(
                "a verbatim tool hands its words to clap as text, so byte field `{}` cannot be filled; \
                 remove `verbatim` or make the field text",
                field.ident
            ),
        );
    }
    let mut longs = FlagClaims::default();
    let mut shorts = FlagClaims::default();
    for field in fields.iter().filter(|f| f.positional.is_none()) {
        let ident = &field.ident;
        longs.claim(cx, field.long.clone(), ident, |first| {
            format!(
                "fields `{first}` and `{ident}` both answer to `--{}`; give one another `long`",
                field.long
            )
        });
        if let Some(short) = field.short {
            shorts.claim(cx, short, ident, |first| {
                format!(
                    "fields `{first}` and `{ident}` both use `-{short}`; give one another `short`"
                )
            });
        }
    }
}
