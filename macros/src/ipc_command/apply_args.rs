//! The body of the derived `apply_args`: each argument's bytes found,
//! decoded into a local, or filled in when the request left it out.

use gangway_codegen::model::{ArgModel, CommandModel, Decode, FieldModel, Missing, SerdeDefault};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use syn::{Expr, Type};

/// The body of `apply_args`: finds each argument's value with the runtime's
/// one table-driven splitter, decodes each into a local first (one generic
/// decode per argument type, shared by every command of the crate), then
/// assigns them, so a request that fails leaves the command as it was.
/// Nothing per command is generic over a deserializer: the derive stays
/// cheap to compile.
pub(super) fn apply_args_body(model: &CommandModel) -> TokenStream {
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
    let values: Vec<Ident> = (0..count)
        .map(|i| format_ident!("__gangway_value{}", i))
        .collect();
    let container_default = container_default(model, &args);
    let fills = args
        .iter()
        .enumerate()
        .zip(&values)
        .map(|((index, (field, arg)), value)| fill_value(model, index, field, arg, value));
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

/// The splitter's slot of argument `index`: its bytes, if the request has
/// them.
fn slot(index: usize) -> TokenStream {
    quote!(__gangway_slots[#index])
}

/// Fields the struct's own default fills: that default built once, only
/// when one of them is missing, and the needed fields moved out of it.
/// Empty when no field needs it.
fn container_default(model: &CommandModel, args: &[(&FieldModel, &ArgModel)]) -> TokenStream {
    let container: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(_, (_, arg))| matches!(arg.missing, Missing::Container))
        .map(|(i, _)| i)
        .collect();
    if container.is_empty() {
        return TokenStream::new();
    }
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
}

/// The local `value` for argument `index`: its bytes decoded, or the value
/// of an argument left out.
fn fill_value(
    model: &CommandModel,
    index: usize,
    field: &FieldModel,
    arg: &ArgModel,
    value: &Ident,
) -> TokenStream {
    let ty = &field.ty;
    let decode = decode_expr(model, ty, arg);
    let missing = missing_expr(model, index, arg);
    let slot = slot(index);
    quote! {
        let #value: #ty = match #slot {
            ::core::option::Option::Some(__gangway_bytes) => #decode,
            ::core::option::Option::None => #missing,
        };
    }
}

/// The value of an argument decoded from `__gangway_bytes`.
fn decode_expr(model: &CommandModel, ty: &Type, arg: &ArgModel) -> TokenStream {
    let krate = &model.krate;
    let private = quote!(#krate::__private);
    let wire = &arg.wire;
    // A secret's decoding error never quotes its value.
    let decode_arg = if arg.secret {
        quote!(#private::decode_secret_arg)
    } else {
        quote!(#private::decode_arg)
    };
    let secret = arg.secret;
    if let Some(path) = &arg.deserialize_with {
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
