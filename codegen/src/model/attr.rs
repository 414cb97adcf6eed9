//! The attributes a command struct carries: `#[ipc(...)]`, the
//! `#[serde(...)]` keys that change the wire format, and `///` docs.
//!
//! `#[ipc(...)]` is read by a small parser of our own rather than darling's
//! derive: `response = Result<T, E>` holds a comma only a type parser can
//! place, a mistake in one key must not hide the others, and each message
//! names the fix in gangway's words. Errors go into darling's accumulator.

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned as _;
use syn::{Attribute, Expr, ExprLit, ExprPath, Lit, LitStr, Token};

use super::naming::RenameRule;
use crate::schema::closest;

/// A value with the span of the attribute that gave it.
#[derive(Debug, Clone)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub span: Span,
}

/// A key written without a value, such as `positional`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Flag(Option<Span>);

impl Flag {
    /// Whether the key was written.
    pub fn is_present(&self) -> bool {
        self.0.is_some()
    }

    /// Where it was written (the call site when it was not).
    pub fn span(&self) -> Span {
        self.0.unwrap_or_else(Span::call_site)
    }
}

/// One `key` or `key = value` of an `#[ipc(...)]` attribute.
struct Entry {
    key: syn::Ident,
    /// The tokens after `=`, up to the next top-level comma.
    value: Option<TokenStream>,
}

impl Entry {
    fn name(&self) -> String {
        let name = self.key.to_string();
        name.strip_prefix("r#").map(str::to_owned).unwrap_or(name)
    }

    /// The value parsed as `T`, or an error showing what the key takes.
    fn parse<T: syn::parse::Parse>(&self, example: &str) -> darling::Result<T> {
        let name = self.name();
        let Some(value) = &self.value else {
            return Err(darling::Error::custom(format!(
                "`{name}` needs a value, as in `{name} = {example}`"
            ))
            .with_span(&self.key));
        };
        syn::parse2::<T>(value.clone()).map_err(|_| {
            darling::Error::custom(format!("`{name}` takes a value like `{name} = {example}`"))
                .with_span(&value_span(value, &self.key))
        })
    }

    /// A key that takes no value.
    fn flag(&self, errors: &mut darling::error::Accumulator) -> Flag {
        if let Some(value) = &self.value {
            let name = self.name();
            errors.push(
                darling::Error::custom(format!("`{name}` takes no value: write `#[ipc({name})]`"))
                    .with_span(&value_span(value, &self.key)),
            );
        }
        Flag(Some(self.key.span()))
    }
}

fn value_span(value: &TokenStream, key: &syn::Ident) -> Span {
    value
        .clone()
        .into_iter()
        .next()
        .map_or_else(|| key.span(), |t| t.span())
}

/// Reads every `#[ipc(...)]` among `attrs` into entries. A malformed entry
/// is reported and skipped up to the next comma; the rest are still read.
fn ipc_entries(attrs: &[Attribute], errors: &mut darling::error::Accumulator) -> Vec<Entry> {
    let mut entries = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("ipc")) {
        let syn::Meta::List(list) = &attr.meta else {
            errors.push(
                darling::Error::custom(
                    "`#[ipc]` needs its keys in parentheses, as in `#[ipc(positional)]`",
                )
                .with_span(&attr.meta),
            );
            continue;
        };
        let parser = |input: ParseStream<'_>| -> syn::Result<()> {
            while !input.is_empty() {
                let chunk = take_until_comma(input)?;
                if !chunk.is_empty() {
                    match split_entry(chunk) {
                        Ok(entry) => entries.push(entry),
                        Err(error) => errors.push(error),
                    }
                }
                if !input.is_empty() {
                    input.parse::<Token![,]>()?;
                }
            }
            Ok(())
        };
        if let Err(error) = parser.parse2(list.tokens.clone()) {
            errors.push(error.into());
        }
    }
    entries
}

/// The tokens up to the next comma outside `<...>`.
fn take_until_comma(input: ParseStream<'_>) -> syn::Result<TokenStream> {
    input.step(|cursor| {
        let mut rest = *cursor;
        let mut out = TokenStream::new();
        let mut angle_depth = 0usize;
        let mut previous_dash = false;
        while let Some((tree, next)) = rest.token_tree() {
            if let TokenTree::Punct(punct) = &tree {
                match punct.as_char() {
                    ',' if angle_depth == 0 => break,
                    '<' => angle_depth += 1,
                    // `->` in a function type is not a closing bracket.
                    '>' if !previous_dash => angle_depth = angle_depth.saturating_sub(1),
                    _ => {}
                }
                previous_dash = punct.as_char() == '-';
            } else {
                previous_dash = false;
            }
            out.extend([tree]);
            rest = next;
        }
        Ok((out, rest))
    })
}

/// `key` or `key = value`.
fn split_entry(tokens: TokenStream) -> darling::Result<Entry> {
    let mut trees = tokens.into_iter();
    let key = match trees.next() {
        Some(TokenTree::Ident(key)) => key,
        Some(other) => {
            return Err(darling::Error::custom(
                "expected a key, such as `positional` or `short = 'n'`",
            )
            .with_span(&other.span()));
        }
        None => {
            return Err(darling::Error::custom("expected a key").with_span(&Span::call_site()));
        }
    };
    let key_text = key.to_string();
    match trees.next() {
        None => Ok(Entry { key, value: None }),
        Some(TokenTree::Punct(eq)) if eq.as_char() == '=' => {
            let value: TokenStream = trees.collect();
            if value.is_empty() {
                return Err(darling::Error::custom(format!("`{key_text}` needs a value after `=`"))
                    .with_span(&eq.span()));
            }
            Ok(Entry {
                key,
                value: Some(value),
            })
        }
        Some(other) => Err(darling::Error::custom(format!(
            "expected `=` or `,` after `{key_text}`: write `{key_text} = value`, or `{key_text}` alone"
        ))
        .with_span(&other.span())),
    }
}

/// Reports an unknown key, suggesting the nearest known one.
fn unknown_key(
    entry: &Entry,
    known: &[&str],
    place: &str,
    errors: &mut darling::error::Accumulator,
) {
    let key = entry.name();
    let message = match closest(&key, known.iter().copied()) {
        Some(near) => format!("unknown key `{key}`; did you mean `{near}`?"),
        None => format!(
            "unknown key `{key}`; `#[ipc(...)]` on a {place} accepts {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    errors.push(darling::Error::custom(message).with_span(&entry.key));
}

/// Stores a key's value, reporting a key given twice.
fn once<T>(
    slot: &mut Option<T>,
    value: T,
    entry: &Entry,
    errors: &mut darling::error::Accumulator,
) {
    if slot.is_some() {
        errors.push(
            darling::Error::custom(format!("`{}` is given twice; keep one", entry.name()))
                .with_span(&entry.key),
        );
    }
    *slot = Some(value);
}

/// `#[ipc(...)]` and the other attributes of a command struct.
#[derive(Debug)]
pub struct CommandOpts {
    /// The struct's name.
    pub ident: syn::Ident,
    /// The struct's generics.
    pub generics: syn::Generics,
    /// `doc` and `serde` attributes.
    pub attrs: Vec<Attribute>,
    /// The fields.
    pub fields: Vec<FieldOpts>,
    /// `name = "..."`: the command name; the type's name in snake_case by default.
    pub name: Option<Spanned<String>>,
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
const STRUCT_KEYS: &[&str] = &["name", "response", "handler", "bound", "crate"];

/// The keys `#[ipc(...)]` accepts on a field.
const FIELD_KEYS: &[&str] = &[
    "positional",
    "stdin",
    "state",
    "method",
    "short",
    "default",
    "default_text",
];

impl CommandOpts {
    /// Reads the struct's attributes and fields, reporting every problem into
    /// `errors`.
    pub fn read(input: &syn::DeriveInput, errors: &mut darling::error::Accumulator) -> Self {
        let mut opts = CommandOpts {
            ident: input.ident.clone(),
            generics: input.generics.clone(),
            attrs: doc_and_serde(&input.attrs),
            fields: Vec::new(),
            name: None,
            response: None,
            handler: None,
            krate: None,
            bound: Vec::new(),
        };
        for entry in ipc_entries(&input.attrs, errors) {
            match entry.name().as_str() {
                "name" => {
                    if let Some(lit) = errors.handle(entry.parse::<LitStr>("\"web_search\"")) {
                        let value = Spanned {
                            value: lit.value(),
                            span: lit.span(),
                        };
                        once(&mut opts.name, value, &entry, errors);
                    }
                }
                "response" => {
                    if let Some(ty) = errors.handle(entry.parse::<syn::Type>("String")) {
                        once(&mut opts.response, ty, &entry, errors);
                    }
                }
                "handler" => {
                    if let Some(ident) = errors.handle(entry.parse::<syn::Ident>("run")) {
                        once(&mut opts.handler, ident, &entry, errors);
                    }
                }
                "crate" => {
                    let path = entry.value.as_ref().and_then(|value| {
                        syn::parse2::<LitStr>(value.clone())
                            .and_then(|lit| lit.parse::<syn::Path>())
                            .or_else(|_| syn::parse2::<syn::Path>(value.clone()))
                            .ok()
                    });
                    match path {
                        Some(path) => once(&mut opts.krate, path, &entry, errors),
                        None => errors.push(
                            darling::Error::custom(
                                "`crate` takes a path, as in `crate = my_gangway`",
                            )
                            .with_span(&entry.key),
                        ),
                    }
                }
                "bound" => {
                    if let Some(lit) = errors.handle(entry.parse::<LitStr>("\"T: Clone\"")) {
                        let parsed = lit.parse_with(
                            syn::punctuated::Punctuated::<syn::WherePredicate, Token![,]>::parse_terminated,
                        );
                        match parsed {
                            Ok(predicates) => opts.bound.extend(predicates),
                            Err(_) => errors.push(
                                darling::Error::custom(
                                    "`bound` takes where-clause predicates in a string, as in \
                                     `bound = \"T: Clone, U: Send\"`",
                                )
                                .with_span(&lit),
                            ),
                        }
                    }
                }
                _ => unknown_key(&entry, STRUCT_KEYS, "struct", errors),
            }
        }
        if let syn::Data::Struct(data) = &input.data {
            for field in &data.fields {
                opts.fields.push(FieldOpts::read(field, errors));
            }
        }
        opts
    }
}

/// `#[ipc(...)]` and the other attributes of a field.
#[derive(Debug)]
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
    pub short: Option<Spanned<char>>,
    /// `default = <expr>`: the value when the argument is missing.
    pub default: Option<Expr>,
    /// `default_text = "..."`: how help shows the default.
    pub default_text: Option<Spanned<String>>,
}

impl FieldOpts {
    fn read(field: &syn::Field, errors: &mut darling::error::Accumulator) -> Self {
        let mut opts = FieldOpts {
            ident: field.ident.clone(),
            ty: field.ty.clone(),
            attrs: doc_and_serde(&field.attrs),
            positional: Flag::default(),
            stdin: Flag::default(),
            state: Flag::default(),
            method: Flag::default(),
            short: None,
            default: None,
            default_text: None,
        };
        for entry in ipc_entries(&field.attrs, errors) {
            match entry.name().as_str() {
                "positional" => opts.positional = entry.flag(errors),
                "stdin" => opts.stdin = entry.flag(errors),
                "state" => opts.state = entry.flag(errors),
                "method" => opts.method = entry.flag(errors),
                "short" => {
                    let short = entry.parse::<Lit>("'n'").and_then(|lit| match &lit {
                        Lit::Char(c) => Ok(Spanned {
                            value: c.value(),
                            span: c.span(),
                        }),
                        Lit::Str(s) if s.value().chars().count() == 1 => Ok(Spanned {
                            value: s.value().chars().next().unwrap_or_default(),
                            span: s.span(),
                        }),
                        other => Err(darling::Error::custom(
                            "`short` takes one character, as in `short = 'n'`",
                        )
                        .with_span(other)),
                    });
                    if let Some(short) = errors.handle(short) {
                        once(&mut opts.short, short, &entry, errors);
                    }
                }
                "default" => {
                    if let Some(expr) = errors.handle(entry.parse::<Expr>("10")) {
                        once(&mut opts.default, expr, &entry, errors);
                    }
                }
                "default_text" => {
                    if let Some(lit) = errors.handle(entry.parse::<LitStr>("\"10\"")) {
                        let value = Spanned {
                            value: lit.value(),
                            span: lit.span(),
                        };
                        once(&mut opts.default_text, value, &entry, errors);
                    }
                }
                _ => unknown_key(&entry, FIELD_KEYS, "field", errors),
            }
        }
        opts
    }
}

fn doc_and_serde(attrs: &[Attribute]) -> Vec<Attribute> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc") || a.path().is_ident("serde"))
        .cloned()
        .collect()
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
pub(super) fn string_or_deserialize(
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
