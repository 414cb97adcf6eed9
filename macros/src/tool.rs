//! `#[tool]`: the struct, given clap's `Parser` derive (with byte fields
//! left to gangway and a long flag for every option), and an `impl Tool`
//! whose schema comes from the shared model.

use gangway_codegen::model::{Rejected, ToolField, ToolModel, tool_param_tokens};
use proc_macro2::TokenStream;
use quote::quote;
use syn::{ItemStruct, parse_quote};

/// Expands the attribute.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let item: ItemStruct = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(_) => {
            let what = match syn::parse2::<syn::Item>(item.clone()) {
                Ok(syn::Item::Enum(e)) => Some(e.enum_token.span),
                Ok(syn::Item::Union(u)) => Some(u.union_token.span),
                Ok(syn::Item::Fn(f)) => Some(f.sig.fn_token.span),
                _ => None,
            };
            let span = what.unwrap_or_else(proc_macro2::Span::call_site);
            let error = syn::Error::new(
                span,
                "`#[tool]` goes on a struct with named fields, written with clap's `#[arg(...)]`",
            )
            .to_compile_error();
            return quote! { #error #item };
        }
    };
    match ToolModel::from_item(args, &item) {
        Ok(model) => {
            let item = clap_item(&model, item);
            let tool = tool_impl(&model);
            quote! { #item #tool }
        }
        // Beside the errors, the struct and an impl naming the crate as the
        // user does, so code using the tool does not fail a second time.
        Err(Rejected { error, krate, .. }) => {
            let errors = error.write_errors();
            let item = without_clap_attributes(item);
            let ident = &item.ident;
            let (impl_generics, ty_generics, where_clause) = item.generics.split_for_impl();
            quote! {
                #errors
                #item
                impl #impl_generics #krate::tool::Tool for #ident #ty_generics #where_clause {
                    fn schema() -> &'static #krate::tool::ToolSchema {
                        ::core::unimplemented!()
                    }
                    fn bind(
                        _: &#krate::tool::ToolArgs,
                    ) -> ::core::result::Result<Self, #krate::tool::ToolBindError> {
                        ::core::unimplemented!()
                    }
                }
            }
        }
    }
}

/// The struct without clap's attributes, emitted beside errors: without the
/// `Parser` derive they would be unknown attributes, one more error each.
fn without_clap_attributes(mut item: ItemStruct) -> ItemStruct {
    let is_clap = |a: &syn::Attribute| {
        a.path().is_ident("arg") || a.path().is_ident("command") || a.path().is_ident("clap")
    };
    item.attrs.retain(|a| !is_clap(a));
    for field in item.fields.iter_mut() {
        field.attrs.retain(|a| !is_clap(a));
    }
    item
}

/// The struct as clap should see it.
fn clap_item(model: &ToolModel, mut item: ItemStruct) -> ItemStruct {
    let name = &model.name;
    let mut attrs: Vec<syn::Attribute> = vec![parse_quote!(#[derive(::clap::Parser)])];
    if !model.has_command_name {
        attrs.push(parse_quote!(#[command(name = #name)]));
    }
    attrs.append(&mut item.attrs);
    item.attrs = attrs;
    if let syn::Fields::Named(fields) = &mut item.fields {
        for field in fields.named.iter_mut() {
            let Some(model_field) = model
                .fields
                .iter()
                .find(|f| Some(&f.ident) == field.ident.as_ref())
            else {
                continue;
            };
            if model_field.bytes {
                // Binary never crosses the argv boundary: clap leaves the
                // field at its default and `bind` fills it raw.
                field
                    .attrs
                    .retain(|a| !(a.path().is_ident("arg") || a.path().is_ident("clap")));
                field.attrs.push(parse_quote!(#[arg(skip)]));
                continue;
            }
            if model_field.positional.is_none() {
                // The schema's long flag, written out, so clap and the
                // binder agree whatever `rename_all` or `id` say; the last
                // `long` wins in clap.
                let long = &model_field.long;
                field.attrs.push(parse_quote!(#[arg(long = #long)]));
            }
            if model_field.takes_several() {
                // `--near -1 2`: the words of a multi-word value are values.
                field
                    .attrs
                    .push(parse_quote!(#[arg(allow_hyphen_values = true)]));
            }
            if model_field.is_json() && !model_field.has_value_parser {
                let krate = &model.krate;
                field
                    .attrs
                    .push(parse_quote!(#[arg(value_parser = #krate::__private::parse_json_arg)]));
            }
        }
    }
    item
}

/// The inherent fn that builds the schema, and the `impl Tool`: one fn per
/// generated item.
fn tool_impl(model: &ToolModel) -> TokenStream {
    let krate = &model.krate;
    let ident = &model.ident;
    let build_schema = build_schema_fn(model);
    let schema = schema_fn(model);
    let bind = bind_fn(model);
    let help = help_fn(model);
    quote! {
        impl #ident {
            #build_schema
        }

        #[automatically_derived]
        impl #krate::tool::Tool for #ident {
            #schema

            #bind

            #help
        }
    }
}

/// `fn __gangway_tool_schema`: the schema built from the model's params.
fn build_schema_fn(model: &ToolModel) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    let name = &model.name;
    let description = &model.description;
    let long_description = &model.long_description;
    let binding = if model.verbatim {
        quote!(#krate::tool::ArgBinding::Verbatim)
    } else {
        quote!(#krate::tool::ArgBinding::Typed)
    };
    let params = model
        .fields
        .iter()
        .map(|field| tool_param_tokens(krate, field));
    quote! {
        /// Builds the schema `Tool::schema` keeps; in an inherent `fn`, so
        /// a default such as `Self::LIMIT` means what it means to clap.
        #[doc(hidden)]
        fn __gangway_tool_schema() -> #krate::tool::ToolSchema {
            #[allow(unused_imports)]
            use #private::{
                DefaultViaDisplay as _, DefaultViaValueEnum as _, ViaArgType as _, ViaText as _,
                ViaValueEnum as _,
            };
            let mut __schema = #krate::tool::ToolSchema::new(#name)
                .with_description(#description)
                .with_long_description(#long_description)
                .with_binding(#binding);
            #(__schema = __schema.with_param(#params);)*
            __schema
        }
    }
}

/// `fn schema`: the schema, built once.
fn schema_fn(model: &ToolModel) -> TokenStream {
    let krate = &model.krate;
    let ident = &model.ident;
    quote! {
        fn schema() -> &'static #krate::tool::ToolSchema {
            static __GANGWAY_SCHEMA: ::std::sync::LazyLock<#krate::tool::ToolSchema> =
                ::std::sync::LazyLock::new(#ident::__gangway_tool_schema);
            &__GANGWAY_SCHEMA
        }
    }
}

/// `fn bind`: clap binds all but the byte fields, which are filled raw.
fn bind_fn(model: &ToolModel) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    let byte_keys: Vec<&str> = model
        .fields
        .iter()
        .filter(|f| f.bytes)
        .map(|f| f.name.as_str())
        .collect();
    let byte_fills = model
        .fields
        .iter()
        .filter(|f| f.bytes)
        .map(|field| byte_fill(model, field));
    quote! {
        fn bind(
            __args: &#krate::tool::ToolArgs,
        ) -> ::core::result::Result<Self, #krate::tool::ToolBindError> {
            #[allow(unused_mut)]
            let mut __tool: Self = #private::bind_with_clap::<Self>(
                __args,
                <Self as #krate::tool::Tool>::schema(),
                &[#(#byte_keys),*],
            )?;
            #(#byte_fills)*
            ::core::result::Result::Ok(__tool)
        }
    }
}

/// The statements of `bind` that fill one byte field from the raw
/// arguments.
fn byte_fill(model: &ToolModel, field: &ToolField) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    let member = &field.ident;
    let key = &field.name;
    let slot = match field.positional {
        Some(index) => {
            let index = usize::from(index);
            quote!(::core::option::Option::Some(#index))
        }
        None => quote!(::core::option::Option::None),
    };
    let shown = if field.positional.is_some() {
        format!("<{}>", field.long)
    } else {
        format!("--{}", field.long)
    };
    let fill = if field.shape.optional {
        quote!(__bytes.map(::core::convert::Into::into))
    } else if field.required {
        quote! {
            match __bytes {
                ::core::option::Option::Some(__b) => ::core::convert::Into::into(__b),
                ::core::option::Option::None => {
                    return ::core::result::Result::Err(#private::missing_bytes(#shown));
                }
            }
        }
    } else {
        quote! {
            match __bytes {
                ::core::option::Option::Some(__b) => ::core::convert::Into::into(__b),
                ::core::option::Option::None => ::core::default::Default::default(),
            }
        }
    };
    quote! {
        let __bytes = #private::tool_bytes(__args, #key, #slot)?;
        __tool.#member = #fill;
    }
}

/// `fn help`: the tool's help, from its schema.
fn help_fn(model: &ToolModel) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    quote! {
        fn help() -> ::std::string::String {
            #private::tool_help::<Self>(<Self as #krate::tool::Tool>::schema())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tokens::idents;

    #[test]
    fn a_placeholder_impl_names_the_renamed_crate() {
        // The mistake comes first: the keys after it are still read.
        for args in [
            quote!(nmae = "grep", crate = gw),
            quote!(name = 5, crate = gw),
            quote!(crate = gw, verbatim),
        ] {
            let item = quote! {
                struct Grep<T> {
                    #[arg(long)]
                    pattern: T,
                }
            };
            let seen = idents(expand(args.clone(), item));
            assert!(
                seen.iter().any(|i| i == "compile_error"),
                "{args}: {seen:?}"
            );
            assert!(seen.iter().any(|i| i == "gw"), "{args}: {seen:?}");
            assert!(!seen.iter().any(|i| i == "gangway"), "{args}: {seen:?}");
        }
    }
}
