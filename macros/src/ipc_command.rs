//! `#[derive(IpcCommand)]`: the model (shared with the scanner) turned into
//! an `impl IpcCommand`, or, when the struct is refused, its errors beside a
//! dummy impl so the user sees those errors and not a cascade.

use gangway_codegen::model::{
    ArgModel, ByteResponse, CommandModel, Decode, FieldModel, KindSource, Missing, Rejected,
    SerdeDefault, byte_response, schema_tokens,
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
    let apply_body = apply_args_body(model, &generics);
    let schema = schema_tokens(model);

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

            const SCHEMA: ::core::option::Option<&'static #krate::tool::ToolSchema> =
                ::core::option::Option::Some(&#schema);

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

/// `apply_args`: decodes every argument into a local first, then assigns
/// them, so a request that fails leaves the command as it was.
fn apply_args_body(model: &CommandModel, generics: &Generics) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    let serde = quote!(#private::serde);
    let ident = &model.ident;
    let (_, ty_generics, where_clause) = generics.split_for_impl();
    let turbofish = ty_generics.as_turbofish();
    let mut de_generics = generics.clone();
    de_generics.params.insert(0, parse_quote!('__gangway_de));
    let (de_impl_generics, _, _) = de_generics.split_for_impl();
    let marker = quote!(#private::PhantomData<fn() -> #ident #ty_generics>);

    let args: Vec<(&FieldModel, &ArgModel)> = model.args().collect();
    let count = args.len();
    let slots: Vec<Ident> = (0..count)
        .map(|i| format_ident!("__gangway_slot{}", i))
        .collect();
    let types: Vec<&Type> = args.iter().map(|(f, _)| &f.ty).collect();
    let wires: Vec<&str> = args.iter().map(|(_, a)| a.wire.as_str()).collect();

    let mut helpers = TokenStream::new();
    let mut map_decoders = Vec::with_capacity(count);
    let mut seq_decoders = Vec::with_capacity(count);
    for (i, (field, arg)) in args.iter().enumerate() {
        let ty = &field.ty;
        let wire = &arg.wire;
        let (map_decode, seq_decode) = if let Some(path) = &arg.deserialize_with {
            let wrapper = format_ident!("__GangwayWith{}", i);
            helpers.extend(quote! {
                struct #wrapper #generics (#ty, #marker) #where_clause;
                impl #de_impl_generics #serde::Deserialize<'__gangway_de> for #wrapper #ty_generics #where_clause {
                    fn deserialize<__GangwayD: #serde::Deserializer<'__gangway_de>>(
                        __deserializer: __GangwayD,
                    ) -> ::core::result::Result<Self, __GangwayD::Error> {
                        ::core::result::Result::Ok(#wrapper(#path(__deserializer)?, #private::PhantomData))
                    }
                }
            });
            (
                quote!(__map.next_value::<#wrapper #turbofish>().map(|__w| __w.0)),
                quote!(__seq.next_element::<#wrapper #turbofish>().map(|__w| __w.map(|__w| __w.0))),
            )
        } else if arg.shape.decode == Decode::Bytes && arg.shape.optional {
            (
                quote! {
                    __map.next_value::<::core::option::Option<#private::ByteVec>>()
                        .map(|__b| __b.map(|__b| ::core::convert::Into::into(__b.0)))
                },
                quote! {
                    __seq.next_element::<::core::option::Option<#private::ByteVec>>()
                        .map(|__b| __b.map(|__b| __b.map(|__b| ::core::convert::Into::into(__b.0))))
                },
            )
        } else if arg.shape.decode == Decode::Bytes {
            (
                quote! {
                    __map.next_value::<#private::ByteVec>()
                        .map(|__b| ::core::convert::Into::into(__b.0))
                },
                quote! {
                    __seq.next_element::<#private::ByteVec>()
                        .map(|__b| __b.map(|__b| ::core::convert::Into::into(__b.0)))
                },
            )
        } else {
            (
                quote!(__map.next_value::<#ty>()),
                quote!(__seq.next_element::<#ty>()),
            )
        };
        map_decoders.push(quote! {
            #map_decode.map_err(|__e| #private::invalid_arg::<__GangwayA::Error>(#wire, __e))?
        });
        seq_decoders.push(quote! {
            #seq_decode.map_err(|__e| #private::invalid_arg::<__GangwayA::Error>(#wire, __e))?
        });
    }

    let map_arms = args.iter().zip(&slots).zip(&map_decoders).enumerate().map(
        |(index, (((_, arg), slot), decode))| {
            let wire = &arg.wire;
            quote! {
                #index => {
                    if #slot.is_some() {
                        return ::core::result::Result::Err(#private::duplicate_arg::<__GangwayA::Error>(#wire));
                    }
                    #slot = ::core::option::Option::Some(#decode);
                }
            }
        },
    );
    let name_arms = args.iter().enumerate().map(|(index, (_, arg))| {
        let wire = &arg.wire;
        let aliases = &arg.aliases;
        quote!(#wire #(| #aliases)* => ::core::result::Result::Ok(#index),)
    });
    // The argument names, matched without allocating, as serde's own derive
    // does for field names.
    let arg_index = quote! {
        struct __GangwayArgIndex;

        impl<'__gangway_de> #serde::de::DeserializeSeed<'__gangway_de> for __GangwayArgIndex {
            type Value = usize;

            #[inline]
            fn deserialize<__GangwayD: #serde::Deserializer<'__gangway_de>>(
                self,
                __deserializer: __GangwayD,
            ) -> ::core::result::Result<usize, __GangwayD::Error> {
                __deserializer.deserialize_identifier(self)
            }
        }

        impl<'__gangway_de> #serde::de::Visitor<'__gangway_de> for __GangwayArgIndex {
            type Value = usize;

            fn expecting(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                __f.write_str("an argument name")
            }

            #[inline]
            fn visit_str<__GangwayE: #serde::de::Error>(self, __key: &str) -> ::core::result::Result<usize, __GangwayE> {
                match __key {
                    #(#name_arms)*
                    __other => ::core::result::Result::Err(#private::unknown_arg::<__GangwayE>(__other, &[#(#wires),*])),
                }
            }

            fn visit_bytes<__GangwayE: #serde::de::Error>(self, __key: &[u8]) -> ::core::result::Result<usize, __GangwayE> {
                match ::core::str::from_utf8(__key) {
                    ::core::result::Result::Ok(__key) => self.visit_str(__key),
                    ::core::result::Result::Err(_) => ::core::result::Result::Err(#private::non_utf8_arg_name::<__GangwayE>()),
                }
            }
        }
    };

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
        let first = &slots[container[0]];
        let rest = container[1..].iter().map(|&i| &slots[i]);
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
            let (#(#cvalues,)*) = if #first.is_none() #(|| #rest.is_none())* {
                let __gangway_default: Self = #default;
                (#(::core::option::Option::Some(__gangway_default.#cfields),)*)
            } else {
                (#(#nones,)*)
            };
        }
    };
    let fills = args.iter().enumerate().zip(&slots).zip(&values).map(
        |(((index, (field, arg)), slot), value)| {
            let ty = &field.ty;
            let missing = missing_expr(model, index, arg);
            quote! {
                let #value: #ty = match #slot {
                    ::core::option::Option::Some(__v) => __v,
                    ::core::option::Option::None => #missing,
                };
            }
        },
    );
    let fields = args.iter().map(|(f, _)| &f.ident);

    quote! {
        #helpers

        #arg_index

        struct __GangwayArgs #generics #where_clause {
            __marker: #marker,
        }

        impl #de_impl_generics #serde::de::Visitor<'__gangway_de> for __GangwayArgs #ty_generics #where_clause {
            type Value = (#(::core::option::Option<#types>,)*);

            fn expecting(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                __f.write_str("a map of arguments")
            }

            #[allow(unused_mut)]
            fn visit_map<__GangwayA: #serde::de::MapAccess<'__gangway_de>>(
                self,
                mut __map: __GangwayA,
            ) -> ::core::result::Result<Self::Value, __GangwayA::Error> {
                #(let mut #slots: ::core::option::Option<#types> = ::core::option::Option::None;)*
                while let ::core::option::Option::Some(__index) = __map.next_key_seed(__GangwayArgIndex)? {
                    match __index {
                        #(#map_arms)*
                        _ => ::core::unreachable!("ArgIndex answers only the indices it was given"),
                    }
                }
                ::core::result::Result::Ok((#(#slots,)*))
            }

            #[allow(unused_mut)]
            fn visit_seq<__GangwayA: #serde::de::SeqAccess<'__gangway_de>>(
                self,
                mut __seq: __GangwayA,
            ) -> ::core::result::Result<Self::Value, __GangwayA::Error> {
                #(let #slots = #seq_decoders;)*
                if __seq.next_element::<#serde::de::IgnoredAny>()?.is_some() {
                    return ::core::result::Result::Err(#private::too_many_args::<__GangwayA::Error>(#count));
                }
                ::core::result::Result::Ok((#(#slots,)*))
            }
        }

        let (#(#slots,)*) = #private::decode_args(
            __gangway_params,
            __GangwayArgs #turbofish { __marker: #private::PhantomData },
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
    use crate::tests::idents;

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
