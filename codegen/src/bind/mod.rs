//! The one argument binder: shell words or a JSON object in, [`ToolArgs`]
//! out, with the schema deciding which flags take values and what type each
//! value has.
//!
//! | module | what it holds |
//! | --- | --- |
//! | this one | [`BindError`], the lookups of a parameter by flag or name, the check of required arguments, the messages both binders share |
//! | `words` | shell words: long and short flags, clusters, option values ([`ToolSchema::parse_words`]) |
//! | `json` | a JSON object of arguments, as an LLM tool call gives it ([`ToolSchema::parse_json`]) |
//! | `positionals` | the loose words and named values of positional parameters put in place, for both |
//! | `value` | one word or JSON value typed by its parameter's kind |
//! | `bytes` | a bytes value in JSON: a string, or `{"base64": "..."}` |
//!
//! ```
//! use gangway_codegen::args::Value;
//! use gangway_codegen::schema::{ParamSchema, ToolSchema, ValueKind};
//!
//! let schema = ToolSchema::new("search")
//!     .with_param(ParamSchema::new("query", ValueKind::String).positional(0).required())
//!     .with_param(ParamSchema::new("limit", ValueKind::UInt).short('n'))
//!     .with_param(ParamSchema::new("verbose", ValueKind::Bool).short('v'));
//!
//! // `-v` is a flag, so `rust` is the query; `-n5` is the limit.
//! let args = schema.parse_words(&["-v", "rust", "-n5"]).unwrap();
//! assert_eq!(args.positional, [Value::String("rust".into())]);
//! assert_eq!(args.named["limit"], Value::Int(5));
//! assert!(args.flags.contains("verbose"));
//!
//! let err = schema.parse_words(&["--limt", "5"]).unwrap_err();
//! assert_eq!(err.to_string(), "unknown flag `--limt`; did you mean `--limit`?");
//! ```

use std::borrow::Cow;
use std::fmt;

use crate::args::ToolArgs;
use crate::schema::{
    HELP_LONG, HELP_SHORT, ParamSchema, ToolSchema, ValueKind, cli_long_name, closest,
};

mod bytes;
mod json;
mod positionals;
mod value;
mod words;

/// Why words or a JSON object could not be bound to a schema: a usage error,
/// naming the argument and, where one is close, the spelling meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindError {
    kind: BindErrorKind,
    message: String,
    argument: Option<String>,
    suggestion: Option<String>,
}

/// What kind of usage error a [`BindError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BindErrorKind {
    /// A flag the command does not have.
    UnknownFlag,
    /// A flag that needs a value came without one.
    MissingValue,
    /// A value that does not fit the argument's type.
    InvalidValue,
    /// A word no positional argument takes.
    UnexpectedArgument,
    /// A required argument was not given.
    MissingArgument,
    /// An argument given more than once.
    Duplicate,
    /// JSON arguments that are not an object.
    NotAnObject,
    /// `-h` or `--help` was given: the caller should show help.
    HelpRequested,
}

impl BindError {
    fn new(kind: BindErrorKind, message: impl Into<String>) -> Self {
        BindError {
            kind,
            message: message.into(),
            argument: None,
            suggestion: None,
        }
    }

    fn argument(mut self, argument: impl Into<String>) -> Self {
        self.argument = Some(argument.into());
        self
    }

    fn suggest(mut self, suggestion: Option<String>) -> Self {
        self.suggestion = suggestion;
        self
    }

    /// What kind of error this is.
    pub fn kind(&self) -> BindErrorKind {
        self.kind
    }

    /// The whole message, for a person.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The argument at fault, as the caller wrote it (`--limt`, `<query>`).
    pub fn argument_name(&self) -> Option<&str> {
        self.argument.as_deref()
    }

    /// The nearest valid spelling, when one is close.
    pub fn suggestion(&self) -> Option<&str> {
        self.suggestion.as_deref()
    }

    /// Whether this is a request for help rather than a mistake.
    pub fn is_help(&self) -> bool {
        self.kind == BindErrorKind::HelpRequested
    }
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BindError {}

/// How a parameter is written in messages: `--limit` or `<query>`.
fn display_name(param: &ParamSchema) -> String {
    if param.positional.is_some() {
        format!("<{}>", param.long)
    } else {
        format!("--{}", param.long)
    }
}

impl ToolSchema {
    /// Checks that every required argument is present in `args`.
    ///
    /// # Errors
    ///
    /// [`BindErrorKind::MissingArgument`] naming the first one missing.
    pub fn check_required(&self, args: &ToolArgs) -> Result<(), BindError> {
        let Some(param) = self.missing_required(args) else {
            return Ok(());
        };
        let shown = display_name(param);
        let how = if param.stdin {
            " (give it, or pipe it in on standard input)"
        } else {
            ""
        };
        Err(BindError::new(
            BindErrorKind::MissingArgument,
            format!("missing required argument `{shown}`{how}"),
        )
        .argument(shown))
    }

    /// [`check_required`](ToolSchema::check_required) for arguments bound
    /// from JSON ([`parse_json`](ToolSchema::parse_json)): the message names
    /// the argument by its key.
    ///
    /// # Errors
    ///
    /// A [`BindErrorKind::MissingArgument`] naming the first argument
    /// missing.
    pub fn check_required_json(&self, args: &ToolArgs) -> Result<(), BindError> {
        let Some(param) = self.missing_required(args) else {
            return Ok(());
        };
        Err(BindError::new(
            BindErrorKind::MissingArgument,
            format!("missing required argument `{}`", param.name),
        )
        .argument(param.name.to_string()))
    }

    /// The first required parameter the arguments leave out.
    fn missing_required(&self, args: &ToolArgs) -> Option<&ParamSchema> {
        self.params.iter().filter(|p| p.required).find(|param| {
            let present = match param.positional {
                Some(index) => {
                    args.positional.len() > usize::from(index)
                        || args.named.contains_key(&*param.name)
                }
                None => args.named.contains_key(&*param.name) || args.flags.contains(&*param.name),
            };
            !present
        })
    }

    /// The parameter a long flag `--name` means: its long name, its wire
    /// name, or an alias (as written, or in kebab-case).
    pub fn param_by_long(&self, name: &str) -> Option<&ParamSchema> {
        self.params.iter().find(|p| p.long == name).or_else(|| {
            self.params.iter().find(|p| {
                p.name == name
                    || p.aliases
                        .iter()
                        .any(|a| a == name || cli_long_name(a) == name)
            })
        })
    }

    /// The parameter whose short flag is `short`.
    pub fn param_by_short(&self, short: char) -> Option<&ParamSchema> {
        self.params.iter().find(|p| p.short == Some(short))
    }

    /// Whether `word` spells one of this schema's options or help
    /// (`--limit`, `--limit=3`, `-n`, `-n3`, `-h`).
    fn names_an_option(&self, word: &str) -> bool {
        if let Some(body) = word.strip_prefix("--") {
            let name = body.split_once('=').map_or(body, |(name, _)| name);
            return name == HELP_LONG || self.param_by_long(name).is_some();
        }
        match word.strip_prefix('-').and_then(|rest| rest.chars().next()) {
            Some(short) => short == HELP_SHORT || self.param_by_short(short).is_some(),
            None => false,
        }
    }

    /// The parameter a JSON key means: its wire name, an alias, or its long
    /// flag (with `-` or `_`).
    fn param_by_any_name(&self, key: &str) -> Option<&ParamSchema> {
        self.param(key).or_else(|| {
            self.params
                .iter()
                .find(|p| p.long == key || p.long.replace('-', "_") == key)
        })
    }

    /// The option whose wire name is the one character `short`. The legacy
    /// [`ToolArgs::to_argv`] writes such a name as `-x` whatever the
    /// parameter's short flag, so `parse_words(to_argv(..))` binds it back.
    /// The binder's own lookups cannot serve: by short flag misses it (it may
    /// have none, or another), and by long flag answers to long names,
    /// aliases and positionals too, so `-f` would bind a parameter whose
    /// long flag is `--f` (help never shows it as `-f`) instead of pointing
    /// the caller at `--f`.
    fn param_by_argv_name(&self, short: char) -> Option<&ParamSchema> {
        let mut utf8 = [0; 4];
        let name: &str = short.encode_utf8(&mut utf8);
        self.params
            .iter()
            .find(|p| p.positional.is_none() && p.name == name)
    }
}

fn help_requested() -> BindError {
    BindError::new(BindErrorKind::HelpRequested, "help requested")
}

fn duplicate(spelled: &str) -> BindError {
    BindError::new(
        BindErrorKind::Duplicate,
        format!("`{spelled}` is given more than once; it takes one value"),
    )
    .argument(spelled.to_owned())
}

/// `text` given for `spelled` (an argument of `param`) does not fit:
/// `expected` says what would.
///
/// Every message about a value's type or range has this one form, for shell
/// words and JSON alike: the value as given (a JSON value as JSON, so `"3"`
/// and `3` differ), the argument, what it accepts, and after a `;` the fix
/// when there is one: ``invalid value `-1` for `--limit`: expected a whole
/// number, 0 or more``, ``invalid value `"3"` for `limit`: expected a whole
/// number, 0 or more; write `3`, without quotes``. A secret's value is never
/// quoted: ``invalid value for `--api-key` (secret, not shown): expected a
/// string``.
fn invalid(param: &ParamSchema, spelled: &str, text: &str, expected: &str) -> BindError {
    let message = if param.secret {
        format!("invalid value for `{spelled}` (secret, not shown): expected {expected}")
    } else {
        format!(
            "invalid value `{}` for `{spelled}`: expected {expected}",
            excerpt(text)
        )
    };
    BindError::new(BindErrorKind::InvalidValue, message).argument(spelled.to_owned())
}

/// A value as messages quote it: control characters escaped, and cut short
/// when long, so one message stays one short line.
pub(super) fn excerpt(text: &str) -> Cow<'_, str> {
    const MOST: usize = 60;
    const KEPT: usize = 50;
    let long = text.chars().nth(MOST).is_some();
    if !long && !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::new();
    for c in text.chars().take(if long { KEPT } else { MOST }) {
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    if long {
        shown.push('…');
    }
    Cow::Owned(shown)
}

/// Adds the nearest of `values` to `text`, if one is close, to an error
/// refusing `text` for `param`; never for a secret, whose nearest valid
/// value would tell how close the secret came.
fn suggest_nearest(
    mut error: BindError,
    param: &ParamSchema,
    text: &str,
    values: &[Cow<'static, str>],
) -> BindError {
    if param.secret {
        return error;
    }
    if let Some(near) = closest(text, values.iter().map(|v| &**v)) {
        error.message = format!("{}; did you mean `{near}`?", error.message);
        error.suggestion = Some(near.to_owned());
    }
    error
}

/// `<LIMIT>` or `<fast|slow>`: how help and messages show a value.
pub(crate) fn value_placeholder(param: &ParamSchema) -> String {
    match &param.kind {
        ValueKind::Enum(values) if values.len() <= 6 => {
            format!(
                "<{}>",
                values.iter().map(|v| &**v).collect::<Vec<_>>().join("|")
            )
        }
        _ => format!("<{}>", param.long.to_uppercase().replace('-', "_")),
    }
}

/// `` `a`, `b` or `c` ``, at most eight names before "and N more".
fn describe_names<T: AsRef<str>>(names: impl Iterator<Item = T>) -> String {
    const SHOWN: usize = 8;
    let names: Vec<String> = names.map(|n| format!("`{}`", n.as_ref())).collect();
    match names.len() {
        0 => "nothing".to_owned(),
        1 => names[0].clone(),
        n if n > SHOWN => format!(
            "{} and {} more (see `--help`)",
            names[..SHOWN].join(", "),
            n - SHOWN
        ),
        n => format!("{} or {}", names[..n - 1].join(", "), names[n - 1]),
    }
}
