//! `#[derive(ArgEnum)]`: an enum's serde names as the values an argument of
//! that type accepts, through `ArgType::KIND`.

use gangway_codegen::model::{ArgEnumModel, value_kind_tokens};
use gangway_codegen::schema::ValueKind;
use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

/// Expands the derive.
pub fn expand(input: &DeriveInput) -> TokenStream {
    match ArgEnumModel::from_derive_input(input) {
        Ok(model) => {
            let krate = &model.krate;
            let ident = &model.ident;
            let (impl_generics, ty_generics, where_clause) = model.generics.split_for_impl();
            let values = model
                .values
                .iter()
                .cloned()
                .map(Into::into)
                .collect::<Vec<_>>();
            let kind = value_kind_tokens(krate, &ValueKind::Enum(values.into()));
            quote! {
                #[automatically_derived]
                impl #impl_generics #krate::tool::ArgType for #ident #ty_generics #where_clause {
                    const KIND: #krate::tool::ValueKind = #kind;
                }
            }
        }
        Err(error) => {
            let errors = error.write_errors();
            let ident = &input.ident;
            let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
            quote! {
                #errors
                #[automatically_derived]
                impl #impl_generics ::gangway::tool::ArgType for #ident #ty_generics #where_clause {
                    const KIND: ::gangway::tool::ValueKind = ::gangway::tool::ValueKind::String;
                }
            }
        }
    }
}
