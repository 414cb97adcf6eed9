//! The keys of gangway's own attributes (`#[ipc(...)]` on a struct and on a
//! field, `#[tool(...)]`, `#[arg_enum(...)]`): one symbol table, and the
//! reading of their `key` / `key = value` entries, shared by the three.
//!
//! Each attribute's keys are one enum made by [`keys!`]: the match that
//! reads an entry is exhaustive over it, and the list an unknown key's
//! message shows is made from the same table, so the two cannot drift.
//!
//! Entries are read by a small parser of our own rather than darling's
//! derive or `syn::meta`: `response = Result<T, E>` holds a comma only a
//! type parser can place, a mistake in one key must not hide the others (nor
//! the `crate = ...` a placeholder impl needs), and each message names the
//! fix in gangway's words. The keys of other crates' attributes (serde's,
//! clap's) are read with `syn::meta`, skipping values with [`skip_value`].

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::parse::{ParseStream, Parser};
use syn::{Attribute, LitStr, Token};

use super::ctxt::Ctxt;
use crate::schema::closest;

/// The keys of one attribute, in the order messages list them.
pub(super) trait Key: Copy + Sized + 'static {
    /// Every key's spelling.
    const NAMES: &'static [&'static str];
    /// Where the keys are written, as messages say it.
    const PLACE: &'static str;
    /// The key spelled `name`.
    fn from_name(name: &str) -> Option<Self>;
}

/// Declares the keys of one attribute: an enum, and its [`Key`] table.
macro_rules! keys {
    ($(
        $(#[$doc:meta])*
        enum $name:ident in $place:literal {
            $($variant:ident = $text:literal,)*
        }
    )*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(super) enum $name {
            $(#[doc = concat!("`", $text, "`")] $variant,)*
        }

        impl Key for $name {
            const NAMES: &'static [&'static str] = &[$($text),*];
            const PLACE: &'static str = $place;
            fn from_name(name: &str) -> Option<Self> {
                match name {
                    $($text => Some($name::$variant),)*
                    _ => None,
                }
            }
        }
    )*};
}

keys! {
    /// `#[ipc(...)]` on a command struct: what it is and how it runs, then
    /// its behaviour hints and its output schema.
    enum StructKey in "`#[ipc(...)]` on a struct" {
        Name = "name", Response = "response", Handler = "handler",
        Timeout = "timeout", Bound = "bound", Crate = "crate",
        ReadOnly = "read_only", Destructive = "destructive", Idempotent = "idempotent",
        OpenWorld = "open_world", OutputSchema = "output_schema",
    }

    /// `#[ipc(...)]` on a field of a command struct: where its value comes
    /// from, then how it is written and defaulted.
    enum FieldKey in "`#[ipc(...)]` on a field" {
        Positional = "positional", Stdin = "stdin", State = "state", Method = "method",
        Context = "context", Secret = "secret",
        Short = "short", Default = "default", DefaultText = "default_text",
    }

    /// `#[tool(...)]`.
    enum ToolKey in "`#[tool(...)]`" { Name = "name", Verbatim = "verbatim", Crate = "crate", }

    /// `#[arg_enum(...)]` on an enum deriving `ArgEnum`.
    enum ArgEnumKey in "`#[arg_enum(...)]`" { Crate = "crate", }
}

/// The message for an unknown key: the nearest known one, or all of them.
fn unknown_key_message(key: &str, known: &[&str], place: &str) -> String {
    match closest(key, known.iter().copied()) {
        Some(near) => format!("unknown key `{key}`; did you mean `{near}`?"),
        None => {
            let quoted: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
            let list = match quoted.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
                _ => quoted.concat(),
            };
            format!("unknown key `{key}`; {place} accepts {list}")
        }
    }
}

/// A value with the span of the attribute that gave it.
#[derive(Debug, Clone)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub span: Span,
}

impl Spanned<String> {
    /// A string literal's text, spanned on the literal.
    fn of(lit: &LitStr) -> Self {
        Spanned {
            value: lit.value(),
            span: lit.span(),
        }
    }
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

/// One `key` or `key = value` of a gangway attribute.
pub(super) struct Entry {
    /// The attribute's name (`ipc`, `tool`), for messages.
    attr: &'static str,
    key: syn::Ident,
    /// The tokens after `=`, up to the next top-level comma.
    value: Option<TokenStream>,
}

impl Entry {
    fn name(&self) -> String {
        let name = self.key.to_string();
        name.strip_prefix("r#").map(str::to_owned).unwrap_or(name)
    }

    /// The key, or `None` with the unknown key reported.
    pub fn key<K: Key>(&self, cx: &mut Ctxt) -> Option<K> {
        let name = self.name();
        let key = K::from_name(&name);
        if key.is_none() {
            cx.error(&self.key, unknown_key_message(&name, K::NAMES, K::PLACE));
        }
        key
    }

    /// The value parsed as `T`, or an error showing what the key takes.
    pub fn parse<T: syn::parse::Parse>(&self, example: &str) -> darling::Result<T> {
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

    /// A string value, spanned on the literal.
    pub fn string(&self, example: &str, cx: &mut Ctxt) -> Option<Spanned<String>> {
        cx.handle(self.parse::<LitStr>(example))
            .map(|lit| Spanned::of(&lit))
    }

    /// A key that takes no value.
    pub fn flag(&self, cx: &mut Ctxt) -> Flag {
        if let Some(value) = &self.value {
            let name = self.name();
            cx.error(
                &value_span(value, &self.key),
                format!("`{name}` takes no value: write `#[{}({name})]`", self.attr),
            );
        }
        Flag(Some(self.key.span()))
    }

    /// A key that takes no value, stored in `slot`, reporting a key given
    /// twice.
    pub fn flag_once(&self, slot: &mut Flag, cx: &mut Ctxt) {
        if slot.is_present() {
            cx.error(
                &self.key,
                format!("`{}` is given twice; keep one", self.name()),
            );
        }
        *slot = self.flag(cx);
    }

    /// `crate = path` or `crate = "path"`: where the `gangway` crate is.
    pub fn crate_path(&self, cx: &mut Ctxt) -> Option<syn::Path> {
        let path = self.value.as_ref().and_then(|value| {
            syn::parse2::<LitStr>(value.clone())
                .and_then(|lit| lit.parse::<syn::Path>())
                .or_else(|_| syn::parse2::<syn::Path>(value.clone()))
                .ok()
        });
        if path.is_none() {
            cx.error(
                &self.key,
                "`crate` takes a path, as in `crate = my_gangway`",
            );
        }
        path
    }

    /// Stores a key's value, reporting a key given twice.
    pub fn once<T>(&self, slot: &mut Option<T>, value: T, cx: &mut Ctxt) {
        if slot.is_some() {
            cx.error(
                &self.key,
                format!("`{}` is given twice; keep one", self.name()),
            );
        }
        *slot = Some(value);
    }
}

fn value_span(value: &TokenStream, key: &syn::Ident) -> Span {
    value
        .clone()
        .into_iter()
        .next()
        .map_or_else(|| key.span(), |t| t.span())
}

/// Reads every `#[attr(...)]` among `attrs` into entries; `example` is a
/// key to show when the parentheses are missing.
pub(super) fn attr_entries(
    attrs: &[Attribute],
    attr: &'static str,
    example: &str,
    cx: &mut Ctxt,
) -> Vec<Entry> {
    let mut entries = Vec::new();
    for found in attrs.iter().filter(|a| a.path().is_ident(attr)) {
        match &found.meta {
            syn::Meta::List(list) => entries.extend(token_entries(list.tokens.clone(), attr, cx)),
            other => cx.error(
                other,
                format!("`#[{attr}]` needs its keys in parentheses, as in `#[{attr}({example})]`"),
            ),
        }
    }
    entries
}

/// Reads the inside of `#[attr(...)]` into entries. A malformed entry is
/// reported and skipped up to the next comma; the rest are still read.
pub(super) fn token_entries(tokens: TokenStream, attr: &'static str, cx: &mut Ctxt) -> Vec<Entry> {
    let mut entries = Vec::new();
    let parser = |input: ParseStream<'_>| -> syn::Result<()> {
        while !input.is_empty() {
            let chunk = take_until_comma(input)?;
            if !chunk.is_empty() {
                match split_entry(chunk, attr) {
                    Ok(entry) => entries.push(entry),
                    Err(error) => cx.push(error),
                }
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(())
    };
    if let Err(error) = parser.parse2(tokens) {
        cx.push(error);
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
fn split_entry(tokens: TokenStream, attr: &'static str) -> darling::Result<Entry> {
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
        None => Ok(Entry {
            attr,
            key,
            value: None,
        }),
        Some(TokenTree::Punct(eq)) if eq.as_char() == '=' => {
            let value: TokenStream = trees.collect();
            if value.is_empty() {
                return Err(darling::Error::custom(format!("`{key_text}` needs a value after `=`"))
                    .with_span(&eq.span()));
            }
            Ok(Entry {
                attr,
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

/// Consumes the value of a key of another crate's attribute that we do not
/// read, whatever its form: `= expr` (parsed as an expression, as serde and
/// clap parse it, so a comma inside `<...>` does not end it) or `(...)`.
pub(super) fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<TokenTree>()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_suggest_or_list() {
        assert_eq!(
            unknown_key_message("nmae", StructKey::NAMES, StructKey::PLACE),
            "unknown key `nmae`; did you mean `name`?"
        );
        assert_eq!(
            unknown_key_message("zzz", StructKey::NAMES, StructKey::PLACE),
            "unknown key `zzz`; `#[ipc(...)]` on a struct accepts `name`, `response`, `handler`, \
             `timeout`, `bound`, `crate`, `read_only`, `destructive`, `idempotent`, `open_world` and \
             `output_schema`"
        );
        assert_eq!(
            unknown_key_message("readonly", StructKey::NAMES, StructKey::PLACE),
            "unknown key `readonly`; did you mean `read_only`?"
        );
        assert_eq!(
            unknown_key_message("zzz", ToolKey::NAMES, ToolKey::PLACE),
            "unknown key `zzz`; `#[tool(...)]` accepts `name`, `verbatim` and `crate`"
        );
        assert_eq!(
            unknown_key_message("zzz", ArgEnumKey::NAMES, ArgEnumKey::PLACE),
            "unknown key `zzz`; `#[arg_enum(...)]` accepts `crate`"
        );
    }

    #[test]
    fn every_key_reads_back() {
        fn round_trip<K: Key + PartialEq + std::fmt::Debug>() {
            for name in K::NAMES {
                let key = K::from_name(name).expect("a listed key is known");
                let again = K::NAMES.iter().filter(|n| K::from_name(n) == Some(key));
                assert_eq!(again.count(), 1, "{name} has one spelling");
            }
        }
        round_trip::<StructKey>();
        round_trip::<FieldKey>();
        round_trip::<ToolKey>();
        round_trip::<ArgEnumKey>();
    }
}
