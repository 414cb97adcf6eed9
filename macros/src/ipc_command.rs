//! `#[derive(IpcCommand)]`: the model (shared with the scanner) turned into
//! an `impl IpcCommand`, or, when the struct is refused, its errors beside a
//! dummy impl so the user sees those errors and not a cascade.

use gangway_codegen::model::{
    ArgModel, ByteResponse, CommandModel, Decode, KindSource, Rejected, byte_response,
    is_input_stream, schema_tokens,
};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{DeriveInput, Generics, Type, parse_quote};

mod apply_args;

use apply_args::apply_args_body;

/// Expands the derive.
pub fn expand(input: &DeriveInput) -> TokenStream {
    match CommandModel::from_derive_input(input) {
        // serde reports the error; a placeholder keeps uses of the command quiet.
        Ok(model) if model.serde_reports_error => dummy_impl(input, &model.krate, Some(&model)),
        Ok(model) => command_impl(&model),
        Err(Rejected {
            error,
            krate,
            partial,
        }) => {
            let errors = error.write_errors();
            let dummy = dummy_impl(input, &krate, partial.as_deref());
            quote! { #errors #dummy }
        }
    }
}

/// The `impl IpcCommand` of an accepted struct: one fn per generated item.
fn command_impl(model: &CommandModel) -> TokenStream {
    let krate = &model.krate;
    let ident = &model.ident;
    let generics = bounded_generics(model);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let response = &model.response;
    let name = name_fn(model);
    let handle = handle_fn(model);
    let apply_args = apply_args_fn(model);
    let positional_args = positional_args_fn(model);
    let stdin_arg = stdin_arg_fn(model);
    let set_method_name = set_method_name_fn(model);
    let set_context = set_context_fn(model);
    let streams_stdin = streamed_stdin(model).map(|_| quote! { const STREAMS_STDIN: bool = true; });
    let timeout = timeout_const(model);
    let schema = schema_tokens(model);
    let response_json_schema = model.output_schema.then(|| response_json_schema_fn(model));
    let reply_json = model.output_schema.then(|| reply_json_fn(model));
    let encode_reply = encode_reply_fn(model);
    let decode_reply = decode_reply_fn(model);

    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::ipc::IpcCommand for #ident #ty_generics #where_clause {
            type Response = #response;

            #name

            #handle

            #apply_args

            #positional_args

            #stdin_arg

            #set_method_name

            #set_context

            #streams_stdin

            #timeout

            const SCHEMA: ::core::option::Option<&'static #krate::tool::ToolSchema> =
                ::core::option::Option::Some(&#schema);

            #response_json_schema

            #reply_json

            #encode_reply

            #decode_reply
        }
    }
}

/// `fn name`: the `#[ipc(method)]` field when set, else the command's name.
fn name_fn(model: &CommandModel) -> TokenStream {
    let name = &model.name;
    let name_body = match model.method_field() {
        Some(field) => quote! {
            if !self.#field.is_empty() {
                return ::core::clone::Clone::clone(&self.#field);
            }
            <::std::string::String as ::core::convert::From<&str>>::from(#name)
        },
        None => quote!(<::std::string::String as ::core::convert::From<&str>>::from(#name)),
    };
    quote! {
        fn name(&self) -> ::std::string::String {
            #name_body
        }
    }
}

/// `fn set_method_name`, for a struct with an `#[ipc(method)]` field.
fn set_method_name_fn(model: &CommandModel) -> Option<TokenStream> {
    let field = model.method_field()?;
    Some(quote! {
        fn set_method_name(&mut self, __gangway_name: &str) {
            self.#field.clear();
            self.#field.push_str(__gangway_name);
        }
    })
}

/// `fn handle`: calls the inherent handler.
fn handle_fn(model: &CommandModel) -> TokenStream {
    let handle_body = handle_body(model);
    quote! {
        fn handle(
            &mut self,
        ) -> impl ::core::future::Future<Output = Self::Response> + ::core::marker::Send {
            #handle_body
        }
    }
}

/// `fn apply_args`: see [`apply_args_body`].
fn apply_args_fn(model: &CommandModel) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    let apply_body = apply_args_body(model);
    quote! {
        fn apply_args(
            &mut self,
            __gangway_params: &[u8],
        ) -> ::core::result::Result<(), #private::DecodeError> {
            #apply_body
        }
    }
}

/// `fn positional_args`: the wire names of the positionals, in order.
fn positional_args_fn(model: &CommandModel) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    let mut positionals: Vec<&ArgModel> = model
        .args()
        .map(|(_, a)| a)
        .filter(|a| a.positional.is_some())
        .collect();
    positionals.sort_by_key(|a| a.positional);
    let positional_names = positionals.iter().map(|a| &a.wire);
    quote! {
        fn positional_args(&self) -> #private::Cow<'static, [#private::Cow<'static, str>]> {
            #private::Cow::Borrowed(&[#(#private::Cow::Borrowed(#positional_names)),*])
        }
    }
}

/// `fn stdin_arg`, for a struct with an `#[ipc(stdin)]` argument.
fn stdin_arg_fn(model: &CommandModel) -> Option<TokenStream> {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    model.args().find(|(_, a)| a.stdin).map(|(_, arg)| {
        let wire = &arg.wire;
        quote! {
            fn stdin_arg(&self) -> ::core::option::Option<#private::Cow<'static, str>> {
                ::core::option::Option::Some(#private::Cow::Borrowed(#wire))
            }
        }
    })
}

/// The stdin argument of type `InputStream`, which takes the caller's live
/// input.
fn streamed_stdin(model: &CommandModel) -> Option<&Ident> {
    model
        .args()
        .find(|(field, arg)| arg.stdin && is_input_stream(&field.ty))
        .map(|(field, _)| &field.ident)
}

/// `fn set_context`, for a struct with a streamed stdin or a context field.
fn set_context_fn(model: &CommandModel) -> Option<TokenStream> {
    let krate = &model.krate;
    let take_input = streamed_stdin(model).map(|field| {
        quote! {
            if let ::core::option::Option::Some(__gangway_input) = __gangway_context.take_input() {
                self.#field = __gangway_input;
            }
        }
    });
    let assign_context = model.context_field().map(|field| {
        // Spanned on the field's type: a field of another type is reported
        // there, as needing to be a `CallContext`.
        let ty = model
            .fields
            .iter()
            .find(|f| &f.ident == field)
            .map(|f| &f.ty);
        let span = ty.map_or_else(Span::call_site, syn::spanned::Spanned::span);
        quote_spanned! {span=>
            self.#field = __gangway_context;
        }
    });
    (take_input.is_some() || assign_context.is_some()).then(|| {
        quote! {
            fn set_context(&mut self, __gangway_context: #krate::ipc::CallContext) {
                #take_input
                #assign_context
            }
        }
    })
}

/// `const TIMEOUT`, for a struct with `#[ipc(timeout = "...")]`.
fn timeout_const(model: &CommandModel) -> Option<TokenStream> {
    model.timeout_ms.map(|ms| {
        quote! {
            const TIMEOUT: ::core::option::Option<::core::time::Duration> =
                ::core::option::Option::Some(::core::time::Duration::from_millis(#ms));
        }
    })
}

/// `fn response_json_schema`. Spanned on the response type: a type with no
/// JSON Schema (or gangway without `mcp`) is reported there.
fn response_json_schema_fn(model: &CommandModel) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    let response_span = syn::spanned::Spanned::span(&model.response);
    quote_spanned! {response_span=>
        fn response_json_schema() -> ::core::option::Option<#private::serde_json::Value> {
            #[allow(unused_imports)]
            use #private::{PlainSchema as _, ResultSchema as _};
            ::core::option::Option::Some(
                #private::SchemaProbe::<Self::Response>::new().response_json_schema(),
            )
        }
    }
}

/// `fn reply_json`, spanned on the response type as
/// [`response_json_schema_fn`] is.
fn reply_json_fn(model: &CommandModel) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    let response_span = syn::spanned::Spanned::span(&model.response);
    quote_spanned! {response_span=>
        fn reply_json(
            __gangway_payload: &[u8],
        ) -> ::core::option::Option<
            ::core::result::Result<#private::serde_json::Value, ::std::string::String>,
        > {
            #[allow(unused_imports)]
            use #private::{PlainJson as _, ResultJson as _};
            let __gangway_reply = #krate::ipc::Reply::Success(__gangway_payload.to_vec());
            ::core::option::Option::Some(
                match <Self as #krate::ipc::IpcCommand>::decode_reply(&__gangway_reply) {
                    ::core::result::Result::Ok(__gangway_response) => {
                        #private::JsonProbe(&__gangway_response).success_json()
                    }
                    ::core::result::Result::Err(__gangway_error) => {
                        ::core::result::Result::Err(::std::string::ToString::to_string(
                            &__gangway_error,
                        ))
                    }
                },
            )
        }
    }
}

/// Whether the response is raw bytes, which travel as MessagePack `bin`, so
/// a client prints them byte for byte rather than as an array of numbers.
fn bytes_reply(model: &CommandModel) -> bool {
    matches!(
        byte_response(&model.response),
        Some(ByteResponse::Whole | ByteResponse::InResult)
    )
}

/// `fn encode_reply`. The call is spanned on the response type, so a
/// `Result` whose error cannot be shown is reported there.
fn encode_reply_fn(model: &CommandModel) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    let response_span = syn::spanned::Spanned::span(&model.response);
    let encode_call = if bytes_reply(model) {
        quote_spanned! {response_span=>
            #private::BytesReply::encode_bytes_reply(__gangway_response)
        }
    } else {
        quote_spanned! {response_span=>
            #private::ReplyProbe::<Self::Response>::new().encode_reply(__gangway_response)
        }
    };
    quote! {
        fn encode_reply(
            __gangway_response: &Self::Response,
        ) -> ::core::result::Result<#krate::ipc::Reply, #private::EncodeError> {
            #[allow(unused_imports)]
            use #private::{PlainReply as _, ResultReply as _};
            #encode_call
        }
    }
}

/// `fn decode_reply`, its call spanned as [`encode_reply_fn`]'s is.
fn decode_reply_fn(model: &CommandModel) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    let response_span = syn::spanned::Spanned::span(&model.response);
    let decode_call = if bytes_reply(model) {
        quote_spanned! {response_span=>
            <Self::Response as #private::BytesReply>::decode_bytes_reply(__gangway_reply)
        }
    } else {
        quote_spanned! {response_span=>
            #private::ReplyProbe::<Self::Response>::new().decode_reply(__gangway_reply)
        }
    };
    quote! {
        fn decode_reply(
            __gangway_reply: &#krate::ipc::Reply,
        ) -> ::core::result::Result<Self::Response, #private::DecodeError> {
            #[allow(unused_imports)]
            use #private::{PlainReply as _, ResultReply as _};
            #decode_call
        }
    }
}

/// Calls the inherent handler. For the default `handle`, a fallback trait
/// with a method of the same name makes a missing inherent method an error
/// that names what to write, instead of a silent call of the trait method
/// itself.
fn handle_body(model: &CommandModel) -> TokenStream {
    let handler = &model.handler;
    let span = handler.span();
    if handler != "handle" {
        return quote_spanned!(span=> Self::#handler(self));
    }
    quote_spanned! {span=>
        #[allow(non_camel_case_types, dead_code)]
        trait define_an_inherent_async_fn_handle_or_name_one_with_ipc_handler {
            fn handle(&mut self) {}
        }
        #[allow(non_camel_case_types, dead_code)]
        impl<T: ?::core::marker::Sized> define_an_inherent_async_fn_handle_or_name_one_with_ipc_handler for T {}
        Self::#handler(self)
    }
}

/// The struct's generics plus the bounds the impl needs: those of
/// [`trait_generics`], then, for argument types built from a type parameter,
/// that they can be decoded and described; then the user's
/// `#[ipc(bound = "...")]`.
fn bounded_generics(model: &CommandModel) -> Generics {
    let mut generics = trait_generics(&model.generics, &model.ident, &model.krate, &model.response);
    let params: Vec<Ident> = model
        .generics
        .type_params()
        .map(|p| p.ident.clone())
        .collect();
    let krate = &model.krate;
    let serde = quote!(#krate::__private::serde);
    let mut predicates: Vec<syn::WherePredicate> = Vec::new();
    for (field, arg) in model.args() {
        if params.is_empty() || !mentions_any(&field.ty, &params) {
            continue;
        }
        if arg.deserialize_with.is_none() && arg.shape.decode == Decode::Plain {
            let ty = &field.ty;
            predicates.push(parse_quote!(#ty: #serde::de::DeserializeOwned));
        }
        if let KindSource::Named(element) = &arg.shape.kind {
            predicates.push(parse_quote!(#element: #krate::tool::ArgType));
        }
    }
    predicates.extend(model.bound.iter().cloned());
    if !predicates.is_empty() {
        generics.make_where_clause().predicates.extend(predicates);
    }
    generics
}

/// The generics plus what the trait itself demands of a generic command:
/// each type parameter is `Send + 'static` (a registered command is shared
/// across threads), and `Self` and the response meet the trait's bounds.
/// Nothing is added to a struct without generics.
fn trait_generics(
    generics: &Generics,
    ident: &Ident,
    krate: &syn::Path,
    response: &Type,
) -> Generics {
    let mut generics = generics.clone();
    if generics.params.is_empty() {
        return generics;
    }
    let serde = quote!(#krate::__private::serde);
    let (_, ty_generics, _) = generics.split_for_impl();
    let mut predicates: Vec<syn::WherePredicate> = generics
        .type_params()
        .map(|param| -> syn::WherePredicate {
            let param = &param.ident;
            parse_quote!(#param: ::core::marker::Send + 'static)
        })
        .collect();
    predicates.push(
        parse_quote!(#ident #ty_generics: #serde::Serialize + ::core::marker::Send + 'static),
    );
    predicates.push(parse_quote!(
        #response: #serde::Serialize + #serde::de::DeserializeOwned + ::core::marker::Send
    ));
    generics.make_where_clause().predicates.extend(predicates);
    generics
}

fn mentions_any(ty: &Type, params: &[Ident]) -> bool {
    fn walk(tokens: TokenStream, params: &[Ident]) -> bool {
        tokens.into_iter().any(|tree| match tree {
            proc_macro2::TokenTree::Ident(ident) => params.contains(&ident),
            proc_macro2::TokenTree::Group(group) => walk(group.stream(), params),
            _ => false,
        })
    }
    walk(quote!(#ty), params)
}

/// An impl that satisfies the trait without doing anything, emitted beside
/// the errors so code using the command does not fail a second time. None
/// for a union, which serde cannot serialize, so the impl would be one more
/// error.
///
/// When serde's own derive reports an error in the struct's serde
/// attributes, it emits no `Serialize` impl, and `IpcCommand` needs one: a
/// placeholder `Serialize` comes too, so serde's error stands alone.
fn dummy_impl(
    input: &DeriveInput,
    krate: &syn::Path,
    partial: Option<&CommandModel>,
) -> TokenStream {
    if matches!(input.data, syn::Data::Union(_)) {
        return TokenStream::new();
    }
    let response: Type = partial.map_or_else(|| parse_quote!(()), |m| m.response.clone());
    let ident = &input.ident;
    let generics = trait_generics(&input.generics, ident, krate, &response);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let span = Span::call_site();
    let serialize = if partial.is_some_and(|m| m.serde_reports_error) {
        dummy_serialize(input, krate)
    } else {
        TokenStream::new()
    };
    quote_spanned! {span=>
        #serialize
        #[automatically_derived]
        #[allow(unreachable_code, unused_variables)]
        impl #impl_generics #krate::ipc::IpcCommand for #ident #ty_generics #where_clause {
            type Response = #response;
            fn name(&self) -> ::std::string::String {
                ::core::unimplemented!()
            }
            fn handle(
                &mut self,
            ) -> impl ::core::future::Future<Output = Self::Response> + ::core::marker::Send {
                async { ::core::unimplemented!() }
            }
            fn apply_args(
                &mut self,
                __gangway_params: &[u8],
            ) -> ::core::result::Result<(), #krate::__private::DecodeError> {
                ::core::unimplemented!()
            }
        }
    }
}

/// A `Serialize` that does nothing, standing in for the one serde's derive
/// did not emit because it reported an error.
fn dummy_serialize(input: &DeriveInput, krate: &syn::Path) -> TokenStream {
    let serde = quote!(#krate::__private::serde);
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let span = Span::call_site();
    quote_spanned! {span=>
        #[automatically_derived]
        #[allow(unreachable_code, unused_variables)]
        impl #impl_generics #serde::Serialize for #ident #ty_generics #where_clause {
            fn serialize<__GangwayS: #serde::Serializer>(
                &self,
                __gangway_serializer: __GangwayS,
            ) -> ::core::result::Result<__GangwayS::Ok, __GangwayS::Error> {
                ::core::unimplemented!()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_tokens::idents;

    #[test]
    fn a_renamed_crate_is_the_only_path_used() {
        let input: DeriveInput = parse_quote! {
            /// Docs.
            #[ipc(crate = gw, response = gw::ipc::CommandResult<u8>)]
            struct Tiny<T: Clone> {
                #[ipc(positional)]
                n: u8,
                #[ipc(stdin)]
                data: Option<Vec<u8>>,
                #[serde(default = "gw_default")]
                label: String,
                extra: Option<T>,
                #[ipc(method)]
                #[serde(skip)]
                method: String,
            }
        };
        let seen = idents(expand(&input));
        assert!(seen.iter().any(|i| i == "gw"), "the renamed path is used");
        assert!(
            !seen.iter().any(|i| i == "gangway"),
            "no hard-coded `gangway` path: {seen:?}"
        );
    }

    #[test]
    fn a_placeholder_impl_names_the_renamed_crate() {
        let inputs: [DeriveInput; 2] = [
            parse_quote! {
                #[ipc(crate = gw, nmae = "x", response = u8)]
                struct Broken { value: u8 }
            },
            parse_quote! {
                #[ipc(crate = gw, response = u8)]
                enum NotAStruct { A }
            },
        ];
        for input in inputs {
            let seen = idents(expand(&input));
            assert!(seen.iter().any(|i| i == "compile_error"), "{seen:?}");
            assert!(seen.iter().any(|i| i == "gw"), "{seen:?}");
            assert!(!seen.iter().any(|i| i == "gangway"), "{seen:?}");
        }
    }

    #[test]
    fn errors_come_with_a_placeholder_impl() {
        let input: DeriveInput = parse_quote! {
            #[ipc(nmae = "x", response = u8)]
            struct Broken<T> { value: T }
        };
        let output = expand(&input).to_string();
        assert!(output.contains("compile_error"), "{output}");
        assert!(output.contains("IpcCommand for Broken"), "{output}");
        assert!(
            output.contains("Send + 'static"),
            "the placeholder has the trait's bounds: {output}"
        );
        assert!(
            !output.contains("Serialize for Broken"),
            "serde's derive still serializes it: {output}"
        );
    }

    #[test]
    fn a_serde_error_brings_a_placeholder_serialize() {
        let input: DeriveInput = parse_quote! {
            #[serde(rename_all = "kebabcase")]
            #[ipc(response = u8)]
            struct Search { max_results: u32 }
        };
        let output = expand(&input).to_string();
        assert!(
            !output.contains("compile_error"),
            "serde reports the error: {output}"
        );
        assert!(output.contains("IpcCommand for Search"), "{output}");
        assert!(
            output.contains("Serialize for Search"),
            "serde's derive emits no impl, and the trait needs one: {output}"
        );
    }
}
