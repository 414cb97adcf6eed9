//! The schema as tokens: the `const` a derive emits, built from the same model
//! the scanner turns into a value, so the two never disagree, and the
//! expression `#[tool]` evaluates once; every parameter through
//! `ParamSpec`.

use proc_macro2::TokenStream;
use quote::quote;

use super::clap_attr::ToolDefault;
use super::command::{ArgModel, CommandModel};
use super::param::option_tokens;
use super::tool::ToolField;
use super::ty::KindSource;
use crate::schema::{Annotations, ValueKind};

/// An expression of type `ToolSchema` that can initialise a `const`.
pub fn schema_tokens(model: &CommandModel) -> TokenStream {
    let krate = &model.krate;
    let name = &model.name;
    let description = &model.description;
    let long_description = &model.long_description;
    let params = model.args().map(|(_, arg)| param_tokens(krate, arg));
    let Annotations {
        read_only,
        destructive,
        idempotent,
        open_world,
        ..
    } = model.annotations;
    quote! {
        #krate::tool::ToolSchema::__from_static(
            #name,
            #description,
            #long_description,
            const { &[#(#params),*] },
            #krate::tool::ArgBinding::Typed,
            #krate::tool::Annotations::__from_static(
                #read_only,
                #destructive,
                #idempotent,
                #open_world,
            ),
        )
    }
}

/// The expression of one argument's schema: a constant one, since a
/// derive knows the default's text when it has one.
fn param_tokens(krate: &syn::Path, arg: &ArgModel) -> TokenStream {
    let kind = kind_tokens(krate, &arg.shape.kind);
    let default = option_tokens(
        arg.default_text
            .as_ref()
            .map(|text| quote!(#krate::__private::Cow::Borrowed(#text))),
    );
    arg.param().tokens(krate, kind, default)
}

/// The expression of one `#[tool]` parameter's schema, evaluated once at
/// run time: clap's own traits decide the kind of a type the syntax does
/// not tell, and the text of a default computed by code.
pub fn tool_param_tokens(krate: &syn::Path, field: &ToolField) -> TokenStream {
    let private = quote!(#krate::__private);
    let kind = match (field.known_kind(), field.element_type()) {
        (Some(kind), _) => value_kind_tokens(krate, &kind),
        (None, Some(ty)) => quote!((&&#private::KindProbe::<#ty>::new()).kind()),
        (None, None) => value_kind_tokens(krate, &ValueKind::String),
    };
    let element: &syn::Type = field.element_type().unwrap_or(&field.ty);
    let default = match &field.default {
        ToolDefault::None | ToolDefault::Unknown => option_tokens(None),
        ToolDefault::Text(text) => option_tokens(Some(quote!(#private::Cow::Borrowed(#text)))),
        ToolDefault::Expr(expr) => quote!({
            let __default: #element = #expr;
            (&&#private::DefaultText(&__default)).text()
        }),
        ToolDefault::TypeDefault => quote!({
            let __default: #element = ::core::default::Default::default();
            (&&#private::DefaultText(&__default)).text()
        }),
    };
    field.param().tokens(krate, kind, default)
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
