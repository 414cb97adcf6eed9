//! The model of `#[derive(ArgEnum)]`: an enum of unit variants whose serde
//! names are the values an argument may take.

use syn::Attribute;

use super::ctxt::{Ctxt, Rejected, crate_or_default};
use super::keys::{ArgEnumKey, attr_entries, skip_value};
use super::naming::RenameRule;
use super::serde_attr::string_or_deserialize;

/// An enum usable as an argument type.
#[derive(Debug)]
pub struct ArgEnumModel {
    /// The enum's name.
    pub ident: syn::Ident,
    /// The enum's generics.
    pub generics: syn::Generics,
    /// The path of the `gangway` crate in generated code.
    pub krate: syn::Path,
    /// The accepted names, in variant order (serde's names, then aliases are
    /// not listed: help shows one name per value).
    pub values: Vec<String>,
}

impl ArgEnumModel {
    /// Reads and checks an enum; every problem is in the error, beside the
    /// `crate = ...` path for the placeholder impl.
    pub fn from_derive_input(input: &syn::DeriveInput) -> Result<Self, Rejected<Self>> {
        let mut cx = Ctxt::new();
        let mut krate: Option<syn::Path> = None;
        for entry in attr_entries(&input.attrs, "arg_enum", "crate = my_gangway", &mut cx) {
            match entry.key::<ArgEnumKey>(&mut cx) {
                Some(ArgEnumKey::Crate) => {
                    if let Some(path) = entry.crate_path(&mut cx) {
                        krate = Some(path);
                    }
                }
                None => {}
            }
        }
        let krate = crate_or_default(krate.as_ref());
        let syn::Data::Enum(data) = &input.data else {
            let span = match &input.data {
                syn::Data::Struct(s) => s.struct_token.span,
                syn::Data::Union(u) => u.union_token.span,
                syn::Data::Enum(_) => unreachable!(),
            };
            cx.discard();
            let error = darling::Error::custom(
                "`#[derive(ArgEnum)]` needs an enum of unit variants; for a struct, implement \
                 `gangway::tool::ArgType` by hand",
            )
            .with_span(&span);
            return Err(Rejected {
                error,
                krate: Box::new(krate),
                partial: None,
            });
        };
        let mut rename_all = None;
        for attr in input.attrs.iter().filter(|a| a.path().is_ident("serde")) {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename_all") {
                    // serde's derive reports an unknown rule.
                    if let Some(lit) = string_or_deserialize(&meta, "rename_all", &mut cx)? {
                        rename_all = RenameRule::from_name(&lit.value());
                    }
                } else {
                    skip_value(&meta)?;
                }
                Ok(())
            });
        }
        let mut values = Vec::new();
        let mut skipped_units = 0usize;
        for variant in &data.variants {
            if !matches!(variant.fields, syn::Fields::Unit) {
                cx.error(
                    &variant.ident,
                    format!(
                        "variant `{}` carries data; an argument value is a single word, so \
                         `#[derive(ArgEnum)]` takes unit variants only",
                        variant.ident
                    ),
                );
                continue;
            }
            let (rename, skipped) = variant_serde(&variant.attrs, &mut cx);
            if skipped {
                skipped_units += 1;
                continue;
            }
            let name = rename.unwrap_or_else(|| match rename_all {
                Some(rule) => rule.apply_to_variant(&variant.ident.to_string()),
                None => variant.ident.to_string(),
            });
            values.push(name);
        }
        if values.is_empty() && skipped_units > 0 {
            cx.error(
                &input.ident,
                "every variant is skipped by serde, so an argument of this type could take no value",
            );
        } else if data.variants.is_empty() {
            cx.error(
                &input.ident,
                "an enum with no variants has no values to accept",
            );
        }
        let model = ArgEnumModel {
            ident: input.ident.clone(),
            generics: input.generics.clone(),
            krate: krate.clone(),
            values,
        };
        cx.finish_model(model, &krate)
    }
}

/// A variant's serde name and whether serde skips it when deserializing.
fn variant_serde(attrs: &[Attribute], cx: &mut Ctxt) -> (Option<String>, bool) {
    let mut rename = None;
    let mut skipped = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                if let Some(lit) = string_or_deserialize(&meta, "rename", cx)? {
                    rename = Some(lit.value());
                }
            } else if meta.path.is_ident("skip") || meta.path.is_ident("skip_deserializing") {
                skipped = true;
            } else {
                skip_value(&meta)?;
            }
            Ok(())
        });
    }
    (rename, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_names() {
        let input: syn::DeriveInput = syn::parse_quote! {
            #[serde(rename_all = "kebab-case")]
            enum Speed {
                VeryFast,
                #[serde(rename = "slow")]
                Slowly,
                #[serde(skip)]
                Hidden,
            }
        };
        let model = ArgEnumModel::from_derive_input(&input).unwrap();
        assert_eq!(model.values, ["very-fast", "slow"]);
    }

    #[test]
    fn split_renames_follow_the_deserialize_side_when_they_agree() {
        let input: syn::DeriveInput = syn::parse_quote! {
            #[serde(rename_all(deserialize = "lowercase"))]
            enum Speed { Fast, #[serde(rename(deserialize = "crawl"))] Slow }
        };
        let model = ArgEnumModel::from_derive_input(&input).unwrap();
        assert_eq!(model.values, ["fast", "crawl"]);
        let input: syn::DeriveInput = syn::parse_quote! {
            #[serde(rename_all(serialize = "UPPERCASE", deserialize = "lowercase"))]
            enum Speed { Fast }
        };
        let err = ArgEnumModel::from_derive_input(&input).unwrap_err().error;
        assert!(err.to_string().contains("two names"), "{err}");
    }

    #[test]
    fn all_skipped_is_refused() {
        let input: syn::DeriveInput = syn::parse_quote! {
            enum Nothing { #[serde(skip)] A, #[serde(skip_deserializing)] B }
        };
        let err = ArgEnumModel::from_derive_input(&input).unwrap_err().error;
        assert!(
            err.to_string().contains("every variant is skipped"),
            "{err}"
        );
    }

    #[test]
    fn data_variants_are_refused() {
        let input: syn::DeriveInput = syn::parse_quote! {
            enum Bad { A(u32), B { x: u8 } }
        };
        let err = ArgEnumModel::from_derive_input(&input).unwrap_err().error;
        assert_eq!(err.len(), 2);
    }
}
