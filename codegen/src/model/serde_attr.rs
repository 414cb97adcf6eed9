//! The `#[serde(...)]` keys that change what a command's arguments are
//! called and what happens when one is missing, read as serde reads them
//! so the schema names what serde decodes. Malformed serde attributes are
//! left for serde's own derive to report.

use proc_macro2::Span;
use syn::spanned::Spanned as _;
use syn::{Attribute, ExprPath, LitStr, Token};

use super::ctxt::Ctxt;
use super::keys::skip_value;
use super::naming::RenameRule;

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
    /// the derive then emits only placeholders (`IpcCommand`, and the
    /// `Serialize` serde did not emit), so the user sees serde's error alone.
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
pub fn serde_container(attrs: &[Attribute], cx: &mut Ctxt) -> SerdeContainer {
    let mut out = SerdeContainer::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            let key = path_name(&meta.path);
            match key.as_str() {
                "rename_all" => {
                    if let Some(lit) = string_or_deserialize(&meta, &key, cx)? {
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
pub fn serde_field(attrs: &[Attribute], cx: &mut Ctxt) -> SerdeField {
    let mut out = SerdeField::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            let key = path_name(&meta.path);
            match key.as_str() {
                "rename" => {
                    if let Some(lit) = string_or_deserialize(&meta, &key, cx)? {
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
    cx: &mut Ctxt,
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
            cx.error(
                &meta.path,
                format!(
                    "`{key}(serialize = \"{}\", deserialize = \"{}\")` gives the argument two names; \
                     a command argument has one name on the wire, so use `{key} = \"...\"`",
                    ser.value(),
                    de.value()
                ),
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

fn path_name(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_keys() {
        let attrs: Vec<Attribute> = vec![
            syn::parse_quote!(#[serde(rename = "q", alias = "query", default = "ten")]),
            syn::parse_quote!(#[serde(skip_serializing_if = "Option::is_none", bound(deserialize = "T: X"))]),
        ];
        let mut cx = Ctxt::new();
        let field = serde_field(&attrs, &mut cx);
        cx.finish_with(()).unwrap();
        assert_eq!(field.rename.as_deref(), Some("q"));
        assert_eq!(field.aliases, ["query"]);
        assert!(matches!(field.default, Some((SerdeDefault::Path(_), _))));
        assert!(field.skip_deserializing.is_none());
    }

    #[test]
    fn split_rename_must_agree() {
        let attrs: Vec<Attribute> =
            vec![syn::parse_quote!(#[serde(rename(serialize = "a", deserialize = "b"))])];
        let mut cx = Ctxt::new();
        serde_field(&attrs, &mut cx);
        let err = cx.finish_with(()).unwrap_err();
        assert!(err.to_string().contains("two names"), "{err}");
    }
}
