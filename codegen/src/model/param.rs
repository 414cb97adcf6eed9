//! One parameter as a model resolved it, and the one place a
//! [`ParamSchema`] is made from it: as a value (the scanner's manifest), or
//! as the expression a macro emits (a `const` for `#[derive(IpcCommand)]`,
//! run once for `#[tool]`). Both models describe their parameters as a
//! [`ParamSpec`], so the three never disagree on a field.

use proc_macro2::TokenStream;
use quote::quote;

use crate::schema::{ParamSchema, ValueCount, ValueKind};

/// Everything a parameter's schema holds but its kind and default, which a
/// macro may know only as code.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec<'a> {
    /// The key on the wire.
    pub name: &'a str,
    /// The long flag, without `--`.
    pub long: &'a str,
    /// The short flag.
    pub short: Option<char>,
    /// Other accepted names.
    pub aliases: &'a [String],
    /// A list of values.
    pub repeatable: bool,
    /// A call must give it.
    pub required: bool,
    /// The value may be absent (`Option<T>`).
    pub optional: bool,
    /// One paragraph saying what it is for.
    pub description: &'a str,
    /// Position among the positionals.
    pub positional: Option<u16>,
    /// Piped standard input fills it.
    pub stdin: bool,
    /// Words one occurrence takes, when not one.
    pub consumes: Option<ValueCount>,
    /// Left out of help and JSON Schema.
    pub hidden: bool,
    /// A secret, kept out of messages and records.
    pub secret: bool,
}

impl ParamSpec<'_> {
    /// The schema as a value.
    pub fn schema(&self, kind: ValueKind, default: Option<&str>) -> ParamSchema {
        let mut param = ParamSchema::new(self.name.to_owned(), kind)
            .long(self.long.to_owned())
            .description(self.description.to_owned());
        param.short = self.short;
        param.aliases = self
            .aliases
            .iter()
            .cloned()
            .map(Into::into)
            .collect::<Vec<_>>()
            .into();
        param.repeatable = self.repeatable;
        param.required = self.required;
        param.optional = self.optional;
        param.default = default.map(|text| text.to_owned().into());
        param.positional = self.positional;
        param.stdin = self.stdin;
        param.consumes = self.consumes;
        param.hidden = self.hidden;
        param.secret = self.secret;
        param
    }

    /// The expression building the schema, given the tokens of its kind (a
    /// `ValueKind`) and of its default (an `Option<Cow<'static, str>>`); a
    /// constant expression when those two are.
    pub fn tokens(
        &self,
        krate: &syn::Path,
        kind: TokenStream,
        default: TokenStream,
    ) -> TokenStream {
        let cow = quote!(#krate::__private::Cow);
        let ParamSpec {
            name,
            long,
            short,
            aliases,
            repeatable,
            required,
            optional,
            description,
            positional,
            stdin,
            consumes,
            hidden,
            secret,
        } = *self;
        let short = option_tokens(short.map(|c| quote!(#c)));
        let positional = option_tokens(positional.map(|p| quote!(#p)));
        let consumes = option_tokens(consumes.map(|count| {
            let min = count.min;
            let max = option_tokens(count.max.map(|max| quote!(#max)));
            quote!(#krate::tool::ValueCount { min: #min, max: #max })
        }));
        quote! {
            #krate::tool::ParamSchema::__from_static(
                #name,
                #long,
                #short,
                const { &[#(#cow::Borrowed(#aliases)),*] },
                #kind,
                #repeatable,
                #required,
                #optional,
                #default,
                #description,
                #positional,
                #stdin,
                #consumes,
                #hidden,
                #secret,
            )
        }
    }
}

/// `Some(value)` or `None`, by absolute path.
pub(super) fn option_tokens(value: Option<TokenStream>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}
