//! The attributes of a `#[derive(IpcCommand)]` struct, read but not yet
//! checked: its `#[ipc(...)]` keys and those of each field, the serde keys
//! that change the wire format, and `///` docs. Every problem of form (an
//! unknown key, a value of the wrong shape, a key given twice) goes into the
//! [`Ctxt`]; what the values mean is checked by `valid`.

use syn::{Attribute, Expr, Lit, LitStr, Token};

use super::ctxt::Ctxt;
use super::keys::{Entry, FieldKey, Flag, Spanned, StructKey, attr_entries};
use super::serde_attr::{SerdeContainer, SerdeField, serde_container, serde_field};

/// `#[ipc(...)]` and the other attributes of a command struct.
#[derive(Debug)]
pub struct CommandOpts {
    /// The struct's name.
    pub ident: syn::Ident,
    /// The struct's generics.
    pub generics: syn::Generics,
    /// `doc` and `serde` attributes.
    pub attrs: Vec<Attribute>,
    /// The struct's serde keys.
    pub serde: SerdeContainer,
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
    /// `timeout = "30s"`: how long a call may run.
    pub timeout: Option<Spanned<String>>,
    /// `read_only`, `destructive`, `idempotent`, `open_world`: the
    /// behaviour hints.
    pub hints: HintOpts,
    /// `output_schema`: publish the response type's JSON Schema as the
    /// tool's output schema.
    pub output_schema: Flag,
}

/// The behaviour hints of a command struct, each with where it was written.
#[derive(Debug, Default)]
pub struct HintOpts {
    /// `read_only`: the command does not change its environment.
    pub read_only: Flag,
    /// `destructive`: the command may destroy or overwrite data.
    pub destructive: Flag,
    /// `idempotent`: calling it again with the same arguments has no
    /// further effect.
    pub idempotent: Flag,
    /// `open_world`: the command reaches beyond the host.
    pub open_world: Flag,
    /// Whether `destructive` was written after `read_only` (the later of two
    /// contradicting hints is the one a message points at).
    pub destructive_last: bool,
}

impl HintOpts {
    fn read(&mut self, key: StructKey, entry: &Entry, cx: &mut Ctxt) {
        let slot = match key {
            StructKey::ReadOnly => &mut self.read_only,
            StructKey::Destructive => &mut self.destructive,
            StructKey::Idempotent => &mut self.idempotent,
            StructKey::OpenWorld => &mut self.open_world,
            _ => return,
        };
        entry.flag_once(slot, cx);
        match key {
            StructKey::Destructive => self.destructive_last = true,
            StructKey::ReadOnly => self.destructive_last = false,
            _ => {}
        }
    }
}

impl CommandOpts {
    /// Reads the struct's attributes and fields, reporting every problem of
    /// form into `cx`: the struct's `#[ipc]` keys, each field's, then the
    /// serde keys of the struct and of each field.
    pub fn read(input: &syn::DeriveInput, cx: &mut Ctxt) -> Self {
        let mut opts = CommandOpts {
            ident: input.ident.clone(),
            generics: input.generics.clone(),
            attrs: doc_and_serde(&input.attrs),
            serde: SerdeContainer::default(),
            fields: Vec::new(),
            name: None,
            response: None,
            handler: None,
            krate: None,
            bound: Vec::new(),
            timeout: None,
            hints: HintOpts::default(),
            output_schema: Flag::default(),
        };
        for entry in attr_entries(&input.attrs, "ipc", "positional", cx) {
            opts.read_entry(&entry, cx);
        }
        if let syn::Data::Struct(data) = &input.data {
            for field in &data.fields {
                opts.fields.push(FieldOpts::read(field, cx));
            }
        }
        opts.serde = serde_container(&opts.attrs, cx);
        for field in &mut opts.fields {
            field.serde = serde_field(&field.attrs, cx);
        }
        opts
    }

    fn read_entry(&mut self, entry: &Entry, cx: &mut Ctxt) {
        let Some(key) = entry.key::<StructKey>(cx) else {
            return;
        };
        match key {
            StructKey::Name => {
                if let Some(name) = entry.string("\"web_search\"", cx) {
                    entry.once(&mut self.name, name, cx);
                }
            }
            StructKey::Response => {
                if let Some(ty) = cx.handle(entry.parse::<syn::Type>("String")) {
                    entry.once(&mut self.response, ty, cx);
                }
            }
            StructKey::Handler => {
                if let Some(ident) = cx.handle(entry.parse::<syn::Ident>("run")) {
                    entry.once(&mut self.handler, ident, cx);
                }
            }
            StructKey::Timeout => {
                if let Some(text) = entry.string("\"30s\"", cx) {
                    entry.once(&mut self.timeout, text, cx);
                }
            }
            StructKey::ReadOnly
            | StructKey::Destructive
            | StructKey::Idempotent
            | StructKey::OpenWorld => self.hints.read(key, entry, cx),
            StructKey::OutputSchema => entry.flag_once(&mut self.output_schema, cx),
            StructKey::Crate => {
                if let Some(path) = entry.crate_path(cx) {
                    entry.once(&mut self.krate, path, cx);
                }
            }
            StructKey::Bound => {
                if let Some(lit) = cx.handle(entry.parse::<LitStr>("\"T: Clone\"")) {
                    let parsed = lit.parse_with(
                        syn::punctuated::Punctuated::<syn::WherePredicate, Token![,]>::parse_terminated,
                    );
                    match parsed {
                        Ok(predicates) => self.bound.extend(predicates),
                        Err(_) => cx.error(
                            &lit,
                            "`bound` takes where-clause predicates in a string, as in \
                             `bound = \"T: Clone, U: Send\"`",
                        ),
                    }
                }
            }
        }
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
    /// The field's serde keys.
    pub serde: SerdeField,
    /// `positional`: filled from the next bare word on the command line.
    pub positional: Flag,
    /// `stdin`: filled from piped standard input.
    pub stdin: Flag,
    /// `state`: host state, never read from a request.
    pub state: Flag,
    /// `method`: receives the name the command was called by.
    pub method: Flag,
    /// `context`: receives the call's `CallContext`.
    pub context: Flag,
    /// `secret`: the argument's value is a secret (an API key, a password).
    pub secret: Flag,
    /// `short = 'x'`: the short flag.
    pub short: Option<Spanned<char>>,
    /// `default = <expr>`: the value when the argument is missing.
    pub default: Option<Expr>,
    /// `default_text = "..."`: how help shows the default.
    pub default_text: Option<Spanned<String>>,
}

impl FieldOpts {
    fn read(field: &syn::Field, cx: &mut Ctxt) -> Self {
        let mut opts = FieldOpts {
            ident: field.ident.clone(),
            ty: field.ty.clone(),
            attrs: doc_and_serde(&field.attrs),
            serde: SerdeField::default(),
            positional: Flag::default(),
            stdin: Flag::default(),
            state: Flag::default(),
            method: Flag::default(),
            context: Flag::default(),
            secret: Flag::default(),
            short: None,
            default: None,
            default_text: None,
        };
        for entry in attr_entries(&field.attrs, "ipc", "positional", cx) {
            opts.read_entry(&entry, cx);
        }
        opts
    }

    fn read_entry(&mut self, entry: &Entry, cx: &mut Ctxt) {
        let Some(key) = entry.key::<FieldKey>(cx) else {
            return;
        };
        match key {
            FieldKey::Positional => self.positional = entry.flag(cx),
            FieldKey::Stdin => self.stdin = entry.flag(cx),
            FieldKey::State => self.state = entry.flag(cx),
            FieldKey::Method => self.method = entry.flag(cx),
            FieldKey::Context => self.context = entry.flag(cx),
            FieldKey::Secret => self.secret = entry.flag(cx),
            FieldKey::Short => {
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
                if let Some(short) = cx.handle(short) {
                    entry.once(&mut self.short, short, cx);
                }
            }
            FieldKey::Default => {
                if let Some(expr) = cx.handle(entry.parse::<Expr>("10")) {
                    entry.once(&mut self.default, expr, cx);
                }
            }
            FieldKey::DefaultText => {
                if let Some(text) = entry.string("\"10\"", cx) {
                    entry.once(&mut self.default_text, text, cx);
                }
            }
        }
    }
}

fn doc_and_serde(attrs: &[Attribute]) -> Vec<Attribute> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc") || a.path().is_ident("serde"))
        .cloned()
        .collect()
}

/// The text help shows for `#[ipc(default = expr)]`: a literal's value.
/// Any other expression's value is known only at run time, so it has no text
/// unless `default_text` gives one.
pub(super) fn literal_text(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Lit(lit) => Some(lit_text(&lit.lit)),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            Expr::Lit(lit) => Some(format!("-{}", lit_text(&lit.lit))),
            _ => None,
        },
        Expr::Group(group) => literal_text(&group.expr),
        _ => None,
    }
}

fn lit_text(lit: &syn::Lit) -> String {
    match lit {
        syn::Lit::Str(s) => s.value(),
        syn::Lit::Char(c) => c.value().to_string(),
        syn::Lit::Bool(b) => b.value.to_string(),
        syn::Lit::Int(i) => i.base10_digits().to_owned(),
        syn::Lit::Float(f) => f.base10_digits().to_owned(),
        other => quote::quote!(#other).to_string(),
    }
}
