//! The attributes of a `#[tool]` struct, read but not yet checked: the
//! `#[tool(...)]` keys, and clap's own vocabulary as clap's derive reads it
//! (`#[command(...)]` on the struct, `#[arg(...)]` on each field, doc
//! comments). Problems of form go into the [`Ctxt`]; what the values mean is
//! checked by `valid`.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned as _;
use syn::{Expr, LitStr};

use super::ctxt::Ctxt;
use super::docs::docs;
use super::keys::{Spanned, ToolKey, skip_value, token_entries};
use super::naming::RenameRule;
use crate::schema::ValueCount;

/// A tool argument's default, as written for clap.
#[derive(Debug, Clone)]
pub enum ToolDefault {
    /// None.
    None,
    /// `default_value = "text"` (or a bool's implicit `false`).
    Text(String),
    /// `default_value_t = expr`: shown with the value's `Display`, or its
    /// `ValueEnum` name.
    Expr(Expr),
    /// A default whose text is not known without running code (such as
    /// `default_value = SOME_CONST`): optional, no text shown.
    Unknown,
    /// A bare `default_value_t`: the type's `Default`.
    TypeDefault,
}

/// What a `#[tool]` struct's attributes say.
pub(super) struct ToolOpts<'a> {
    /// The struct.
    pub item: &'a syn::ItemStruct,
    /// `#[tool(name = "...")]`.
    pub name: Option<Spanned<String>>,
    /// `#[tool(verbatim)]`.
    pub verbatim: bool,
    /// `#[tool(crate = path)]`.
    pub krate: Option<syn::Path>,
    /// Whether `#[command(name = ...)]` is there.
    pub has_command_name: bool,
    /// `#[command(rename_all = "...")]`.
    pub rename_all: Option<ArgRename>,
    /// The docs' first paragraph, or `#[command(about = "...")]`.
    pub description: String,
    /// The rest of the docs, or `#[command(long_about = "...")]`.
    pub long_description: String,
    /// The named fields, each with what its attributes say.
    pub fields: Vec<(&'a syn::Field, ArgAttrs)>,
}

impl<'a> ToolOpts<'a> {
    /// Reads `#[tool(args)]` and the struct's attributes, reporting every
    /// problem of form into `cx`.
    pub fn read(args: TokenStream, item: &'a syn::ItemStruct, cx: &mut Ctxt) -> Self {
        let (description, long_description) = docs(&item.attrs);
        let mut opts = ToolOpts {
            item,
            name: None,
            verbatim: false,
            krate: None,
            has_command_name: false,
            rename_all: None,
            description,
            long_description,
            fields: Vec::new(),
        };
        for entry in token_entries(args, "tool", cx) {
            match entry.key::<ToolKey>(cx) {
                Some(ToolKey::Name) => {
                    if let Some(name) = entry.string("\"grep\"", cx) {
                        opts.name = Some(name);
                    }
                }
                Some(ToolKey::Verbatim) => opts.verbatim = entry.flag(cx).is_present(),
                Some(ToolKey::Crate) => {
                    if let Some(path) = entry.crate_path(cx) {
                        opts.krate = Some(path);
                    }
                }
                None => {}
            }
        }
        opts.read_command_attrs(cx);
        if let syn::Fields::Named(named) = &item.fields {
            for field in &named.named {
                opts.fields.push((field, read_arg_attrs(field, cx)));
            }
        }
        opts
    }

    /// `#[command(...)]` (or `#[clap(...)]`) on the struct: the keys that
    /// change the schema.
    fn read_command_attrs(&mut self, cx: &mut Ctxt) {
        let item = self.item;
        for attr in item
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("command") || a.path().is_ident("clap"))
        {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("name") {
                    self.has_command_name = true;
                } else if meta.path.is_ident("rename_all") && meta.input.peek(syn::Token![=]) {
                    let lit: LitStr = meta.value()?.parse()?;
                    match ArgRename::from_name(&lit.value()) {
                        Some(rule) => self.rename_all = Some(rule),
                        None => cx.error(
                            &lit,
                            format!(
                                "unknown `rename_all` rule `{}`; clap accepts `kebab-case`, `snake_case`, \
                                 `camelCase`, `PascalCase`, `SCREAMING_SNAKE_CASE`, `lower`, `UPPER` and `verbatim`",
                                lit.value()
                            ),
                        ),
                    }
                    return Ok(());
                } else if meta.path.is_ident("about") && meta.input.peek(syn::Token![=]) {
                    if let Ok(text) = meta.value()?.parse::<LitStr>() {
                        self.description = text.value();
                    }
                    return Ok(());
                } else if meta.path.is_ident("long_about") && meta.input.peek(syn::Token![=]) {
                    if let Ok(text) = meta.value()?.parse::<LitStr>() {
                        self.long_description = text.value();
                    }
                    return Ok(());
                }
                skip_value(&meta)
            });
        }
    }
}

/// clap's `rename_all` rules for argument names.
#[derive(Debug, Clone, Copy)]
pub(super) enum ArgRename {
    Serde(RenameRule),
    Lower,
    Upper,
    Verbatim,
}

impl ArgRename {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "kebab-case" | "kebab" => ArgRename::Serde(RenameRule::Kebab),
            "snake_case" | "snake" => ArgRename::Serde(RenameRule::Snake),
            "camelCase" | "camel" => ArgRename::Serde(RenameRule::Camel),
            "PascalCase" | "pascal" => ArgRename::Serde(RenameRule::Pascal),
            "SCREAMING_SNAKE_CASE" | "screaming_snake" => {
                ArgRename::Serde(RenameRule::ScreamingSnake)
            }
            "lower" | "lowercase" => ArgRename::Lower,
            "UPPER" | "upper" | "UPPERCASE" => ArgRename::Upper,
            "verbatim" => ArgRename::Verbatim,
            _ => return None,
        })
    }

    /// The rule applied to a field's name.
    pub fn apply(self, field: &str) -> String {
        match self {
            ArgRename::Serde(rule) => rule.apply_to_field(field),
            ArgRename::Lower => field.replace('_', "").to_lowercase(),
            ArgRename::Upper => field.replace('_', "").to_uppercase(),
            ArgRename::Verbatim => field.to_owned(),
        }
    }
}

/// What one field's `#[arg(...)]` attributes say.
#[derive(Default)]
pub(super) struct ArgAttrs {
    pub skip: bool,
    pub short: Option<Option<char>>,
    pub long: Option<Option<String>>,
    pub aliases: Vec<String>,
    pub default: Option<ToolDefault>,
    pub required: Option<bool>,
    pub action: Option<(String, Span)>,
    pub num_args: Option<Expr>,
    pub help: Option<String>,
    pub hide: bool,
    pub env: bool,
    pub value_parser: Option<Expr>,
    pub flatten: Option<Span>,
    /// Keys whose meaning the binder cannot follow, with a hint.
    pub refused: Vec<(Span, String)>,
}

/// Reads a field's `#[arg(...)]` (or `#[clap(...)]`) attributes, and
/// whether its `#[command(...)]` flattens or nests a subcommand.
fn read_arg_attrs(field: &syn::Field, cx: &mut Ctxt) -> ArgAttrs {
    let mut out = ArgAttrs::default();
    for attr in field.attrs.iter().filter(|a| {
        a.path().is_ident("arg") || a.path().is_ident("clap") || a.path().is_ident("command")
    }) {
        if attr.path().is_ident("command") {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("flatten") || meta.path.is_ident("subcommand") {
                    out.flatten = Some(meta.path.span());
                }
                skip_value(&meta)
            });
            continue;
        }
        if matches!(attr.meta, syn::Meta::Path(_)) {
            continue;
        }
        let result = attr.parse_nested_meta(|meta| read_arg_key(&meta, &mut out));
        if let Err(error) = result {
            cx.push(error);
        }
    }
    out
}

/// Reads one key of `#[arg(...)]` into `out`; keys the schema does not
/// need are skipped.
fn read_arg_key(meta: &ParseNestedMeta<'_>, out: &mut ArgAttrs) -> syn::Result<()> {
    let key = meta
        .path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default();
    let has_value = meta.input.peek(syn::Token![=]);
    match key.as_str() {
        "skip" => {
            out.skip = true;
            return skip_value(meta);
        }
        "short" if has_value => {
            let lit: syn::LitChar = meta.value()?.parse()?;
            out.short = Some(Some(lit.value()));
        }
        "short" => out.short = Some(None),
        "long" if has_value => out.long = Some(Some(long_literal(meta)?)),
        "long" => out.long = Some(None),
        "alias" | "visible_alias" => out.aliases.extend(string_literals(&meta.value()?.parse()?)),
        "aliases" | "visible_aliases" => {
            out.aliases.extend(string_literals(&meta.value()?.parse()?))
        }
        "default_value" => {
            let expr: Expr = meta.value()?.parse()?;
            out.default = Some(match string_literals(&expr).as_slice() {
                [text] => ToolDefault::Text(text.clone()),
                _ => ToolDefault::Unknown,
            });
        }
        "default_value_t" if has_value => {
            out.default = Some(ToolDefault::Expr(meta.value()?.parse()?));
        }
        "default_value_t" => out.default = Some(ToolDefault::TypeDefault),
        "default_values_t" | "default_values" | "default_value_os" | "default_values_os" => {
            out.default = Some(ToolDefault::Unknown);
            return skip_value(meta);
        }
        "required" if has_value => {
            let lit: syn::LitBool = meta.value()?.parse()?;
            out.required = Some(lit.value);
        }
        "required" => out.required = Some(true),
        "action" => {
            let expr: Expr = meta.value()?.parse()?;
            if let Expr::Path(path) = &expr {
                out.action = path
                    .path
                    .segments
                    .last()
                    .map(|s| (s.ident.to_string(), expr.span()));
            }
        }
        "num_args" => out.num_args = Some(meta.value()?.parse()?),
        "help" if has_value => out.help = Some(meta.value()?.parse::<LitStr>()?.value()),
        "hide" if has_value => out.hide = meta.value()?.parse::<syn::LitBool>()?.value,
        "hide" => out.hide = true,
        "env" => {
            out.env = true;
            return skip_value(meta);
        }
        "value_parser" if has_value => out.value_parser = Some(meta.value()?.parse()?),
        "trailing_var_arg" | "last" | "raw" => {
            out.refused.push((meta.path.span(), refused_hint(&key)));
            return skip_value(meta);
        }
        _ => return skip_value(meta),
    }
    Ok(())
}

/// The flag of `long = "..."`, which must be a string literal.
fn long_literal(meta: &ParseNestedMeta<'_>) -> syn::Result<String> {
    let value = meta.value()?;
    match value.parse::<LitStr>() {
        Ok(lit) => Ok(lit.value()),
        Err(_) => Err(meta.error(
            "gangway needs `long` as a string literal, to know the flag without running code",
        )),
    }
}

/// Why `key`, which hands words to clap untouched, is refused.
fn refused_hint(key: &str) -> String {
    format!(
        "`{key}` hands the rest of the words to clap as they are, which the \
         schema-driven binder cannot follow; make the tool `#[tool(verbatim)]` instead"
    )
}

/// The string literals of `"a"`, `["a", "b"]` or `&["a", "b"]`.
pub(super) fn string_literals(expr: &Expr) -> Vec<String> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => vec![s.value()],
        Expr::Array(array) => array.elems.iter().flat_map(string_literals).collect(),
        Expr::Reference(reference) => string_literals(&reference.expr),
        Expr::Group(group) => string_literals(&group.expr),
        _ => Vec::new(),
    }
}

/// `num_args`: `2`, `1..`, `1..=3`, `..=3`; `None` for anything else.
pub(super) fn value_count(expr: &Expr) -> Option<ValueCount> {
    fn int(expr: &Expr) -> Option<u16> {
        match expr {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(int),
                ..
            }) => int.base10_parse().ok(),
            Expr::Group(group) => int(&group.expr),
            _ => None,
        }
    }
    match expr {
        Expr::Range(range) => {
            let min = match &range.start {
                Some(start) => int(start)?,
                None => 0,
            };
            let max = match (&range.end, &range.limits) {
                (None, _) => None,
                (Some(end), syn::RangeLimits::Closed(_)) => Some(int(end)?),
                (Some(end), syn::RangeLimits::HalfOpen(_)) => Some(int(end)?.checked_sub(1)?),
            };
            Some(ValueCount { min, max })
        }
        other => int(other).map(|n| ValueCount {
            min: n,
            max: Some(n),
        }),
    }
}
