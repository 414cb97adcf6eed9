//! Reading a crate's commands from its source: every
//! `#[derive(IpcCommand)]` struct, through the same model the proc-macro
//! uses, into the same [`Manifest`] the router publishes.
//!
//! The scan sees what the source says. A field of a custom type gets its
//! kind from a `#[derive(ArgEnum)]` enum found in the same sources; a
//! hand-written `IpcCommand` impl, or a name chosen at run time through an
//! `#[ipc(method)]` field, is invisible to it: use the host's
//! `IpcRouter::manifest()` for those.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use quote::ToTokens;

use crate::model::{ArgEnumModel, CommandModel};
use crate::schema::{Manifest, ToolSchema, ValueKind};

/// Why a crate's commands could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum ScanError {
    /// A file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A file is not valid Rust.
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A command struct the derive would refuse.
    Command {
        /// The file.
        path: PathBuf,
        /// The derive's errors.
        message: String,
    },
    /// A field type the sources do not describe.
    UnknownType {
        /// The file.
        path: PathBuf,
        /// The command.
        command: String,
        /// The type.
        ty: String,
    },
    /// Two commands with one name.
    Duplicate {
        /// The name.
        name: String,
    },
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScanError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            ScanError::Parse { path, message } => {
                write!(f, "{}: not valid Rust: {message}", path.display())
            }
            ScanError::Command { path, message } => write!(f, "{}: {message}", path.display()),
            ScanError::UnknownType { path, command, ty } => write!(
                f,
                "{}: command `{command}` has an argument of type `{ty}`, which the sources do not describe; \
                 derive `gangway::ArgEnum` on it, or take the manifest from the host with \
                 `IpcRouter::manifest()` and `gangway wrappers --manifest`",
                path.display()
            ),
            ScanError::Duplicate { name } => write!(f, "two commands are named `{name}`"),
        }
    }
}

impl std::error::Error for ScanError {}

/// Scans every `.rs` file under `dir` (skipping `target` and hidden
/// directories) and returns the manifest of its commands.
///
/// # Errors
///
/// A [`ScanError`] naming the file.
pub fn scan_dir(dir: &Path) -> Result<Manifest, ScanError> {
    let mut files = Vec::new();
    collect_rust_files(dir, &mut files)?;
    files.sort();
    let mut parsed = Vec::with_capacity(files.len());
    for path in files {
        let text = std::fs::read_to_string(&path).map_err(|source| ScanError::Io {
            path: path.clone(),
            source,
        })?;
        let file = syn::parse_file(&text).map_err(|error| ScanError::Parse {
            path: path.clone(),
            message: error.to_string(),
        })?;
        parsed.push((path, file));
    }
    scan_files(&parsed)
}

/// Scans parsed files.
///
/// # Errors
///
/// As [`scan_dir`].
pub fn scan_files(files: &[(PathBuf, syn::File)]) -> Result<Manifest, ScanError> {
    let mut enums: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut structs: Vec<(&Path, &syn::ItemStruct)> = Vec::new();
    for (path, file) in files {
        visit_items(&file.items, &mut |item| match item {
            syn::Item::Enum(item) if derives(&item.attrs, "ArgEnum") => {
                let input = syn::DeriveInput {
                    attrs: item.attrs.clone(),
                    vis: item.vis.clone(),
                    ident: item.ident.clone(),
                    generics: item.generics.clone(),
                    data: syn::Data::Enum(syn::DataEnum {
                        enum_token: item.enum_token,
                        brace_token: item.brace_token,
                        variants: item.variants.clone(),
                    }),
                };
                if let Ok(model) = ArgEnumModel::from_derive_input(&input) {
                    enums.insert(item.ident.to_string(), model.values);
                }
            }
            syn::Item::Struct(item) if derives(&item.attrs, "IpcCommand") => {
                structs.push((path, item))
            }
            _ => {}
        });
    }
    let mut commands: BTreeMap<String, ToolSchema> = BTreeMap::new();
    for (path, item) in structs {
        let input = syn::DeriveInput {
            attrs: item.attrs.clone(),
            vis: item.vis.clone(),
            ident: item.ident.clone(),
            generics: item.generics.clone(),
            data: syn::Data::Struct(syn::DataStruct {
                struct_token: item.struct_token,
                fields: item.fields.clone(),
                semi_token: item.semi_token,
            }),
        };
        let model =
            CommandModel::from_derive_input(&input).map_err(|rejected| ScanError::Command {
                path: path.to_path_buf(),
                message: rejected.error.to_string(),
            })?;
        let schema = model
            .schema(|ty| {
                let name = last_ident(ty)?;
                enums.get(&name).map(|values| {
                    ValueKind::Enum(
                        values
                            .iter()
                            .cloned()
                            .map(Into::into)
                            .collect::<Vec<_>>()
                            .into(),
                    )
                })
            })
            .map_err(|ty| ScanError::UnknownType {
                path: path.to_path_buf(),
                command: model.name.clone(),
                ty: ty.to_token_stream().to_string(),
            })?;
        if commands.insert(schema.name.to_string(), schema).is_some() {
            return Err(ScanError::Duplicate {
                name: model.name.clone(),
            });
        }
    }
    Ok(Manifest::new(commands.into_values().collect()))
}

/// Every item, descending into inline modules.
fn visit_items<'a>(items: &'a [syn::Item], visit: &mut impl FnMut(&'a syn::Item)) {
    for item in items {
        visit(item);
        if let syn::Item::Mod(module) = item
            && let Some((_, inner)) = &module.content
        {
            visit_items(inner, visit);
        }
    }
}

/// Whether `#[derive(...)]` lists `name` (bare or by path).
fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("derive"))
        .any(|attr| {
            let mut found = false;
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.segments.last().is_some_and(|s| s.ident == name) {
                    found = true;
                }
                Ok(())
            });
            found
        })
}

fn last_ident(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
        syn::Type::Group(group) => last_ident(&group.elem),
        syn::Type::Paren(paren) => last_ident(&paren.elem),
        _ => None,
    }
}

fn collect_rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ScanError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ScanError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| ScanError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let file_type = entry.file_type().map_err(|source| ScanError::Io {
            path: path.clone(),
            source,
        })?;
        if file_type.is_dir() {
            if !name.starts_with('.') && name != "target" {
                collect_rust_files(&path, out)?;
            }
        } else if file_type.is_file() && name.ends_with(".rs") {
            out.push(path);
        }
    }
    Ok(())
}
