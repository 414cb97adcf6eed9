//! The run-time half of `#[gangway::tool]`: the autoref probes for an
//! argument's kind ([`KindProbe`]) and its default's help text
//! ([`DefaultText`]), binding through clap, byte fields (which clap does not
//! take) and the help that lists them.

use std::borrow::Cow;
use std::fmt::Display;
use std::marker::PhantomData;

/// Autoref probe for the kind of a `#[tool]` argument whose type the syntax
/// does not tell: a `clap::ValueEnum` gives its names, an `ArgType` its
/// kind, anything else (parsed by clap from text) is text.
pub struct KindProbe<T>(PhantomData<fn() -> T>);

impl<T> KindProbe<T> {
    /// The probe for `T`.
    pub fn new() -> Self {
        KindProbe(PhantomData)
    }
}

impl<T> Default for KindProbe<T> {
    fn default() -> Self {
        KindProbe::new()
    }
}

impl<T> Clone for KindProbe<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for KindProbe<T> {}

/// First choice: the names of a `clap::ValueEnum`.
pub trait ViaValueEnum {
    /// The kind.
    fn kind(self) -> crate::tool::ValueKind;
}

impl<T: clap::ValueEnum> ViaValueEnum for &&KindProbe<T> {
    fn kind(self) -> crate::tool::ValueKind {
        crate::tool::ValueKind::Enum(Cow::Owned(value_enum_names::<T>()))
    }
}

/// Second choice: an `ArgType`'s kind.
pub trait ViaArgType {
    /// The kind.
    fn kind(self) -> crate::tool::ValueKind;
}

impl<T: crate::tool::ArgType> ViaArgType for &KindProbe<T> {
    fn kind(self) -> crate::tool::ValueKind {
        T::KIND
    }
}

/// Last choice: text.
pub trait ViaText {
    /// The kind.
    fn kind(self) -> crate::tool::ValueKind;
}

impl<T> ViaText for KindProbe<T> {
    fn kind(self) -> crate::tool::ValueKind {
        crate::tool::ValueKind::String
    }
}

/// The visible names of a `ValueEnum`'s variants.
pub fn value_enum_names<T: clap::ValueEnum>() -> Vec<Cow<'static, str>> {
    T::value_variants()
        .iter()
        .filter_map(|v| v.to_possible_value())
        .filter(|p| !p.is_hide_set())
        .map(|p| Cow::Owned(p.get_name().to_owned()))
        .collect()
}

/// Autoref probe for how help shows a `default_value_t`: a `ValueEnum` by
/// its name, anything else by `Display` (what clap requires).
pub struct DefaultText<'a, T>(pub &'a T);

/// First choice: a `ValueEnum`'s name.
pub trait DefaultViaValueEnum {
    /// The text.
    fn text(self) -> Option<Cow<'static, str>>;
}

impl<T: clap::ValueEnum> DefaultViaValueEnum for &&DefaultText<'_, T> {
    fn text(self) -> Option<Cow<'static, str>> {
        self.0
            .to_possible_value()
            .map(|p| Cow::Owned(p.get_name().to_owned()))
    }
}

/// Second choice: `Display`.
pub trait DefaultViaDisplay {
    /// The text.
    fn text(self) -> Option<Cow<'static, str>>;
}

impl<T: Display> DefaultViaDisplay for &DefaultText<'_, T> {
    fn text(self) -> Option<Cow<'static, str>> {
        Some(Cow::Owned(self.0.to_string()))
    }
}

/// The clap half of a `#[tool]`'s `bind`: flags set the clap way, argv
/// rendered by the schema with the byte fields left out, parsed by clap.
pub fn bind_with_clap<T: clap::Parser>(
    args: &crate::tool::ToolArgs,
    schema: &crate::tool::ToolSchema,
    byte_keys: &[&str],
) -> Result<T, crate::tool::ToolBindError> {
    let argv: Vec<String> = if schema.binding == crate::tool::ArgBinding::Verbatim {
        args.words_argv()
    } else {
        let mut args = args.clone();
        args.flagify_bool_named(schema);
        args.to_clap_argv(schema, byte_keys)?
    };
    T::try_parse_from(std::iter::once(schema.name.to_string()).chain(argv))
        .map_err(crate::tool::ToolBindError::from)
}

/// clap's value parser for a `serde_json::Value` field of a `#[tool]`: the
/// word is JSON text.
///
/// # Errors
///
/// The JSON parser's message, when the word is not JSON.
pub fn parse_json_arg(text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text).map_err(|error| format!("not valid JSON: {error}"))
}

/// The raw bytes of a `#[tool]` byte field: from its name, or from its
/// positional slot; `None` when not given.
pub fn tool_bytes(
    args: &crate::tool::ToolArgs,
    name: &str,
    positional: Option<usize>,
) -> Result<Option<Vec<u8>>, crate::tool::ToolBindError> {
    use crate::tool::Value;
    let value = args
        .named
        .get(name)
        .or_else(|| positional.and_then(|index| args.positional.get(index)));
    Ok(match value {
        None | Some(Value::Null) => None,
        Some(Value::Bytes(bytes)) => Some(bytes.clone()),
        Some(Value::String(text)) => Some(text.clone().into_bytes()),
        Some(other) => {
            let what = match other {
                Value::Bool(_) => "a boolean",
                Value::Int(_) | Value::Float(_) => "a number",
                _ => "JSON",
            };
            return Err(crate::tool::ToolBindError::usage(format!(
                "error: the argument `{name}` takes bytes or text, not {what}"
            )));
        }
    })
}

/// A required byte field that was not given.
#[cold]
pub fn missing_bytes(name: &str) -> crate::tool::ToolBindError {
    crate::tool::ToolBindError::usage(format!("error: the argument `{name}` is required"))
}

/// A `#[tool]`'s help: clap's own, with the byte fields (which clap skips)
/// listed too.
pub fn tool_help<T: clap::CommandFactory>(schema: &crate::tool::ToolSchema) -> String {
    let mut command = T::command();
    for param in schema
        .params
        .iter()
        .filter(|p| p.kind == crate::tool::ValueKind::Bytes)
    {
        let mut arg = clap::Arg::new(param.name.to_string())
            .help(param.description.to_string())
            .required(param.required)
            .value_name(param.long.to_uppercase());
        arg = match param.positional {
            Some(index) => arg.index(usize::from(index) + 1),
            None => arg.long(param.long.to_string()),
        };
        if let Some(short) = param.short {
            arg = arg.short(short);
        }
        command = command.arg(arg);
    }
    command.render_long_help().to_string()
}
