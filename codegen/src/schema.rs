//! What a command accepts, as data: the schema that `#[derive(IpcCommand)]`
//! emits as a constant, that the router publishes in its manifest, and that
//! the code generators read back.
//!
//! A schema is plain data with `Cow<'static, _>` fields, so the derive can
//! build it in a `const` (no allocation, no reflection at run time) and a
//! manifest can deserialize into the very same type.
//!
//! ```
//! use gangway_codegen::schema::{ParamSchema, ToolSchema, ValueKind};
//!
//! let schema = ToolSchema::new("web_search")
//!     .with_description("Search the web and print the top results.")
//!     .with_param(ParamSchema::new("query", ValueKind::String).positional(0))
//!     .with_param(ParamSchema::new("limit", ValueKind::UInt).short('n').default_text("10"));
//!
//! assert_eq!(schema.param("limit").unwrap().long, "limit");
//! assert_eq!(schema.positional_names().collect::<Vec<_>>(), ["query"]);
//! ```

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// The schema of one command or tool: its name, what it does, and every
/// argument it takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolSchema {
    /// The command's name: the method on the wire and the wrapper's file name.
    pub name: Cow<'static, str>,
    /// One paragraph saying what the command does (the first paragraph of its
    /// doc comment).
    #[serde(default)]
    pub description: Cow<'static, str>,
    /// The rest of the doc comment, shown by `--help` after the description.
    #[serde(default, skip_serializing_if = "str_is_empty")]
    pub long_description: Cow<'static, str>,
    /// The arguments, in declaration order.
    #[serde(default)]
    pub params: Cow<'static, [ParamSchema]>,
    /// How shell words become arguments.
    #[serde(default)]
    pub binding: ArgBinding,
    /// What calling the command does beyond answering (read-only,
    /// destructive, idempotent, open world): hints for a client deciding
    /// whether to ask first. Left out of the JSON when none is set.
    #[serde(default, skip_serializing_if = "Annotations::is_empty")]
    pub annotations: Annotations,
    /// The JSON Schema of what a successful call answers
    /// (`#[ipc(output_schema)]`), for an MCP tool's `outputSchema`. Set by
    /// the router when the command is registered (a generated schema is not
    /// a constant); left out of the JSON when there is none, and absent
    /// from an older manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<OutputSchema>,
}

/// One argument of a command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ParamSchema {
    /// The key on the wire and in `ToolArgs::named` (serde's name for the field).
    pub name: Cow<'static, str>,
    /// The long flag on the command line, without the leading `--`
    /// (`max_results` is `--max-results`).
    pub long: Cow<'static, str>,
    /// The short flag, without the leading `-`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short: Option<char>,
    /// Other names accepted on the wire and as long flags.
    #[serde(default, skip_serializing_if = "slice_is_empty")]
    pub aliases: Cow<'static, [Cow<'static, str>]>,
    /// The type of one value.
    pub kind: ValueKind,
    /// Whether the argument takes a list of values (`Vec<T>`): a repeatable
    /// option, or for the last positional, all remaining words.
    #[serde(default, skip_serializing_if = "is_false")]
    pub repeatable: bool,
    /// Whether a call must give this argument.
    #[serde(default)]
    pub required: bool,
    /// Whether the value may be absent altogether (`Option<T>`): the handler
    /// can tell "not given" from any value.
    #[serde(default, skip_serializing_if = "is_false")]
    pub optional: bool,
    /// The value used when the argument is missing, as text, when it is known
    /// at compile time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Cow<'static, str>>,
    /// One paragraph saying what the argument is for.
    #[serde(default)]
    pub description: Cow<'static, str>,
    /// Where the argument sits among the positionals (0-based), if it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub positional: Option<u16>,
    /// Whether piped standard input fills this argument.
    #[serde(default, skip_serializing_if = "is_false")]
    pub stdin: bool,
    /// How many words one occurrence of the option takes, when not one
    /// (clap's `num_args`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumes: Option<ValueCount>,
    /// Whether help and JSON Schema leave the argument out (it is still
    /// accepted).
    #[serde(default, skip_serializing_if = "is_false")]
    pub hidden: bool,
    /// Whether the value is a secret: gangway keeps it out of call info,
    /// audit records, error messages and Debug output; help marks it
    /// `(secret)`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub secret: bool,
}

/// How many values one occurrence of an option takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueCount {
    /// At least this many.
    pub min: u16,
    /// At most this many; `None` for no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u16>,
}

/// The type of one argument value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ValueKind {
    /// UTF-8 text.
    String,
    /// A signed integer.
    Int,
    /// An unsigned integer.
    #[serde(rename = "uint")]
    UInt,
    /// A floating-point number.
    Float,
    /// `true` or `false`; on the command line a flag that takes no value.
    Bool,
    /// Raw bytes (binary-safe; typically piped standard input).
    Bytes,
    /// A file-system path.
    Path,
    /// Any JSON value, written as JSON text on the command line.
    Json,
    /// One of a fixed set of names.
    Enum(Cow<'static, [Cow<'static, str>]>),
    /// A flag counted by its occurrences (`-vvv` is 3).
    Count,
}

/// How a tool's shell words become arguments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ArgBinding {
    /// The schema decides: flags, values and positionals are split and typed.
    #[default]
    Typed,
    /// Every word is handed over untouched, in order, for the tool's own parser.
    Verbatim,
}

/// Every command a host exposes: what the code generators read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Manifest {
    /// The manifest format version; [`Manifest::FORMAT`] for this crate.
    pub format: u32,
    /// The commands, sorted by name.
    pub commands: Vec<ToolSchema>,
}

/// The type of an argument field, known at compile time.
///
/// `#[derive(IpcCommand)]` reads the kind of common types (`String`, integers,
/// `bool`, `PathBuf`, `Vec<T>`, `Option<T>`, ...) from the field's type
/// directly; for any other type it asks this trait, so a field of a custom
/// type compiles only when the type says how it looks on the command line.
/// `#[derive(ArgEnum)]` implements it for enums of unit variants.
///
/// ```
/// use gangway_codegen::schema::{ArgType, ValueKind};
///
/// /// A URL, written as text on the command line.
/// struct Url(String);
///
/// impl ArgType for Url {
///     const KIND: ValueKind = ValueKind::String;
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a command argument: gangway does not know how it is written on the command line",
    label = "this type has no `ArgType` impl",
    note = "derive `gangway::ArgEnum` for an enum of unit variants, implement `gangway::tool::ArgType` for a type of your own (e.g. `const KIND: ValueKind = ValueKind::String;`), use `serde_json::Value` for free-form JSON, or mark the field `#[ipc(state)]` if it is not an argument",
    note = "a type alias of `Option<T>`, `Vec<T>` or `bool` is not seen through: write the type out"
)]
pub trait ArgType {
    /// How one value of this type is written and checked.
    const KIND: ValueKind;
}

macro_rules! arg_types {
    ($kind:ident: $($ty:ty),* $(,)?) => {
        $(impl ArgType for $ty { const KIND: ValueKind = ValueKind::$kind; })*
    };
}

arg_types!(String: String, str, char, Box<str>, std::rc::Rc<str>, std::sync::Arc<str>, Cow<'_, str>);
arg_types!(Int: i8, i16, i32, i64, i128, isize);
arg_types!(UInt: u8, u16, u32, u64, u128, usize);
arg_types!(UInt: std::num::NonZeroU8, std::num::NonZeroU16, std::num::NonZeroU32, std::num::NonZeroU64, std::num::NonZeroUsize);
arg_types!(Int: std::num::NonZeroI8, std::num::NonZeroI16, std::num::NonZeroI32, std::num::NonZeroI64, std::num::NonZeroIsize);
arg_types!(Float: f32, f64);
arg_types!(Bool: bool);
arg_types!(Path: std::path::PathBuf, std::path::Path, Box<std::path::Path>);
arg_types!(Json: serde_json::Value, serde_json::Map<String, serde_json::Value>);

// serde hands `skip_serializing_if` a reference to the field's own type.
#[allow(clippy::ptr_arg)]
fn str_is_empty(text: &Cow<'static, str>) -> bool {
    text.is_empty()
}

#[allow(clippy::ptr_arg)]
fn slice_is_empty<T: Clone>(items: &Cow<'static, [T]>) -> bool {
    items.is_empty()
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl ToolSchema {
    /// A schema with a name and nothing else: no description, no parameters,
    /// typed binding.
    pub fn new(name: impl Into<Cow<'static, str>>) -> Self {
        ToolSchema {
            name: name.into(),
            description: Cow::Borrowed(""),
            long_description: Cow::Borrowed(""),
            params: Cow::Borrowed(&[]),
            binding: ArgBinding::Typed,
            annotations: Annotations::default(),
            output_schema: None,
        }
    }

    /// Builds a schema in a `const`; what the derive macros emit.
    #[doc(hidden)]
    pub const fn __from_static(
        name: &'static str,
        description: &'static str,
        long_description: &'static str,
        params: &'static [ParamSchema],
        binding: ArgBinding,
        annotations: Annotations,
    ) -> Self {
        ToolSchema {
            name: Cow::Borrowed(name),
            description: Cow::Borrowed(description),
            long_description: Cow::Borrowed(long_description),
            params: Cow::Borrowed(params),
            binding,
            annotations,
            output_schema: None,
        }
    }

    /// Sets the one-paragraph description.
    pub fn with_description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.description = description.into();
        self
    }

    /// Sets the long description shown by `--help` after the first paragraph.
    pub fn with_long_description(mut self, text: impl Into<Cow<'static, str>>) -> Self {
        self.long_description = text.into();
        self
    }

    /// Appends a parameter.
    pub fn with_param(mut self, param: ParamSchema) -> Self {
        self.params.to_mut().push(param);
        self
    }

    /// Sets how shell words become arguments.
    pub fn with_binding(mut self, binding: ArgBinding) -> Self {
        self.binding = binding;
        self
    }

    /// Sets the behaviour hints (read-only, destructive, idempotent, open
    /// world).
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Sets the output schema: what a successful call answers.
    pub fn with_output_schema(mut self, output: OutputSchema) -> Self {
        self.output_schema = Some(output);
        self
    }

    /// The same schema under another name (a command registered under an
    /// alias), with the same parameters and hints.
    pub fn renamed(&self, name: impl Into<Cow<'static, str>>) -> Self {
        ToolSchema {
            name: name.into(),
            ..self.clone()
        }
    }

    /// The parameter with this wire name or alias.
    pub fn param(&self, name: &str) -> Option<&ParamSchema> {
        self.params
            .iter()
            .find(|p| p.name == name || p.aliases.iter().any(|a| a == name))
    }

    /// The positional parameters, in position order.
    pub fn positionals(&self) -> impl Iterator<Item = &ParamSchema> {
        let mut positionals: Vec<&ParamSchema> = self
            .params
            .iter()
            .filter(|p| p.positional.is_some())
            .collect();
        positionals.sort_by_key(|p| p.positional);
        positionals.into_iter()
    }

    /// The wire names of the positional parameters, in position order.
    pub fn positional_names(&self) -> impl Iterator<Item = &str> {
        self.positionals().map(|p| &*p.name)
    }

    /// The parameter that piped standard input fills, if any.
    pub fn stdin_param(&self) -> Option<&ParamSchema> {
        self.params.iter().find(|p| p.stdin)
    }
}

impl ParamSchema {
    /// An optional named parameter whose long flag is derived from `name`
    /// (`max_results` becomes `--max-results`).
    pub fn new(name: impl Into<Cow<'static, str>>, kind: ValueKind) -> Self {
        let name = name.into();
        let long = Cow::Owned(cli_long_name(&name));
        ParamSchema {
            name,
            long,
            short: None,
            aliases: Cow::Borrowed(&[]),
            kind,
            repeatable: false,
            required: false,
            optional: false,
            default: None,
            description: Cow::Borrowed(""),
            positional: None,
            stdin: false,
            consumes: None,
            hidden: false,
            secret: false,
        }
    }

    /// Builds a parameter from every field; what the macros emit, in a
    /// `const` for `#[derive(IpcCommand)]` (whose default text is a literal)
    /// and once at run time for `#[tool]` (whose kind and default text may
    /// come from trait impls).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub const fn __from_static(
        name: &'static str,
        long: &'static str,
        short: Option<char>,
        aliases: &'static [Cow<'static, str>],
        kind: ValueKind,
        repeatable: bool,
        required: bool,
        optional: bool,
        default: Option<Cow<'static, str>>,
        description: &'static str,
        positional: Option<u16>,
        stdin: bool,
        consumes: Option<ValueCount>,
        hidden: bool,
        secret: bool,
    ) -> Self {
        ParamSchema {
            name: Cow::Borrowed(name),
            long: Cow::Borrowed(long),
            short,
            aliases: Cow::Borrowed(aliases),
            kind,
            repeatable,
            required,
            optional,
            default,
            description: Cow::Borrowed(description),
            positional,
            stdin,
            consumes,
            hidden,
            secret,
        }
    }

    /// Sets the long flag (without `--`).
    pub fn long(mut self, long: impl Into<Cow<'static, str>>) -> Self {
        self.long = long.into();
        self
    }

    /// Sets the short flag (without `-`).
    pub fn short(mut self, short: char) -> Self {
        self.short = Some(short);
        self
    }

    /// Adds another accepted name.
    pub fn alias(mut self, alias: impl Into<Cow<'static, str>>) -> Self {
        self.aliases.to_mut().push(alias.into());
        self
    }

    /// Marks the argument as required.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// Marks the value as optional (`Option<T>`): absent is distinct from
    /// every value.
    pub fn optional(mut self) -> Self {
        self.optional = true;
        self
    }

    /// Makes the argument a list of values.
    pub fn repeatable(mut self) -> Self {
        self.repeatable = true;
        self
    }

    /// Sets the default, as text.
    pub fn default_text(mut self, text: impl Into<Cow<'static, str>>) -> Self {
        self.default = Some(text.into());
        self
    }

    /// Sets the one-paragraph description.
    pub fn description(mut self, text: impl Into<Cow<'static, str>>) -> Self {
        self.description = text.into();
        self
    }

    /// Makes the argument the positional at `index` (0-based).
    pub fn positional(mut self, index: u16) -> Self {
        self.positional = Some(index);
        self
    }

    /// Makes piped standard input fill this argument.
    pub fn stdin(mut self) -> Self {
        self.stdin = true;
        self
    }

    /// Marks the value as a secret (an API key, a password): kept out of
    /// call info, audit records, error messages and Debug output, and
    /// marked `(secret)` in help.
    pub fn secret(mut self) -> Self {
        self.secret = true;
        self
    }

    /// Sets how many words one occurrence takes.
    pub fn consumes(mut self, min: u16, max: Option<u16>) -> Self {
        self.consumes = Some(ValueCount { min, max });
        self
    }

    /// Whether the argument is a flag that takes no value word on the command
    /// line (a bool or a count, unless it declares a value count);
    /// `--flag=value` still gives one explicitly.
    pub fn is_flag(&self) -> bool {
        matches!(self.kind, ValueKind::Bool | ValueKind::Count)
            && self.consumes.is_none()
            && !self.repeatable
            && self.positional.is_none()
    }

    /// Whether one value of the argument is a list of several words
    /// (`num_args` above one, or unbounded).
    pub fn takes_several(&self) -> bool {
        self.consumes.is_some_and(|c| c.max != Some(1))
    }

    /// Whether the argument's value is a list: repeatable, or several words
    /// per occurrence.
    pub fn is_list(&self) -> bool {
        self.repeatable || self.takes_several()
    }
}

impl ValueKind {
    /// One of these names.
    pub fn enum_of(values: impl IntoIterator<Item = String>) -> Self {
        ValueKind::Enum(
            values
                .into_iter()
                .map(Cow::Owned)
                .collect::<Vec<_>>()
                .into(),
        )
    }

    /// A short lowercase name for messages and help (`uint`, `enum`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            ValueKind::String => "string",
            ValueKind::Int => "int",
            ValueKind::UInt => "uint",
            ValueKind::Float => "float",
            ValueKind::Bool => "bool",
            ValueKind::Bytes => "bytes",
            ValueKind::Path => "path",
            ValueKind::Json => "json",
            ValueKind::Enum(_) => "enum",
            ValueKind::Count => "count",
        }
    }

    /// Whether a value of this kind can hold arbitrary text or bytes, as
    /// piped standard input needs.
    pub fn is_text_or_bytes(&self) -> bool {
        matches!(self, ValueKind::String | ValueKind::Bytes)
    }
}

impl Manifest {
    /// The format version this crate writes and reads.
    pub const FORMAT: u32 = 1;

    /// A manifest of these commands, sorted by name.
    pub fn new(mut commands: Vec<ToolSchema>) -> Self {
        commands.sort_by(|a, b| a.name.cmp(&b.name));
        Manifest {
            format: Self::FORMAT,
            commands,
        }
    }

    /// The command with this name.
    pub fn command(&self, name: &str) -> Option<&ToolSchema> {
        self.commands.iter().find(|c| c.name == name)
    }
}

pub use crate::annotations::Annotations;
pub use crate::case::cli_long_name;
pub use crate::output_schema::{OutputSchema, OutputSchemaError};

/// The short flag of `--help`, which no argument may take.
pub(crate) const HELP_SHORT: char = 'h';
/// The long flag of help, which no argument may take.
pub(crate) const HELP_LONG: &str = "help";

/// The longest a command's name may be, in bytes.
pub const MAX_COMMAND_NAME: usize = 128;

/// Whether `name` is a valid command name: `[A-Za-z][A-Za-z0-9_-]*`, at
/// most [`MAX_COMMAND_NAME`] bytes. A command name becomes a file name and
/// a shell word, so nothing else is allowed.
pub fn is_valid_command_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= MAX_COMMAND_NAME
        && matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The candidate closest to `input`, if one is close enough to be a likely
/// typo (Jaro-Winkler similarity of at least 0.7, as clap uses). An input
/// over four times the longest candidate is no typo of any, and is not
/// compared (the comparison costs the product of the two lengths).
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let candidates: Vec<&'a str> = candidates.into_iter().collect();
    let longest = candidates.iter().map(|c| c.len()).max().unwrap_or(0);
    if input.len() > 4 * longest.max(8) {
        return None;
    }
    candidates
        .into_iter()
        .map(|candidate| (strsim::jaro_winkler(input, candidate), candidate))
        .filter(|(score, _)| *score >= 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_names() {
        assert!(is_valid_command_name("web_search"));
        assert!(is_valid_command_name("a-b9"));
        assert!(!is_valid_command_name("9a"));
        assert!(!is_valid_command_name(""));
        assert!(!is_valid_command_name("a b"));
        assert!(!is_valid_command_name("a;rm"));
        assert!(!is_valid_command_name("ünï"));
        assert!(is_valid_command_name(&"a".repeat(MAX_COMMAND_NAME)));
        assert!(!is_valid_command_name(&"a".repeat(MAX_COMMAND_NAME + 1)));
    }

    #[test]
    fn closest_suggests_typos_only() {
        let names = ["positional", "stdin", "state", "short", "method"];
        assert_eq!(closest("positonal", names), Some("positional"));
        assert_eq!(closest("stdn", names), Some("stdin"));
        assert_eq!(closest("zzzz", names), None);
        // Far longer than any candidate: not compared at all.
        let long = format!("positional{}", "x".repeat(100));
        assert_eq!(closest(&long, names), None);
    }

    #[test]
    fn schema_round_trips_through_json() {
        let schema = ToolSchema::new("pick")
            .with_description("Pick one.")
            .with_param(
                ParamSchema::new(
                    "mode",
                    ValueKind::Enum(vec!["fast".into(), "slow".into()].into()),
                )
                .required()
                .positional(0),
            )
            .with_param(ParamSchema::new("data", ValueKind::Bytes).stdin());
        let json = serde_json::to_string(&schema).unwrap();
        let back: ToolSchema = serde_json::from_str(&json).unwrap();
        assert_eq!(back, schema);
        assert!(
            json.contains(r#""kind":{"enum":["fast","slow"]}"#),
            "{json}"
        );
        assert!(!json.contains("annotations"), "{json}");
        let hinted = schema.with_annotations(Annotations::default().destructive());
        let json = serde_json::to_string(&hinted).unwrap();
        assert!(
            json.ends_with(r#""annotations":{"destructive":true}}"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<ToolSchema>(&json).unwrap(), hinted);
    }

    #[test]
    fn const_schema_is_possible() {
        const PARAMS: &[ParamSchema] = &[ParamSchema::__from_static(
            "query",
            "query",
            None,
            &[],
            ValueKind::String,
            false,
            true,
            false,
            None,
            "What to search for.",
            Some(0),
            false,
            None,
            false,
            false,
        )];
        const SCHEMA: &ToolSchema = &ToolSchema::__from_static(
            "search",
            "Search.",
            "",
            PARAMS,
            ArgBinding::Typed,
            Annotations::__from_static(true, false, false, true),
        );
        assert_eq!(SCHEMA.positional_names().collect::<Vec<_>>(), ["query"]);
        let renamed = SCHEMA.renamed("find");
        assert_eq!(renamed.name, "find");
        assert_eq!(renamed.annotations, SCHEMA.annotations);
    }
}
