//! The model of `#[tool]`: a struct written in clap's own vocabulary
//! (`#[command(...)]`, `#[arg(...)]`, doc comments), read into the facts the
//! schema needs, the same way clap's derive reads them.

use darling::error::Accumulator;
use proc_macro2::Span;
use syn::spanned::Spanned as _;
use syn::{Expr, Ident, LitStr, Type};

use super::attr::docs;
use super::naming::kebab_case;
use super::ty::{self, ArgShape, Decode, KindSource};
use crate::schema::{ValueCount, ValueKind, cli_long_name, closest, is_valid_command_name};

/// A `#[tool]` struct, checked.
#[derive(Debug)]
pub struct ToolModel {
    /// The struct's name.
    pub ident: Ident,
    /// The tool's name.
    pub name: String,
    /// Whether every word goes to the tool's own parser untouched.
    pub verbatim: bool,
    /// The path of the `gangway` crate in generated code.
    pub krate: syn::Path,
    /// One paragraph saying what the tool does.
    pub description: String,
    /// The rest of the docs.
    pub long_description: String,
    /// Whether the struct sets clap's `#[command(name = ...)]` itself.
    pub has_command_name: bool,
    /// The fields clap parses or gangway fills, in order.
    pub fields: Vec<ToolField>,
}

/// One argument field of a tool.
#[derive(Debug)]
pub struct ToolField {
    /// The field's name.
    pub ident: Ident,
    /// The field's type.
    pub ty: Type,
    /// What the type means.
    pub shape: ArgShape,
    /// The parameter's name: the long flag for an option, the field's name
    /// for a positional.
    pub name: String,
    /// The long flag, without `--`.
    pub long: String,
    /// The short flag.
    pub short: Option<char>,
    /// Other long names.
    pub aliases: Vec<String>,
    /// Position among the positionals.
    pub positional: Option<u16>,
    /// Whether clap requires it.
    pub required: bool,
    /// The default, as clap has it.
    pub default: ToolDefault,
    /// The help text.
    pub description: String,
    /// `ArgAction::Count`.
    pub count: bool,
    /// `num_args`.
    pub consumes: Option<ValueCount>,
    /// `hide`: left out of help and JSON Schema.
    pub hidden: bool,
    /// The values of `value_parser = ["a", "b"]`.
    pub enum_values: Option<Vec<String>>,
    /// Whether the field names its own `value_parser`.
    pub has_value_parser: bool,
    /// A raw-bytes field: clap skips it; `bind` reads it from the arguments.
    pub bytes: bool,
}

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

const TOOL_KEYS: &[&str] = &["name", "verbatim", "crate"];

impl ToolModel {
    /// Reads a `#[tool(...)]` struct; every problem is in the error.
    pub fn from_item(
        args: proc_macro2::TokenStream,
        item: &syn::ItemStruct,
    ) -> darling::Result<Self> {
        let mut errors = darling::Error::accumulator();
        let mut name: Option<LitStr> = None;
        let mut verbatim = false;
        let mut krate: Option<syn::Path> = None;
        let parser = syn::meta::parser(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            match key.as_str() {
                "name" => name = Some(meta.value()?.parse()?),
                "verbatim" => verbatim = true,
                "crate" => krate = Some(meta.value()?.parse()?),
                _ => {
                    let message = match closest(&key, TOOL_KEYS.iter().copied()) {
                        Some(near) => format!("unknown key `{key}`; did you mean `{near}`?"),
                        None => format!(
                            "unknown key `{key}`; `#[tool(...)]` accepts `name`, `verbatim` and `crate`"
                        ),
                    };
                    return Err(meta.error(message));
                }
            }
            Ok(())
        });
        if let Err(error) = syn::parse::Parser::parse2(parser, args) {
            errors.push(error.into());
        }

        if !item.generics.params.is_empty() {
            errors.push(
                darling::Error::custom(
                    "a `#[tool]` struct cannot be generic: its schema is one static value; make a concrete type",
                )
                .with_span(&item.generics),
            );
        }
        let fields = match &item.fields {
            syn::Fields::Named(named) => named.named.iter().collect::<Vec<_>>(),
            syn::Fields::Unit => Vec::new(),
            syn::Fields::Unnamed(fields) => {
                errors.push(
                    darling::Error::custom(
                        "`#[tool]` needs a struct with named fields; a tuple struct's fields have no names \
                         to use as flags",
                    )
                    .with_span(&fields.paren_token.span.join()),
                );
                Vec::new()
            }
        };

        for attr in &item.attrs {
            if attr.path().segments.iter().any(|s| s.ident == "derive") {
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
                    errors.push(
                        darling::Error::custom(
                            "`#[tool]` derives `clap::Parser` itself; remove `Parser` from this derive",
                        )
                        .with_span(attr),
                    );
                }
            }
        }

        let tool_name = match &name {
            Some(lit) => {
                if !is_valid_command_name(&lit.value()) {
                    errors.push(
                        darling::Error::custom(format!(
                            "invalid tool name `{}`: a name becomes a file name and a shell word, so it \
                             must match `[A-Za-z][A-Za-z0-9_-]*`",
                            lit.value()
                        ))
                        .with_span(lit),
                    );
                }
                lit.value()
            }
            None => {
                let ident = item.ident.to_string();
                let name = kebab_case(ident.strip_prefix("r#").unwrap_or(&ident));
                if !is_valid_command_name(&name) {
                    errors.push(
                        darling::Error::custom(format!(
                            "`{}` would be the tool `{name}`, which is not a valid name; give it one with \
                             `#[tool(name = \"...\")]`",
                            item.ident
                        ))
                        .with_span(&item.ident),
                    );
                }
                name
            }
        };

        let (mut description, mut long_description) = docs(&item.attrs);
        let mut has_command_name = false;
        let mut rename_all: Option<ArgRename> = None;
        for attr in item
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("command") || a.path().is_ident("clap"))
        {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("name") {
                    has_command_name = true;
                } else if meta.path.is_ident("rename_all") && meta.input.peek(syn::Token![=]) {
                    let lit: LitStr = meta.value()?.parse()?;
                    match ArgRename::from_name(&lit.value()) {
                        Some(rule) => rename_all = Some(rule),
                        None => errors.push(
                            darling::Error::custom(format!(
                                "unknown `rename_all` rule `{}`; clap accepts `kebab-case`, `snake_case`, \
                                 `camelCase`, `PascalCase`, `SCREAMING_SNAKE_CASE`, `lower`, `UPPER` and `verbatim`",
                                lit.value()
                            ))
                            .with_span(&lit),
                        ),
                    }
                    return Ok(());
                } else if meta.path.is_ident("about") && meta.input.peek(syn::Token![=]) {
                    if let Ok(text) = meta.value()?.parse::<LitStr>() {
                        description = text.value();
                    }
                    return Ok(());
                } else if meta.path.is_ident("long_about") && meta.input.peek(syn::Token![=]) {
                    if let Ok(text) = meta.value()?.parse::<LitStr>() {
                        long_description = text.value();
                    }
                    return Ok(());
                }
                skip_any(&meta)
            });
        }

        let mut models = Vec::new();
        let mut next_positional = 0u16;
        for field in fields {
            if let Some(model) = read_field(field, rename_all, &mut next_positional, &mut errors) {
                models.push(model);
            }
        }
        check_fields(&models, verbatim, &mut errors);

        errors.finish_with(ToolModel {
            ident: item.ident.clone(),
            name: tool_name,
            verbatim,
            krate: krate.unwrap_or_else(|| syn::parse_quote!(::gangway)),
            description,
            long_description,
            has_command_name,
            fields: models,
        })
    }
}

/// clap's `rename_all` rules for argument names.
#[derive(Debug, Clone, Copy)]
enum ArgRename {
    Serde(super::naming::RenameRule),
    Lower,
    Upper,
    Verbatim,
}

impl ArgRename {
    fn from_name(name: &str) -> Option<Self> {
        use super::naming::RenameRule;
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

    fn apply(self, field: &str) -> String {
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
struct ArgAttrs {
    skip: bool,
    short: Option<Option<char>>,
    long: Option<Option<String>>,
    aliases: Vec<String>,
    default: Option<ToolDefault>,
    required: Option<bool>,
    action: Option<(String, Span)>,
    num_args: Option<Expr>,
    help: Option<String>,
    hide: bool,
    env: bool,
    value_parser: Option<Expr>,
    flatten: Option<Span>,
    /// Keys whose meaning the binder cannot follow, with a hint.
    refused: Vec<(Span, String)>,
}

fn read_arg_attrs(field: &syn::Field, errors: &mut Accumulator) -> ArgAttrs {
    let mut out = ArgAttrs::default();
    for attr in field.attrs.iter().filter(|a| {
        a.path().is_ident("arg") || a.path().is_ident("clap") || a.path().is_ident("command")
    }) {
        if attr.path().is_ident("command") {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("flatten") || meta.path.is_ident("subcommand") {
                    out.flatten = Some(meta.path.span());
                }
                skip_any(&meta)
            });
            continue;
        }
        if matches!(attr.meta, syn::Meta::Path(_)) {
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
            let has_value = meta.input.peek(syn::Token![=]);
            match key.as_str() {
                "skip" => {
                    out.skip = true;
                    return skip_any(&meta);
                }
                "short" if has_value => {
                    let lit: syn::LitChar = meta.value()?.parse()?;
                    out.short = Some(Some(lit.value()));
                }
                "short" => out.short = Some(None),
                "long" if has_value => {
                    let value = meta.value()?;
                    match value.parse::<LitStr>() {
                        Ok(lit) => out.long = Some(Some(lit.value())),
                        Err(_) => {
                            return Err(meta.error(
                                "gangway needs `long` as a string literal, to know the flag without running code",
                            ));
                        }
                    }
                }
                "long" => out.long = Some(None),
                "alias" | "visible_alias" => out.aliases.extend(string_literals(&meta.value()?.parse()?)),
                "aliases" | "visible_aliases" => out.aliases.extend(string_literals(&meta.value()?.parse()?)),
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
                    return skip_any(&meta);
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
                    return skip_any(&meta);
                }
                "value_parser" if has_value => out.value_parser = Some(meta.value()?.parse()?),
                "trailing_var_arg" | "last" | "raw" => {
                    out.refused.push((
                        meta.path.span(),
                        format!(
                            "`{key}` hands the rest of the words to clap as they are, which the \
                             schema-driven binder cannot follow; make the tool `#[tool(verbatim)]` instead"
                        ),
                    ));
                    return skip_any(&meta);
                }
                _ => return skip_any(&meta),
            }
            Ok(())
        });
        if let Err(error) = result {
            errors.push(error.into());
        }
    }
    out
}

/// The string literals of `"a"`, `["a", "b"]` or `&["a", "b"]`.
fn string_literals(expr: &Expr) -> Vec<String> {
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

/// Consumes the value of a key we do not need, whatever its form.
fn skip_any(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::TokenTree>()?;
    }
    Ok(())
}

fn read_field(
    field: &syn::Field,
    rename_all: Option<ArgRename>,
    next_positional: &mut u16,
    errors: &mut Accumulator,
) -> Option<ToolField> {
    let ident = field.ident.clone()?;
    let attrs = read_arg_attrs(field, errors);
    if let Some(span) = attrs.flatten {
        errors.push(
            darling::Error::custom(
                "`#[tool]` binds flat argument lists: `flatten` and `subcommand` fields are not supported; \
                 give each subcommand its own tool",
            )
            .with_span(&span),
        );
        return None;
    }
    if attrs.skip {
        return None;
    }
    for (span, hint) in &attrs.refused {
        errors.push(darling::Error::custom(hint).with_span(span));
    }
    let shape = match ty::classify(&field.ty) {
        Ok(shape) => shape,
        Err(_) => {
            errors.push(
                darling::Error::custom(format!(
                    "argument `{ident}` borrows its value; use an owned type"
                ))
                .with_span(&field.ty),
            );
            return None;
        }
    };
    let bytes = shape.decode == Decode::Bytes;
    let (description, _) = docs(&field.attrs);
    let description = attrs.help.clone().unwrap_or(description);
    let raw = ident.to_string();
    let raw = raw.strip_prefix("r#").unwrap_or(&raw).to_owned();
    let is_option = attrs.short.is_some() || attrs.long.is_some();
    let long = match &attrs.long {
        Some(Some(long)) => long.clone(),
        _ => match rename_all {
            Some(rule) => rule.apply(&raw),
            None => cli_long_name(&raw),
        },
    };
    let short = match attrs.short {
        Some(Some(c)) => Some(c),
        Some(None) => raw.chars().next(),
        None => None,
    };
    if is_option && short == Some('h') {
        errors.push(
            darling::Error::custom(format!(
                "`-h` is clap's help flag; give `{ident}` another `short`"
            ))
            .with_span(&ident),
        );
    }
    if is_option && long == "help" {
        errors.push(
            darling::Error::custom(format!(
                "`--help` is clap's help flag; give `{ident}` another `long`"
            ))
            .with_span(&ident),
        );
    }
    let action = attrs.action.as_ref().map(|(name, _)| name.as_str());
    if let Some((name, span)) = &attrs.action
        && name == "SetFalse"
    {
        errors.push(
            darling::Error::custom(
                "`ArgAction::SetFalse` turns a flag off, which a schema (a flag is true when given) cannot \
                 describe; name the flag for what it turns on, as in `no_color: bool`",
            )
            .with_span(span),
        );
    }
    let count = action == Some("Count");
    let is_bool = matches!(shape.kind, KindSource::Known(ValueKind::Bool)) && !shape.repeatable;
    // clap binds `bool` as a flag unless the action says to take a value,
    // and `Option<bool>` as an option that takes `true` or `false`.
    let bool_takes_value = is_bool && (shape.optional || action == Some("Set"));
    let flag_kind = is_bool && !bool_takes_value;
    let positional = (!is_option).then(|| {
        let index = *next_positional;
        *next_positional += 1;
        index
    });
    let consumes = match &attrs.num_args {
        Some(expr) => match value_count(expr) {
            Some(count) => Some(count),
            None => {
                errors.push(
                    darling::Error::custom(
                        "gangway reads `num_args` as a literal count or range, such as `2`, `1..` or `1..=3`",
                    )
                    .with_span(expr),
                );
                None
            }
        },
        None if bool_takes_value => Some(ValueCount {
            min: 1,
            max: Some(1),
        }),
        None => None,
    };
    let enum_values = attrs.value_parser.as_ref().and_then(|expr| {
        let values = string_literals(expr);
        (!values.is_empty() && matches!(expr, Expr::Array(_) | Expr::Reference(_)))
            .then_some(values)
    });
    let default = match attrs.default.clone() {
        Some(default) => default,
        None if flag_kind && !count => ToolDefault::Text("false".to_owned()),
        None => ToolDefault::None,
    };
    // clap's rules: `Option`, lists, flags and counts are optional, as is
    // anything with a default or an environment variable to fall back on;
    // `required = ...` decides over them.
    let optional_by_type = shape.optional || shape.repeatable || flag_kind || count;
    let has_default = !matches!(default, ToolDefault::None);
    let required = attrs
        .required
        .unwrap_or(!optional_by_type && !has_default && !attrs.env);
    Some(ToolField {
        name: if positional.is_some() {
            raw.clone()
        } else {
            long.clone()
        },
        ident,
        ty: field.ty.clone(),
        long,
        short,
        aliases: attrs.aliases,
        positional,
        required,
        default,
        description,
        count,
        consumes,
        bytes,
        hidden: attrs.hide,
        enum_values,
        has_value_parser: attrs.value_parser.is_some(),
        shape,
    })
}

/// `num_args`: `2`, `1..`, `1..=3`, `..=3`.
fn value_count(expr: &Expr) -> Option<ValueCount> {
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

fn check_fields(fields: &[ToolField], verbatim: bool, errors: &mut Accumulator) {
    let positionals: Vec<&ToolField> = fields.iter().filter(|f| f.positional.is_some()).collect();
    for (i, field) in positionals.iter().enumerate() {
        if field.bytes {
            let is_last = i + 1 == positionals.len();
            let previous_open = i > 0 && {
                let previous = positionals[i - 1];
                previous.shape.repeatable || !previous.required
            };
            if !is_last || previous_open {
                errors.push(
                    darling::Error::custom(format!(
                        "byte field `{}` is positional, but its word cannot be told apart from the \
                         other positionals; make it the last positional after required ones, or give it \
                         a flag with `#[arg(long)]`",
                        field.ident
                    ))
                    .with_span(&field.ident),
                );
            }
        }
    }
    for field in fields.iter().filter(|f| verbatim && f.bytes) {
        errors.push(
            darling::Error::custom(format!(
                "a verbatim tool hands its words to clap as text, so byte field `{}` cannot be filled; \
                 remove `verbatim` or make the field text",
                field.ident
            ))
            .with_span(&field.ident),
        );
    }
    let mut seen_long: Vec<(&str, &Ident)> = Vec::new();
    let mut seen_short: Vec<(char, &Ident)> = Vec::new();
    for field in fields.iter().filter(|f| f.positional.is_none()) {
        if let Some((_, first)) = seen_long.iter().find(|(l, _)| *l == field.long) {
            errors.push(
                darling::Error::custom(format!(
                    "fields `{first}` and `{}` both answer to `--{}`; give one another `long`",
                    field.ident, field.long
                ))
                .with_span(&field.ident),
            );
        }
        seen_long.push((&field.long, &field.ident));
        if let Some(short) = field.short {
            if let Some((_, first)) = seen_short.iter().find(|(c, _)| *c == short) {
                errors.push(
                    darling::Error::custom(format!(
                        "fields `{first}` and `{}` both use `-{short}`; give one another `short`",
                        field.ident
                    ))
                    .with_span(&field.ident),
                );
            }
            seen_short.push((short, &field.ident));
        }
    }
}

impl ToolField {
    /// The kind of one value, when the syntax tells it.
    pub fn known_kind(&self) -> Option<ValueKind> {
        if self.count {
            return Some(ValueKind::Count);
        }
        if let Some(values) = &self.enum_values {
            return Some(ValueKind::enum_of(values.iter().cloned()));
        }
        match &self.shape.kind {
            KindSource::Known(kind) => Some(kind.clone()),
            KindSource::Named(_) => None,
        }
    }

    /// Whether one occurrence takes several words (`num_args` above one).
    pub fn takes_several(&self) -> bool {
        self.consumes.is_some_and(|c| c.max != Some(1))
    }

    /// Whether the value is free-form JSON (`serde_json::Value`).
    pub fn is_json(&self) -> bool {
        matches!(self.shape.kind, KindSource::Known(ValueKind::Json))
    }

    /// The element type whose kind is looked up at run time.
    pub fn element_type(&self) -> Option<&Type> {
        match &self.shape.kind {
            KindSource::Named(ty) if !self.count => Some(ty),
            _ => None,
        }
    }
}
