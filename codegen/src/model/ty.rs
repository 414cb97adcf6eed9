//! What an argument field's Rust type means on the command line: optional or
//! required, one value or a list, and the kind of each value.
//!
//! Common types are read from the syntax, so the proc-macro and the source
//! scanner agree without type information. Any other type is left to the
//! `ArgType` trait, which the compiler resolves for the macro.

use syn::{GenericArgument, PathArguments, Type};

use crate::schema::ValueKind;

/// Where a value's kind comes from.
#[derive(Debug, Clone)]
pub enum KindSource {
    /// Known from the type's syntax.
    Known(ValueKind),
    /// A type the syntax does not tell; `<T as ArgType>::KIND` decides.
    Named(Box<Type>),
}

/// How the generated decoder reads a value off the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decode {
    /// Through the type's own `Deserialize`.
    Plain,
    /// As raw bytes (MessagePack `bin`, a string, or an array of integers),
    /// then converted with `Into` to the field's bytes type.
    Bytes,
}

/// The meaning of an argument field's type.
#[derive(Debug, Clone)]
pub struct ArgShape {
    /// `Option<T>`: the argument may be missing.
    pub optional: bool,
    /// `Vec<T>` and other collections: a list of values.
    pub repeatable: bool,
    /// The kind of one value.
    pub kind: KindSource,
    /// How to decode it.
    pub decode: Decode,
}

/// Why a type cannot be an argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShapeError {
    /// A reference type: arguments are decoded into owned values.
    Borrowed,
}

/// Reads the meaning of an argument field's type.
pub fn classify(ty: &Type) -> Result<ArgShape, ShapeError> {
    let ty = peel(ty);
    if let Type::Reference(_) = ty {
        return Err(ShapeError::Borrowed);
    }
    let (optional, inner) = match generic_arg(ty, &["Option"]) {
        Some(inner) => (true, peel(inner)),
        None => (false, ty),
    };
    if let Type::Reference(_) = inner {
        return Err(ShapeError::Borrowed);
    }
    if is_bytes(inner) {
        return Ok(ArgShape {
            optional,
            repeatable: false,
            kind: KindSource::Known(ValueKind::Bytes),
            decode: Decode::Bytes,
        });
    }
    let collection = [
        "Vec",
        "VecDeque",
        "BTreeSet",
        "HashSet",
        "IndexSet",
        "LinkedList",
    ];
    let (repeatable, element) = match generic_arg(inner, &collection) {
        Some(element) => (true, peel(element)),
        None => (false, inner),
    };
    if let Type::Reference(_) = element {
        return Err(ShapeError::Borrowed);
    }
    Ok(ArgShape {
        optional,
        repeatable,
        kind: scalar_kind(element).map_or_else(
            || KindSource::Named(Box::new(element.clone())),
            KindSource::Known,
        ),
        decode: Decode::Plain,
    })
}

/// Whether one value of the type is `true` or `false`: `bool` (a flag on
/// the command line) or `Option<bool>` (an option that takes the value);
/// the models tell the two apart by [`ArgShape::optional`].
pub fn is_bool(ty: &Type) -> bool {
    let ty = peel(ty);
    let value = generic_arg(ty, &["Option"]).map_or(ty, peel);
    last_ident(value).is_some_and(|(name, args)| name == "bool" && args.is_none())
}

/// Whether the type is `char` (text, but one character: never stdin).
pub fn is_char(ty: &Type) -> bool {
    last_ident(peel(ty)).is_some_and(|(name, args)| name == "char" && args.is_none())
}

/// Whether the type is `String`.
pub fn is_string(ty: &Type) -> bool {
    last_ident(peel(ty)).is_some_and(|(name, args)| name == "String" && args.is_none())
}

/// Strips invisible groups and parentheses.
fn peel(mut ty: &Type) -> &Type {
    loop {
        match ty {
            Type::Group(group) => ty = &group.elem,
            Type::Paren(paren) => ty = &paren.elem,
            _ => return ty,
        }
    }
}

/// The last path segment's name and its angle-bracketed arguments.
fn last_ident(ty: &Type) -> Option<(String, Option<&syn::AngleBracketedGenericArguments>)> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let segment = path.path.segments.last()?;
    let args = match &segment.arguments {
        PathArguments::AngleBracketed(args) => Some(args),
        _ => None,
    };
    Some((segment.ident.to_string(), args))
}

/// `T` when the type is `Name<T>` for one of `names`.
fn generic_arg<'a>(ty: &'a Type, names: &[&str]) -> Option<&'a Type> {
    let (name, args) = last_ident(ty)?;
    if !names.contains(&name.as_str()) {
        return None;
    }
    let mut types = args?.args.iter().filter_map(|arg| match arg {
        GenericArgument::Type(ty) => Some(ty),
        _ => None,
    });
    // The first type argument is the element; `HashSet<T, S>` adds a hasher.
    types.next()
}

fn is_bytes(ty: &Type) -> bool {
    if let Some(element) = generic_arg(ty, &["Vec"]) {
        return is_u8(peel(element));
    }
    if let Some(Type::Slice(slice)) = generic_arg(ty, &["Box"]).map(peel) {
        return is_u8(peel(&slice.elem));
    }
    matches!(last_ident(ty), Some((name, None)) if name == "ByteBuf" || name == "Bytes")
        || is_input_stream(ty)
}

/// `gangway::ipc::InputStream` (by its last segment, as the derive sees
/// types): bytes that a served call streams in as they arrive.
pub fn is_input_stream(ty: &Type) -> bool {
    matches!(last_ident(peel(ty)), Some((name, None)) if name == "InputStream")
}

/// How a handler's response travels when it is raw bytes written as a
/// plain byte container (`Vec<u8>`, `Box<[u8]>`), which serde would
/// otherwise send as an array of numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteResponse {
    /// The response is the bytes.
    Whole,
    /// The response is a `Result` (or `CommandResult`) whose success is the
    /// bytes.
    InResult,
}

/// Whether a response type is raw bytes in a container serde writes as a
/// sequence, so the derive sends it as MessagePack `bin` (printed byte for
/// byte). `ByteBuf`/`Bytes` already serialize as `bin`.
pub fn byte_response(ty: &Type) -> Option<ByteResponse> {
    let ty = peel(ty);
    if is_byte_container(ty) {
        return Some(ByteResponse::Whole);
    }
    generic_arg(ty, &["Result", "CommandResult"])
        .filter(|ok| is_byte_container(peel(ok)))
        .map(|_| ByteResponse::InResult)
}

/// `Vec<u8>` or `Box<[u8]>`.
fn is_byte_container(ty: &Type) -> bool {
    is_bytes(ty)
        && !is_input_stream(ty)
        && !matches!(last_ident(ty), Some((name, None)) if name == "ByteBuf" || name == "Bytes")
}

fn is_u8(ty: &Type) -> bool {
    matches!(last_ident(ty), Some((name, None)) if name == "u8")
}

fn scalar_kind(ty: &Type) -> Option<ValueKind> {
    if let Some(inner) = generic_arg(ty, &["Box", "Arc", "Rc", "Cow"]) {
        return match last_ident(peel(inner)) {
            Some((name, None)) if name == "str" => Some(ValueKind::String),
            Some((name, None)) if name == "Path" => Some(ValueKind::Path),
            _ => None,
        };
    }
    let (name, args) = last_ident(ty)?;
    if args.is_some() {
        return None;
    }
    let Type::Path(path) = ty else { return None };
    let qualified = path.path.segments.len() > 1;
    Some(match name.as_str() {
        "String" | "char" => ValueKind::String,
        "bool" => ValueKind::Bool,
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => ValueKind::Int,
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => ValueKind::UInt,
        "f32" | "f64" => ValueKind::Float,
        "PathBuf" | "Utf8PathBuf" => ValueKind::Path,
        // Only the fully qualified `serde_json::Value`; a bare `Value` may be
        // anything.
        "Value" if qualified && path.path.segments.iter().any(|s| s.ident == "serde_json") => {
            ValueKind::Json
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(src: &str) -> ArgShape {
        classify(&syn::parse_str(src).unwrap()).unwrap()
    }

    fn known(shape: &ArgShape) -> ValueKind {
        match &shape.kind {
            KindSource::Known(kind) => kind.clone(),
            KindSource::Named(ty) => panic!("named {}", quote::quote!(#ty)),
        }
    }

    #[test]
    fn scalars() {
        assert_eq!(known(&shape("String")), ValueKind::String);
        assert_eq!(known(&shape("u32")), ValueKind::UInt);
        assert_eq!(known(&shape("i64")), ValueKind::Int);
        assert_eq!(known(&shape("f64")), ValueKind::Float);
        assert_eq!(known(&shape("bool")), ValueKind::Bool);
        assert_eq!(known(&shape("std::path::PathBuf")), ValueKind::Path);
        assert_eq!(known(&shape("Box<str>")), ValueKind::String);
        assert_eq!(known(&shape("serde_json::Value")), ValueKind::Json);
        assert!(matches!(shape("Value").kind, KindSource::Named(_)));
        assert!(matches!(shape("Mode").kind, KindSource::Named(_)));
    }

    #[test]
    fn wrappers() {
        let s = shape("Option<u32>");
        assert!(s.optional && !s.repeatable);
        assert_eq!(known(&s), ValueKind::UInt);
        let s = shape("Vec<String>");
        assert!(!s.optional && s.repeatable);
        let s = shape("Option<Vec<Mode>>");
        assert!(s.optional && s.repeatable);
        assert!(matches!(s.kind, KindSource::Named(_)));
    }

    #[test]
    fn bytes() {
        for src in [
            "Vec<u8>",
            "Box<[u8]>",
            "bytes::Bytes",
            "serde_bytes::ByteBuf",
            "gangway::ipc::InputStream",
        ] {
            let s = shape(src);
            assert_eq!(known(&s), ValueKind::Bytes, "{src}");
            assert_eq!(s.decode, Decode::Bytes);
            assert!(!s.repeatable);
        }
        let s = shape("Option<Vec<u8>>");
        assert!(s.optional);
        assert_eq!(known(&s), ValueKind::Bytes);
    }

    #[test]
    fn bools_are_what_the_shape_calls_bool() {
        for (src, want) in [
            ("bool", true),
            ("Option<bool>", true),
            ("std::primitive::bool", true),
            ("Vec<bool>", false),
            ("Option<Vec<bool>>", false),
            ("Box<bool>", false),
            ("Option<Option<bool>>", false),
            ("u8", false),
        ] {
            let ty: Type = syn::parse_str(src).unwrap();
            let shape = classify(&ty).unwrap();
            let one_bool =
                matches!(shape.kind, KindSource::Known(ValueKind::Bool)) && !shape.repeatable;
            assert_eq!(is_bool(&ty), want, "{src}");
            assert_eq!(one_bool, want, "{src}: the shape agrees");
        }
    }

    #[test]
    fn references_are_refused() {
        for src in ["&'static str", "Option<&'static str>", "Vec<&'static str>"] {
            assert_eq!(
                classify(&syn::parse_str(src).unwrap()).unwrap_err(),
                ShapeError::Borrowed
            );
        }
    }
}
