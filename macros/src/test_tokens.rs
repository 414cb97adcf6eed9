//! What the expansions' unit tests read generated tokens with.

use proc_macro2::{TokenStream, TokenTree};

/// Every identifier in `tokens`, groups included, in order.
pub fn idents(tokens: TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    for tree in tokens {
        match tree {
            TokenTree::Ident(ident) => out.push(ident.to_string()),
            TokenTree::Group(group) => out.extend(idents(group.stream())),
            _ => {}
        }
    }
    out
}
