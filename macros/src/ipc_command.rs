//! `#[derive(IpcCommand)]`: the model (shared with the scanner) turned into
//! an `impl IpcCommand`, or, when the struct is refused, its errors beside a
//! dummy impl so the user sees those errors and not a cascade.

use gangway_codegen::model::{
    ArgModel, CommandModel, Decode, FieldModel, KindSource, Missing, Rejected, SerdeDefault,
    schema_tokens,
};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{DeriveInput, Expr, Generics, Type, parse_quote};

/// Expands the derive.
pub fn expand(input: &DeriveInput) -> TokenStream {
    match CommandModel::from_derive_input(input) {
        Ok(model) if model.serde_reports_error => TokenStream::new(),
        Ok(model) => command_impl(&model),
        Err(Rejected { error, partial }) => {
            let errors = error.write_errors();
            let dummy = dummy_impl(input, partial.as_deref());
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
                ::std::string::String::from(#name)
            },
            quote! {
                fn set_method_name(&mut self, __gangway_name: &str) {
                    self.#field.clear();
                    self.#field.push_str(__gangway_name);
                }
            },
        ),
        None => (
            quote!(::std::string::String::from(#name)),
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
                #private::ReplyProbe::<Self::Response>::new().encode_reply(__gangway_response)
            }

            fn decode_reply(
                __gangway_reply: &#krate::ipc::Reply,
            ) -> ::core::result::Result<Self::Response, #private::DecodeError> {
                #[allow(unused_imports)]
                use #private::{PlainReply as _, ResultReply as _};
                #private::ReplyProbe::<Self::Response>::new().decode_reply(__gangway_reply)
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
    de_generics.params.insert(0, parse_quote!('de));
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
                impl #de_impl_generics #serde::Deserialize<'de> for #wrapper #ty_generics #where_clause {
                    fn deserialize<__D: #serde::Deserializer<'de>>(
                        __deserializer: __D,
                    ) -> ::core::result::Result<Self, __D::Error> {
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
            #map_decode.map_err(|__e| #private::invalid_arg::<__A::Error>(#wire, __e))?
        });
        seq_decoders.push(quote! {
            #seq_decode.map_err(|__e| #private::invalid_arg::<__A::Error>(#wire, __e))?
        });
    }

    let map_arms = args.iter().zip(&slots).zip(&map_decoders).enumerate().map(
        |(index, (((_, arg), slot), decode))| {
            let wire = &arg.wire;
            quote! {
                #index => {
                    if #slot.is_some() {
                        return ::core::result::Result::Err(#private::duplicate_arg::<__A::Error>(#wire));
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

        impl<'de> #serde::de::DeserializeSeed<'de> for __GangwayArgIndex {
            type Value = usize;

            #[inline]
            fn deserialize<__D: #serde::Deserializer<'de>>(
                self,
                __deserializer: __D,
            ) -> ::core::result::Result<usize, __D::Error> {
                __deserializer.deserialize_identifier(self)
            }
        }

        impl<'de> #serde::de::Visitor<'de> for __GangwayArgIndex {
            type Value = usize;

            fn expecting(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                __f.write_str("an argument name")
            }

            #[inline]
            fn visit_str<__E: #serde::de::Error>(self, __key: &str) -> ::core::result::Result<usize, __E> {
                match __key {
                    #(#name_arms)*
                    __other => ::core::result::Result::Err(#private::unknown_arg::<__E>(__other, &[#(#wires),*])),
                }
            }

            fn visit_bytes<__E: #serde::de::Error>(self, __key: &[u8]) -> ::core::result::Result<usize, __E> {
                match ::core::str::from_utf8(__key) {
                    ::core::result::Result::Ok(__key) => self.visit_str(__key),
                    ::core::result::Result::Err(_) => ::core::result::Result::Err(#private::non_utf8_arg_name::<__E>()),
                }
            }
        }
    };

    let values: Vec<Ident> = (0..count)
        .map(|i| format_ident!("__gangway_value{}", i))
        .collect();
    let fills = args
        .iter()
        .zip(&slots)
        .zip(&values)
        .map(|(((field, arg), slot), value)| {
            let ty = &field.ty;
            let missing = missing_expr(model, field, arg);
            quote! {
                let #value: #ty = match #slot {
                    ::core::option::Option::Some(__v) => __v,
                    ::core::option::Option::None => #missing,
                };
            }
        });
    let fields = args.iter().map(|(f, _)| &f.ident);

    quote! {
        #helpers

        #arg_index

        struct __GangwayArgs #generics #where_clause {
            __marker: #marker,
        }

        impl #de_impl_generics #serde::de::Visitor<'de> for __GangwayArgs #ty_generics #where_clause {
            type Value = (#(::core::option::Option<#types>,)*);

            fn expecting(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                __f.write_str("a map of arguments")
            }

            #[allow(unused_mut)]
            fn visit_map<__A: #serde::de::MapAccess<'de>>(
                self,
                mut __map: __A,
            ) -> ::core::result::Result<Self::Value, __A::Error> {
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
            fn visit_seq<__A: #serde::de::SeqAccess<'de>>(
                self,
                mut __seq: __A,
            ) -> ::core::result::Result<Self::Value, __A::Error> {
                #(let #slots = #seq_decoders;)*
                if __seq.next_element::<#serde::de::IgnoredAny>()?.is_some() {
                    return ::core::result::Result::Err(#private::too_many_args::<__A::Error>(#count));
                }
                ::core::result::Result::Ok((#(#slots,)*))
            }
        }

        let (#(#slots,)*) = #private::decode_args(
            __gangway_params,
            __GangwayArgs #turbofish { __marker: #private::PhantomData },
        )?;
        #(#fills)*
        #(self.#fields = #values;)*
        ::core::result::Result::Ok(())
    }
}

/// The value of an argument a request left out.
fn missing_expr(model: &CommandModel, field: &FieldModel, arg: &ArgModel) -> TokenStream {
    let private = {
        let krate = &model.krate;
        quote!(#krate::__private)
    };
    let wire = &arg.wire;
    let member = &field.ident;
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
        Missing::Container => match &model.container_default {
            Some(SerdeDefault::Path(path)) => quote!({
                let __gangway_default: Self = #path();
                __gangway_default.#member
            }),
            _ => quote!({
                let __gangway_default: Self = ::core::default::Default::default();
                __gangway_default.#member
            }),
        },
    }
}

fn is_str_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(lit) => matches!(lit.lit, syn::Lit::Str(_)),
        Expr::Group(group) => is_str_literal(&group.expr),
        _ => false,
    }
}

/// The struct's generics plus the bounds the impl needs when the struct has
/// type parameters: each parameter is `Send + Sync + 'static` (a registered
/// command is shared across threads), `Self` and the response meet the
/// trait's requirements, argument types built from a parameter can be
/// decoded and described; then the user's `#[ipc(bound = "...")]`.
fn bounded_generics(model: &CommandModel) -> Generics {
    let mut generics = model.generics.clone();
    let params: Vec<Ident> = generics.type_params().map(|p| p.ident.clone()).collect();
    if params.is_empty() {
        if !model.bound.is_empty() {
            generics
                .make_where_clause()
                .predicates
                .extend(model.bound.iter().cloned());
        }
        return generics;
    }
    let krate = &model.krate;
    let serde = quote!(#krate::__private::serde);
    let ident = &model.ident;
    let response = &model.response;
    let (_, ty_generics, _) = model.generics.split_for_impl();
    let mut predicates: Vec<syn::WherePredicate> = params
        .iter()
        .map(|param| -> syn::WherePredicate {
            parse_quote!(#param: ::core::marker::Send + ::core::marker::Sync + 'static)
        })
        .collect();
    predicates.extend::<[syn::WherePredicate; 2]>([
        parse_quote!(#ident #ty_generics: #serde::Serialize + ::core::marker::Send + 'static),
        parse_quote!(#response: #serde::Serialize + #serde::de::DeserializeOwned + ::core::marker::Send),
    ]);
    for (field, arg) in model.args() {
        if !mentions_any(&field.ty, &params) {
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
fn dummy_impl(input: &DeriveInput, partial: Option<&CommandModel>) -> TokenStream {
    if matches!(input.data, syn::Data::Union(_)) {
        return TokenStream::new();
    }
    let krate: syn::Path = partial.map_or_else(|| parse_quote!(::gangway), |m| m.krate.clone());
    let response: Type = partial.map_or_else(|| parse_quote!(()), |m| m.response.clone());
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let span = Span::call_site();
    quote_spanned! {span=>
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
