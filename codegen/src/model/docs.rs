//! Doc comments: the `///` lines of a struct or field as the schema's
//! description (the first paragraph) and long description (the rest).

use syn::{Attribute, Expr, ExprLit, Lit};

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
}
