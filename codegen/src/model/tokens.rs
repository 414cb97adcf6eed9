//! The schema as tokens: the `const` a derive emits, built from the same model
//! the scanner turns into a value, so the two never disagree.

use proc_macro2::TokenStream;
use quote::quote;

use super::command::{ArgModel, CommandModel};
use super::ty::KindSource;
use crate::schema::ValueKind;

/// An expression of type `ToolSchema` that can initialise a `const`.
pub fn schema_tokens(model: &CommandModel) -> TokenStream {
    let krate = &model.krate;
    let name = &model.name;
    let description = &model.description;
    let long_description = &model.long_description;
    let params = model.args().map(|(_, arg)| param_tokens(krate, arg));
    quote! {
        #krate::tool::ToolSchema::__from_static(
            #name,
            #description,
            #long_description,
            const { &[#(#params),*] },
            #krate::tool::ArgBinding::Typed,
        )
    }
}

fn param_tokens(krate: &syn::Path, arg: &ArgModel) -> TokenStream {
    let wire = &arg.wire;
    let long = &arg.long;
    let short = option_tokens(arg.short.map(|c| quote!(#c)));
    let aliases = arg
        .aliases
        .iter()
        .map(|a| quote!(#krate::__private::Cow::Borrowed(#a)));
    let kind = kind_tokens(krate, &arg.shape.kind);
    let repeatable = arg.shape.repeatable;
    let required = arg.required();
    let optional = arg.shape.optional;
    let default = option_tokens(arg.default_text.as_ref().map(|d| quote!(#d)));
    let description = &arg.description;
    let positional = option_tokens(arg.positional.map(|p| quote!(#p)));
    let stdin = arg.stdin;
    quote! {
        #krate::tool::ParamSchema::__from_static(
            #wire,
            #long,
            #short,
            const { &[#(#aliases),*] },
            #kind,
            #repeatable,
            #required,
            #optional,
            #default,
            #description,
            #positional,
            #stdin,
            ::core::option::Option::None,
        )
    }
}

/// The tokens of a value's kind: a literal kind, or `<T as ArgType>::KIND`.
pub fn kind_tokens(krate: &syn::Path, kind: &KindSource) -> TokenStream {
    match kind {
        KindSource::Known(kind) => value_kind_tokens(krate, kind),
        KindSource::Named(ty) => quote!(<#ty as #krate::tool::ArgType>::KIND),
    }
}

/// The tokens of a literal `ValueKind`.
pub fn value_kind_tokens(krate: &syn::Path, kind: &ValueKind) -> TokenStream {
    let variant = match kind {
        ValueKind::String => quote!(String),
        ValueKind::Int => quote!(Int),
        ValueKind::UInt => quote!(UInt),
        ValueKind::Float => quote!(Float),
        ValueKind::Bool => quote!(Bool),
        ValueKind::Bytes => quote!(Bytes),
        ValueKind::Path => quote!(Path),
        ValueKind::Json => quote!(Json),
        ValueKind::Count => quote!(Count),
        ValueKind::Enum(values) => {
            let values = values.iter().map(|v| {
                let v: &str = v;
                quote!(#krate::__private::Cow::Borrowed(#v))
            });
            return quote! {
                #krate::tool::ValueKind::Enum(#krate::__private::Cow::Borrowed(const { &[#(#values),*] }))
            };
        }
    };
    quote!(#krate::tool::ValueKind::#variant)
}

fn option_tokens(value: Option<TokenStream>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}
