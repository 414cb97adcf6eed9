//! `#[derive(IpcCommand)]`: the model (shared with the scanner) turned into
//! an `impl IpcCommand`, or, when the struct is refused, its errors beside a
//! dummy impl so the user sees those errors and not a cascade.

use gangway_codegen::model::{
    ArgModel, ByteResponse, CommandModel, Decode, FieldModel, KindSource, Missing, Rejected,
    SerdeDefault, byte_response, is_input_stream, schema_tokens,
};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{DeriveInput, Expr, Generics, Type, parse_quote};

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

fn command_impl(model: &CommandModel) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    let ident = &model.ident;
    let generics = bounded_generics(model);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let response = &model.response;

    let name = &model.name;
    let (name_body, set_method_name) = match model.method_field() {
        Some(field) => (
            quote! {
                if !self.#field.is_empty() {
                    return ::core::clone::Clone::clone(&self.#field);
                }
                <::std::string::String as ::core::convert::From<&str>>::from(#name)
            },
            quote! {
                fn set_method_name(&mut self, __gangway_name: &str) {
                    self.#field.clear();
                    self.#field.push_str(__gangway_name);
                }
            },
        ),
        None => (
            quote!(<::std::string::String as ::core::convert::From<&str>>::from(#name)),
            TokenStream::new(),
        ),
    };

    let mut positionals: Vec<&ArgModel> = model
        .args()
        .map(|(_, a)| a)
        .filter(|a| a.positional.is_some())
        .collect();
    positionals.sort_by_key(|a| a.positional);
    let positional_names = positionals.iter().map(|a| &a.wire);
    let stdin_arg = model.args().find(|(_, a)| a.stdin).map(|(_, arg)| {
        let wire = &arg.wire;
        quote! {
            fn stdin_arg(&self) -> ::core::option::Option<#private::Cow<'static, str>> {
                ::core::option::Option::Some(#private::Cow::Borrowed(#wire))
            }
        }
    });

    let handle_body = handle_body(model);
    // Spanned on the response type, so a `Result` whose error cannot be shown
    // is reported there.
    let response_span = syn::spanned::Spanned::span(response);
    let (encode_call, decode_call) = match byte_response(response) {
        // Raw bytes travel as MessagePack `bin`, so a client prints them
        // byte for byte rather than as an array of numbers.
        Some(ByteResponse::Whole | ByteResponse::InResult) => (
            quote_spanned! {response_span=>
                #private::BytesReply::encode_bytes_reply(__gangway_response)
            },
            quote_spanned! {response_span=>
                <Self::Response as #private::BytesReply>::decode_bytes_reply(__gangway_reply)
            },
        ),
        None => (
            quote_spanned! {response_span=>
                #private::ReplyProbe::<Self::Response>::new().encode_reply(__gangway_response)
            },
            quote_spanned! {response_span=>
                #private::ReplyProbe::<Self::Response>::new().decode_reply(__gangway_reply)
            },
        ),
    };
    let apply_body = apply_args_body(model);
    // A stdin argument of type `InputStream` takes the caller's live input.
    let streamed_stdin = model
        .args()
        .find(|(field, arg)| arg.stdin && is_input_stream(&field.ty))
        .map(|(field, _)| &field.ident);
    let take_input = streamed_stdin.map(|field| {
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
    let set_context = (take_input.is_some() || assign_context.is_some()).then(|| {
        quote! {
            fn set_context(&mut self, __gangway_context: #krate::ipc::CallContext) {
                #take_input
                #assign_context
            }
        }
    });
    let streams_stdin = streamed_stdin.map(|_| quote! { const STREAMS_STDIN: bool = true; });
    let timeout = model.timeout_ms.map(|ms| {
        quote! {
            const TIMEOUT: ::core::option::Option<::core::time::Duration> =
                ::core::option::Option::Some(::core::time::Duration::from_millis(#ms));
        }
    });
    let schema = schema_tokens(model);
    // Spanned on the response type: a type with no JSON Schema (or gangway
    // without `mcp`) is reported there.
    let response_json_schema = model.output_schema.then(|| {
        quote_spanned! {response_span=>
            fn response_json_schema() -> ::core::option::Option<#private::serde_json::Value> {
                #[allow(unused_imports)]
                use #private::{PlainSchema as _, ResultSchema as _};
                ::core::option::Option::Some(
                    #private::SchemaProbe::<Self::Response>::new().response_json_schema(),
                )
            }

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
    });

    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::ipc::IpcCommand for #ident #ty_generics #where_clause {
            type Response = #response;

            fn name(&self) -> ::std::string::String {
                #name_body
            }

            fn handle(
                &mut self,
            ) -> impl ::core::future::Future<Output = Self::Response> + ::core::marker::Send {
                #handle_body
            }

            fn apply_args(
                &mut self,
                __gangway_params: &[u8],
            ) -> ::core::result::Result<(), #private::DecodeError> {
                #apply_body
            }

            fn positional_args(&self) -> #private::Cow<'static, [#private::Cow<'static, str>]> {
                #private::Cow::Borrowed(&[#(#private::Cow::Borrowed(#positional_names)),*])
            }

            #stdin_arg

            #set_method_name

            #set_context

            #streams_stdin

            #timeout

            const SCHEMA: ::core::option::Option<&'static #krate::tool::ToolSchema> =
                ::core::option::Option::Some(&#schema);

            #response_json_schema

            fn encode_reply(
                __gangway_response: &Self::Response,
            ) -> ::core::result::Result<#krate::ipc::Reply, #private::EncodeError> {
                #[allow(unused_imports)]
                use #private::{PlainReply as _, ResultReply as _};
                #encode_call
            }

            fn decode_reply(
                __gangway_reply: &#krate::ipc::Reply,
            ) -> ::core::result::Result<Self::Response, #private::DecodeError> {
                #[allow(unused_imports)]
                use #private::{PlainReply as _, ResultReply as _};
                #decode_call
            }
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

/// `apply_args`: finds each argument's value with the runtime's one
/// table-driven splitter, decodes each into a local first (one generic
/// decode per argument type, shared by every command of the crate), then
/// assigns them, so a request that fails leaves the command as it was.
/// Nothing per command is generic over a deserializer: the derive stays
/// cheap to compile.
fn apply_args_body(model: &CommandModel) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    let args: Vec<(&FieldModel, &ArgModel)> = model.args().collect();
    let count = args.len();
    let wires: Vec<&str> = args.iter().map(|(_, a)| a.wire.as_str()).collect();
    let names = args.iter().enumerate().flat_map(|(index, (_, arg))| {
        std::iter::once(arg.wire.clone())
            .chain(arg.aliases.iter().cloned())
            .map(move |name| quote!((#name, #index)))
    });
    let slot = |i: usize| quote!(__gangway_slots[#i]);

    let values: Vec<Ident> = (0..count)
        .map(|i| format_ident!("__gangway_value{}", i))
        .collect();
    // Fields the struct's own default fills: build that default once, only
    // when one of them is missing, and move the needed fields out of it.
    let container: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(_, (_, arg))| matches!(arg.missing, Missing::Container))
        .map(|(i, _)| i)
        .collect();
    let container_default = if container.is_empty() {
        TokenStream::new()
    } else {
        let missing = container.iter().map(|&i| slot(i));
        let cvalues = container
            .iter()
            .map(|&i| format_ident!("__gangway_fallback{}", i));
        let cfields = container.iter().map(|&i| &args[i].0.ident);
        let nones = container
            .iter()
            .map(|_| quote!(::core::option::Option::None));
        let default = match &model.container_default {
            Some(SerdeDefault::Path(path)) => quote!(#path()),
            _ => quote!(<Self as ::core::default::Default>::default()),
        };
        quote! {
            let (#(#cvalues,)*) = if false #(|| #missing.is_none())* {
                let __gangway_default: Self = #default;
                (#(::core::option::Option::Some(__gangway_default.#cfields),)*)
            } else {
                (#(#nones,)*)
            };
        }
    };
    let fills = args
        .iter()
        .enumerate()
        .zip(&values)
        .map(|((index, (field, arg)), value)| {
            let ty = &field.ty;
            let wire = &arg.wire;
            // A secret's decoding error never quotes its value.
            let decode_arg = if arg.secret {
                quote!(#private::decode_secret_arg)
            } else {
                quote!(#private::decode_arg)
            };
            let secret = arg.secret;
            let decode = if let Some(path) = &arg.deserialize_with {
                quote! {
                    #path(&mut #private::arg_deserializer(__gangway_bytes))
                        .map_err(|__e| {
                            #private::invalid_arg::<#private::DecodeError>(#wire, #private::secret_hidden(#secret, __e))
                        })?
                }
            } else if arg.shape.decode == Decode::Bytes && arg.shape.optional {
                quote! {
                    #decode_arg::<::core::option::Option<#private::ByteVec>>(__gangway_bytes, #wire)?
                        .map(|__b| ::core::convert::Into::into(__b.0))
                }
            } else if arg.shape.decode == Decode::Bytes {
                quote! {
                    ::core::convert::Into::into(
                        #decode_arg::<#private::ByteVec>(__gangway_bytes, #wire)?.0
                    )
                }
            } else {
                quote!(#decode_arg::<#ty>(__gangway_bytes, #wire)?)
            };
            let missing = missing_expr(model, index, arg);
            let slot = slot(index);
            quote! {
                let #value: #ty = match #slot {
                    ::core::option::Option::Some(__gangway_bytes) => #decode,
                    ::core::option::Option::None => #missing,
                };
            }
        });
    let fields = args.iter().map(|(f, _)| &f.ident);

    quote! {
        let mut __gangway_slots: [::core::option::Option<&[u8]>; #count] = [::core::option::Option::None; #count];
        #private::split_args(
            __gangway_params,
            &[#(#names),*],
            &[#(#wires),*],
            &mut __gangway_slots,
        )?;
        #container_default
        #(#fills)*
        #(self.#fields = #values;)*
        ::core::result::Result::Ok(())
    }
}

/// The value of an argument a request left out.
fn missing_expr(model: &CommandModel, index: usize, arg: &ArgModel) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    let wire = &arg.wire;
    match &arg.missing {
        Missing::Required => quote! {
            return ::core::result::Result::Err(#private::missing_arg::<#private::DecodeError>(#wire))
        },
        Missing::None => quote!(::core::option::Option::None),
        Missing::DefaultTrait => quote!(::core::default::Default::default()),
        Missing::DefaultPath(path) => quote!(#path()),
        Missing::DefaultExpr(expr) if is_str_literal(expr) => {
            quote!(::core::convert::Into::into(#expr))
        }
        Missing::DefaultExpr(expr) => quote!(#expr),
        Missing::Container => {
            let fallback = format_ident!("__gangway_fallback{}", index);
            quote! {
                match #fallback {
                    ::core::option::Option::Some(__v) => __v,
                    ::core::option::Option::None => ::core::unreachable!(
                        "the struct's default is built whenever a field it fills is missing"
                    ),
                }
            }
        }
    }
}

fn is_str_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(lit) => matches!(lit.lit, syn::Lit::Str(_)),
        Expr::Group(group) => is_str_literal(&group.expr),
        _ => false,
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
