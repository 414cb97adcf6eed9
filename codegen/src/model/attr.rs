//! The attributes a command struct carries: `#[ipc(...)]` (parsed by
//! darling, which reports unknown keys with the nearest known one), the
//! `#[serde(...)]` keys that change the wire format, and `///` docs.

use darling::FromField;
use darling::util::{Flag, SpannedValue};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, ExprPath, Lit, LitStr, Token};

use super::naming::RenameRule;

/// `#[ipc(...)]` on the struct, read by hand rather than by darling's derive
/// because `response = Result<T, E>` is a type with a comma inside, which
/// only a type parser can delimit.
#[derive(Debug)]
pub struct CommandOpts {
    /// The struct's name.
    pub ident: syn::Ident,
    /// The struct's generics.
    pub generics: syn::Generics,
    /// `doc` and `serde` attributes.
    pub attrs: Vec<Attribute>,
    /// The fields, each read by darling.
    pub fields: Vec<FieldOpts>,
    /// `name = "..."`: the command name; the type's name in snake_case by default.
    pub name: Option<SpannedValue<String>>,
    /// `response = Type`: what the handler returns.
    pub response: Option<syn::Type>,
    /// `handler = method`: the inherent async method that handles a call.
    pub handler: Option<syn::Ident>,
    /// `crate = path`: where the `gangway` crate is, if renamed.
    pub krate: Option<syn::Path>,
    /// `bound = "T: Trait, ..."`: extra where-clause predicates for the impl.
    pub bound: Vec<syn::WherePredicate>,
}

/// The keys `#[ipc(...)]` accepts on a struct.
const STRUCT_KEYS: &[&str] = &["name", "response", "handler", "crate", "bound"];

impl CommandOpts {
    /// Reads the struct's attributes and fields, reporting every problem into
    /// `errors`.
    pub fn read(input: &syn::DeriveInput, errors: &mut darling::error::Accumulator) -> Self {
        let mut opts = CommandOpts {
            ident: input.ident.clone(),
            generics: input.generics.clone(),
            attrs: input
                .attrs
                .iter()
                .filter(|a| a.path().is_ident("doc") || a.path().is_ident("serde"))
                .cloned()
                .collect(),
            fields: Vec::new(),
            name: None,
            response: None,
            handler: None,
            krate: None,
            bound: Vec::new(),
        };
        for attr in input.attrs.iter().filter(|a| a.path().is_ident("ipc")) {
            let result = attr.parse_nested_meta(|meta| {
                let key = path_name(&meta.path);
                let duplicate = match key.as_str() {
                    "name" => {
                        let lit: LitStr = meta.value()?.parse()?;
                        opts.name.replace(SpannedValue::new(lit.value(), lit.span())).is_some()
                    }
                    "response" => opts.response.replace(meta.value()?.parse()?).is_some(),
                    "handler" => opts.handler.replace(meta.value()?.parse()?).is_some(),
                    "crate" => {
                        let value = meta.value()?;
                        let path = if value.peek(LitStr) {
                            value.parse::<LitStr>()?.parse()?
                        } else {
                            value.parse()?
                        };
                        opts.krate.replace(path).is_some()
                    }
                    "bound" => {
                        let lit: LitStr = meta.value()?.parse()?;
                        let predicates = lit.parse_with(
                            syn::punctuated::Punctuated::<syn::WherePredicate, Token![,]>::parse_terminated,
                        )?;
                        opts.bound.extend(predicates);
                        false
                    }
                    _ => {
                        errors.push(
                            darling::Error::unknown_field_with_alts(&key, STRUCT_KEYS)
                                .with_span(&meta.path),
                        );
                        skip_value(&meta)?;
                        false
                    }
                };
                if duplicate {
                    errors.push(darling::Error::duplicate_field(&key).with_span(&meta.path));
                }
                Ok(())
            });
            if let Err(error) = result {
                errors.push(error.into());
            }
        }
        if let syn::Data::Struct(data) = &input.data {
            for field in &data.fields {
                if let Some(field) = errors.handle(FieldOpts::from_field(field)) {
                    opts.fields.push(field);
                }
            }
        }
        opts
    }
}

/// `#[ipc(...)]` on a field.
#[derive(Debug, FromField)]
#[darling(attributes(ipc), forward_attrs(doc, serde))]
pub struct FieldOpts {
    /// The field's name.
    pub ident: Option<syn::Ident>,
    /// The field's type.
    pub ty: syn::Type,
    /// `doc` and `serde` attributes.
    pub attrs: Vec<Attribute>,
    /// `positional`: filled from the next bare word on the command line.
    pub positional: Flag,
    /// `stdin`: filled from piped standard input.
    pub stdin: Flag,
    /// `state`: host state, never read from a request.
    pub state: Flag,
    /// `method`: receives the name the command was called by.
    pub method: Flag,
    /// `short = 'x'`: the short flag.
    pub short: Option<SpannedValue<char>>,
    /// `default = <expr>`: the value when the argument is missing, also shown
    /// in help.
    pub default: Option<DefaultExpr>,
}

/// The expression of `#[ipc(default = ...)]`, taken as written: a string
/// literal is the string itself, not an expression to parse out of it.
#[derive(Debug, Clone)]
pub struct DefaultExpr(pub Expr);

impl darling::FromMeta for DefaultExpr {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        Ok(DefaultExpr(expr.clone()))
    }

    fn from_value(lit: &Lit) -> darling::Result<Self> {
        Ok(DefaultExpr(Expr::Lit(ExprLit {
            attrs: Vec::new(),
            lit: lit.clone(),
        })))
    }
}

/// serde's `default` on a struct or field.
#[derive(Debug, Clone)]
pub enum SerdeDefault {
    /// `#[serde(default)]`: `Default::default()`.
    Trait,
    /// `#[serde(default = "path")]`: a function returning the value.
    Path(ExprPath),
}

/// The `#[serde(...)]` keys of a struct that matter to the wire format.
#[derive(Debug, Default)]
pub struct SerdeContainer {
    /// `rename_all`.
    pub rename_all: Option<RenameRule>,
    /// `default`.
    pub default: Option<SerdeDefault>,
    /// Keys that change the struct's shape in ways a command cannot follow.
    pub unsupported: Vec<(String, Span)>,
    /// An error serde's own derive reports (an unknown `rename_all` rule):
    /// the derive then emits nothing, so the user sees serde's error alone.
    pub serde_reports_error: bool,
}

/// The `#[serde(...)]` keys of a field that matter to the wire format.
#[derive(Debug, Default)]
pub struct SerdeField {
    /// `rename`.
    pub rename: Option<String>,
    /// `alias`, in order.
    pub aliases: Vec<String>,
    /// `default`.
    pub default: Option<(SerdeDefault, Span)>,
    /// `skip` or `skip_deserializing`.
    pub skip_deserializing: Option<Span>,
    /// `skip` or `skip_serializing`.
    pub skip_serializing: bool,
    /// `flatten`.
    pub flatten: Option<Span>,
    /// `deserialize_with`, or `with` plus `::deserialize`.
    pub deserialize_with: Option<ExprPath>,
}

/// Reads the struct-level serde keys. Malformed serde attributes are left for
/// serde's own derive to report.
pub fn serde_container(
    attrs: &[Attribute],
    errors: &mut darling::error::Accumulator,
) -> SerdeContainer {
    let mut out = SerdeContainer::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            let key = path_name(&meta.path);
            match key.as_str() {
                "rename_all" => {
                    if let Some(lit) = string_or_deserialize(&meta, &key, errors)? {
                        match RenameRule::from_name(&lit.value()) {
                            Some(rule) => out.rename_all = Some(rule),
                            // serde's derive reports the unknown rule.
                            None => out.serde_reports_error = true,
                        }
                    }
                }
                "default" => out.default = Some(parse_default(&meta)?.0),
                "tag" | "untagged" | "transparent" | "into" | "from" | "try_from" | "content"
                | "remote" => {
                    out.unsupported.push((key, meta.path.span()));
                    skip_value(&meta)?;
                }
                _ => skip_value(&meta)?,
            }
            Ok(())
        });
    }
    out
}

/// Reads a field's serde keys.
pub fn serde_field(attrs: &[Attribute], errors: &mut darling::error::Accumulator) -> SerdeField {
    let mut out = SerdeField::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            let key = path_name(&meta.path);
            match key.as_str() {
                "rename" => {
                    if let Some(lit) = string_or_deserialize(&meta, &key, errors)? {
                        out.rename = Some(lit.value());
                    }
                }
                "alias" => out.aliases.push(meta.value()?.parse::<LitStr>()?.value()),
                "default" => out.default = Some(parse_default(&meta)?),
                "skip" => {
                    out.skip_deserializing = Some(meta.path.span());
                    out.skip_serializing = true;
                }
                "skip_deserializing" => out.skip_deserializing = Some(meta.path.span()),
                "skip_serializing" => out.skip_serializing = true,
                "flatten" => out.flatten = Some(meta.path.span()),
                "deserialize_with" => {
                    let lit: LitStr = meta.value()?.parse()?;
                    out.deserialize_with = Some(lit.parse()?);
                }
                "with" => {
                    let lit: LitStr = meta.value()?.parse()?;
                    let mut path: ExprPath = lit.parse()?;
                    path.path
                        .segments
                        .push(syn::Ident::new("deserialize", lit.span()).into());
                    out.deserialize_with = Some(path);
                }
                _ => skip_value(&meta)?,
            }
            Ok(())
        });
    }
    out
}

/// `key = "x"`, or `key(serialize = "x", deserialize = "y")` where both must
/// agree because one name serves both directions on the wire.
fn string_or_deserialize(
    meta: &syn::meta::ParseNestedMeta<'_>,
    key: &str,
    errors: &mut darling::error::Accumulator,
) -> syn::Result<Option<LitStr>> {
    if meta.input.peek(Token![=]) {
        return Ok(Some(meta.value()?.parse()?));
    }
    let mut serialize: Option<LitStr> = None;
    let mut deserialize: Option<LitStr> = None;
    meta.parse_nested_meta(|inner| {
        let lit: LitStr = inner.value()?.parse()?;
        if inner.path.is_ident("serialize") {
            serialize = Some(lit);
        } else if inner.path.is_ident("deserialize") {
            deserialize = Some(lit);
        }
        Ok(())
    })?;
    match (serialize, deserialize) {
        (Some(ser), Some(de)) if ser.value() != de.value() => {
            errors.push(
                darling::Error::custom(format!(
                    "`{key}(serialize = \"{}\", deserialize = \"{}\")` gives the argument two names; \
                     a command argument has one name on the wire, so use `{key} = \"...\"`",
                    ser.value(),
                    de.value()
                ))
                .with_span(&meta.path),
            );
            Ok(None)
        }
        (ser, de) => Ok(de.or(ser)),
    }
}

fn parse_default(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<(SerdeDefault, Span)> {
    let span = meta.path.span();
    if meta.input.peek(Token![=]) {
        let lit: LitStr = meta.value()?.parse()?;
        Ok((SerdeDefault::Path(lit.parse()?), span))
    } else {
        Ok((SerdeDefault::Trait, span))
    }
}

/// Consumes whatever follows a key we do not interpret: `= value` or `(...)`.
pub(super) fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        let value = meta.value()?;
        while !value.is_empty() && !value.peek(Token![,]) {
            value.parse::<proc_macro2::TokenTree>()?;
        }
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::TokenTree>()?;
    }
    Ok(())
}

fn path_name(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// The `///` doc comment split into its first paragraph (lines joined with
/// spaces) and the rest (paragraphs kept apart by a blank line).
pub fn docs(attrs: &[Attribute]) -> (String, String) {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(text),
                ..
            }) = &nv.value
        {
            for line in text.value().split('\n') {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
            }
        }
    }
    split_paragraphs(&lines)
}

/// The first paragraph of `lines` (joined with spaces) and the rest.
pub fn split_paragraphs(lines: &[String]) -> (String, String) {
    let mut paragraphs: Vec<Vec<&str>> = vec![Vec::new()];
    for line in lines {
        if line.trim().is_empty() {
            if !paragraphs.last().is_some_and(Vec::is_empty) {
                paragraphs.push(Vec::new());
            }
        } else {
            paragraphs.last_mut().expect("never empty").push(line);
        }
    }
    paragraphs.retain(|p| !p.is_empty());
    let mut paragraphs = paragraphs.into_iter();
    let first = paragraphs
        .next()
        .map(|p| p.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    let rest = paragraphs
        .map(|p| p.join("\n"))
        .collect::<Vec<_>>()
        .join("\n\n");
    (first, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_paragraphs() {
        let attrs: Vec<Attribute> = vec![
            syn::parse_quote!(#[doc = " Search the web"]),
            syn::parse_quote!(#[doc = " and print results."]),
            syn::parse_quote!(#[doc = ""]),
            syn::parse_quote!(#[doc = " More detail."]),
            syn::parse_quote!(#[doc = "   Indented."]),
            syn::parse_quote!(#[doc = ""]),
            syn::parse_quote!(#[doc = " Last."]),
        ];
        let (first, rest) = docs(&attrs);
        assert_eq!(first, "Search the web and print results.");
        assert_eq!(rest, "More detail.\n  Indented.\n\nLast.");
    }

    #[test]
    fn serde_keys() {
        let attrs: Vec<Attribute> = vec![
            syn::parse_quote!(#[serde(rename = "q", alias = "query", default = "ten")]),
            syn::parse_quote!(#[serde(skip_serializing_if = "Option::is_none", bound(deserialize = "T: X"))]),
        ];
        let mut errors = darling::Error::accumulator();
        let field = serde_field(&attrs, &mut errors);
        errors.finish().unwrap();
        assert_eq!(field.rename.as_deref(), Some("q"));
        assert_eq!(field.aliases, ["query"]);
        assert!(matches!(field.default, Some((SerdeDefault::Path(_), _))));
        assert!(field.skip_deserializing.is_none());
    }

    #[test]
    fn split_rename_must_agree() {
        let attrs: Vec<Attribute> =
            vec![syn::parse_quote!(#[serde(rename(serialize = "a", deserialize = "b"))])];
        let mut errors = darling::Error::accumulator();
        serde_field(&attrs, &mut errors);
        let err = errors.finish().unwrap_err();
        assert!(err.to_string().contains("two names"), "{err}");
    }
}
