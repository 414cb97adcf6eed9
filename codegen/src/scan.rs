//! Reading a crate's commands from its source: every
//! `#[derive(IpcCommand)]` struct, through the same model the proc-macro
//! uses, into the same [`Manifest`] the router publishes.
//!
//! The scan sees what the source says. A field of a custom type gets its
//! kind from a `#[derive(ArgEnum)]` enum found in the same sources; a
//! hand-written `IpcCommand` impl, or a name chosen at run time through an
//! `#[ipc(method)]` field, is invisible to it: use the host's
//! `IpcRouter::manifest()` for those.
//!
//! Given a crate directory (one with `Cargo.toml` and `src/`), only `src/`
//! is read: tests, examples and benches often declare commands of their
//! own that the crate does not serve. Items under `#[cfg(test)]`, and the
//! files of `#[cfg(test)] mod name;`, are skipped for the same reason. A file that is not valid Rust, or a derive
//! hidden behind `cfg_attr`, becomes a [`ScanWarning`] rather than a
//! failure, so one stray file does not stop the wrappers of the rest.

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

/// Something the scan skipped, which the user should know about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanWarning {
    /// The file.
    pub path: PathBuf,
    /// What was skipped, and what to do about it.
    pub message: String,
}

impl fmt::Display for ScanWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// What a scan found.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ScanReport {
    /// The commands.
    pub manifest: Manifest,
    /// What was skipped.
    pub warnings: Vec<ScanWarning>,
}

/// Scans every `.rs` file under `dir` (only `dir/src` when `dir` is a crate;
/// skipping `target` and hidden directories) and returns the manifest of its
/// commands.
///
/// # Errors
///
/// A [`ScanError`] naming the file.
pub fn scan_dir(dir: &Path) -> Result<ScanReport, ScanError> {
    let root = if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
        dir.join("src")
    } else {
        dir.to_path_buf()
    };
    let mut files = Vec::new();
    collect_rust_files(&root, &mut files)?;
    files.sort();
    let mut parsed = Vec::with_capacity(files.len());
    let mut warnings = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).map_err(|source| ScanError::Io {
            path: path.clone(),
            source,
        })?;
        match syn::parse_file(&text) {
            Ok(file) => parsed.push((path, file)),
            Err(error) => {
                warnings.push(ScanWarning {
                    message: format!(
                        "skipped, not valid Rust ({error}); its commands, if any, are missing \
                         from the manifest: `cargo check` shows where it goes wrong"
                    ),
                    path,
                });
            }
        }
    }
    // Files behind `#[cfg(test)] mod name;` are test code too.
    let test_only: Vec<PathBuf> = parsed
        .iter()
        .flat_map(|(path, file)| test_module_paths(path, file))
        .collect();
    parsed.retain(|(path, _)| !test_only.iter().any(|skip| path.starts_with(skip)));
    let mut report = scan_files(&parsed)?;
    warnings.append(&mut report.warnings);
    report.warnings = warnings;
    Ok(report)
}

/// Scans parsed files.
///
/// # Errors
///
/// As [`scan_dir`].
pub fn scan_files(files: &[(PathBuf, syn::File)]) -> Result<ScanReport, ScanError> {
    let mut enums: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut structs: Vec<(&Path, &syn::ItemStruct)> = Vec::new();
    let mut warnings = Vec::new();
    for (path, file) in files {
        visit_items(&file.items, &mut |item| {
            let attrs = match item {
                syn::Item::Enum(item) => &item.attrs,
                syn::Item::Struct(item) => &item.attrs,
                _ => return,
            };
            if let Some(name) = ["IpcCommand", "ArgEnum"]
                .into_iter()
                .find(|name| derives_conditionally(attrs, name))
            {
                warnings.push(ScanWarning {
                    path: path.clone(),
                    message: format!(
                        "`{}` derives `{name}` under `cfg_attr`, which the scan cannot \
                         evaluate, so it is skipped; derive it unconditionally, or take the \
                         manifest from the host with `IpcRouter::manifest()`",
                        item_name(item)
                    ),
                });
            }
        });
        visit_items(&file.items, &mut |item| match item {
            syn::Item::Enum(item) if derives(&item.attrs, "ArgEnum") => {
                let input = syn::DeriveInput::from(item.clone());
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
        let input = syn::DeriveInput::from(item.clone());
        let model =
            CommandModel::from_derive_input(&input).map_err(|rejected| ScanError::Command {
                path: path.to_path_buf(),
                message: rejected.error.to_string(),
            })?;
        let schema = model
            .schema(|ty| {
                let name = last_ident(ty)?;
                enums.get(&name).cloned().map(ValueKind::enum_of)
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
    Ok(ScanReport {
        manifest: Manifest::new(commands.into_values().collect()),
        warnings,
    })
}

/// Every item outside `#[cfg(test)]`, descending into inline modules.
fn visit_items<'a>(items: &'a [syn::Item], visit: &mut impl FnMut(&'a syn::Item)) {
    for item in items {
        if item_attrs(item).is_some_and(test_only) {
            continue;
        }
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

/// Where the modules a file declares as `#[cfg(test)] mod name;` live:
/// `name.rs` and the directory `name/` beside it (or the `#[path]` given).
fn test_module_paths(path: &Path, file: &syn::File) -> Vec<PathBuf> {
    fn walk(items: &[syn::Item], dir: &Path, file_dir: &Path, out: &mut Vec<PathBuf>) {
        for item in items {
            let syn::Item::Mod(module) = item else {
                continue;
            };
            let name = module.ident.to_string();
            match &module.content {
                Some((_, inner)) if !test_only(&module.attrs) => {
                    walk(inner, &dir.join(&name), file_dir, out);
                }
                Some(_) => {}
                None if test_only(&module.attrs) => match path_attr(&module.attrs) {
                    Some(explicit) => out.push(file_dir.join(explicit)),
                    None => {
                        out.push(dir.join(format!("{name}.rs")));
                        out.push(dir.join(&name));
                    }
                },
                None => {}
            }
        }
    }
    let file_dir = path.parent().unwrap_or(Path::new(""));
    // `lib.rs`, `main.rs` and `mod.rs` own their directory; `a.rs` owns `a/`.
    let module_dir = match path.file_name().and_then(|n| n.to_str()) {
        Some("lib.rs" | "main.rs" | "mod.rs") => file_dir.to_path_buf(),
        _ => file_dir.join(path.file_stem().unwrap_or_default()),
    };
    let mut out = Vec::new();
    walk(&file.items, &module_dir, file_dir, &mut out);
    out
}

/// The value of `#[path = "..."]`, if present.
fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| match &attr.meta {
        syn::Meta::NameValue(pair) if pair.path.is_ident("path") => match &pair.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            }) => Some(text.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Whether a `#[cfg_attr(..., derive(..., name))]` is present.
fn derives_conditionally(attrs: &[syn::Attribute], name: &str) -> bool {
    fn mentions(tokens: proc_macro2::TokenStream, name: &str) -> bool {
        tokens.into_iter().any(|tree| match tree {
            proc_macro2::TokenTree::Ident(ident) => ident == name,
            proc_macro2::TokenTree::Group(group) => mentions(group.stream(), name),
            _ => false,
        })
    }
    attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg_attr"))
        .any(|attr| match &attr.meta {
            syn::Meta::List(list) => mentions(list.tokens.clone(), name),
            _ => false,
        })
}

/// Whether the attributes compile the item only for tests: `#[cfg(test)]`,
/// or `#[cfg(all(..., test, ...))]`.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    fn requires_test(meta: &syn::Meta) -> bool {
        match meta {
            syn::Meta::Path(path) => path.is_ident("test"),
            syn::Meta::List(list) if list.path.is_ident("all") => list
                .parse_args_with(
                    syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
                )
                .is_ok_and(|items| items.iter().any(requires_test)),
            _ => false,
        }
    }
    attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .any(|attr| {
            attr.parse_args::<syn::Meta>()
                .is_ok_and(|m| requires_test(&m))
        })
}

fn item_attrs(item: &syn::Item) -> Option<&[syn::Attribute]> {
    Some(match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => return None,
    })
}

fn item_name(item: &syn::Item) -> String {
    match item {
        syn::Item::Enum(i) => i.ident.to_string(),
        syn::Item::Struct(i) => i.ident.to_string(),
        _ => String::new(),
    }
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
