//! `#[derive(ArgEnum)]`: an enum's serde names as the values an argument of
//! that type accepts, through `ArgType::KIND`.

use gangway_codegen::model::{ArgEnumModel, Rejected, value_kind_tokens};
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
        // Beside the errors, an impl naming the crate as the user does, so
        // code using the type does not fail a second time.
        Err(Rejected { error, krate, .. }) => {
            let errors = error.write_errors();
            let ident = &input.ident;
            let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
            quote! {
                #errors
                #[automatically_derived]
                impl #impl_generics #krate::tool::ArgType for #ident #ty_generics #where_clause {
                    const KIND: #krate::tool::ValueKind = #krate::tool::ValueKind::String;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tokens::idents;
    use syn::parse_quote;

    #[test]
    fn a_placeholder_impl_names_the_renamed_crate() {
        let inputs: [DeriveInput; 3] = [
            parse_quote! {
                #[arg_enum(crate = gw)]
                enum Shape { Circle(f64), Dot }
            },
            parse_quote! {
                #[arg_enum(krate = x, crate = gw)]
                enum Shape { Dot }
            },
            parse_quote! {
                #[arg_enum(crate = gw)]
                struct NotAnEnum;
            },
        ];
        for input in inputs {
            let seen = idents(expand(&input));
            assert!(seen.iter().any(|i| i == "compile_error"), "{seen:?}");
            assert!(seen.iter().any(|i| i == "gw"), "{seen:?}");
            assert!(!seen.iter().any(|i| i == "gangway"), "{seen:?}");
        }
    }
}
