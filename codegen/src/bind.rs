//! The one argument binder: shell words or a JSON object in, [`ToolArgs`]
//! out, with the schema deciding which flags take values and what type each
//! value has.
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

use std::fmt;

use crate::args::{ToolArgs, Value};
use crate::schema::{ArgBinding, ParamSchema, ToolSchema, ValueKind, closest};

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
    /// Binds shell words (everything after the command name) to this schema.
    ///
    /// The schema decides which flags take a value. Accepted forms:
    /// `--key=value`, `--key value`, `-k value`, `-kvalue`, stacked flags
    /// `-abc` (and `-abn5` where the last takes a value), `--` ending
    /// options, negative numbers as values and positionals, repeated options
    /// accumulating for list parameters, and a bare `key=value` word as an
    /// ordinary positional. A positional parameter may also be given by name
    /// (`search --query rust` is `search rust`). Values are checked against
    /// their type. For a [verbatim](ArgBinding::Verbatim) schema every word
    /// lands in [`ToolArgs::words`] untouched.
    ///
    /// Required arguments are not checked here, since standard input may
    /// still fill one; see [`check_required`](ToolSchema::check_required).
    ///
    /// # Errors
    ///
    /// A [`BindError`] naming the argument: unknown flags (with the nearest
    /// known one), missing or invalid values, unexpected words, duplicates;
    /// [`BindErrorKind::HelpRequested`] for `-h`/`--help`.
    pub fn parse_words<S: AsRef<str>>(&self, words: &[S]) -> Result<ToolArgs, BindError> {
        let mut args = ToolArgs::new();
        if self.binding == ArgBinding::Verbatim {
            args.words = Some(
                words
                    .iter()
                    .map(|w| Value::String(w.as_ref().to_owned()))
                    .collect(),
            );
            return Ok(args);
        }
        let digit_shorts = self
            .params
            .iter()
            .any(|p| p.short.is_some_and(|c| c.is_ascii_digit()));
        let mut loose: Vec<&str> = Vec::new();
        // How many loose words came before a `--`, when there is one.
        let mut before_dashes = None;
        let mut index = 0;
        while index < words.len() {
            let word = words[index].as_ref();
            index += 1;
            if word == "--" {
                before_dashes = Some(loose.len());
                loose.extend(words[index..].iter().map(AsRef::as_ref));
                break;
            }
            if let Some(body) = word.strip_prefix("--") {
                let (name, inline) = match body.split_once('=') {
                    Some((name, value)) => (name, Some(value)),
                    None => (body, None),
                };
                if name.is_empty() {
                    return Err(BindError::new(
                        BindErrorKind::UnknownFlag,
                        format!("`{word}` has no flag name before `=`; write `--name=value`"),
                    )
                    .argument(word.to_owned()));
                }
                if name == "help" && self.param_by_long("help").is_none() {
                    return Err(help_requested());
                }
                let param = self
                    .param_by_long(name)
                    .ok_or_else(|| self.unknown_long(name))?;
                self.take_option(
                    param,
                    &format!("--{name}"),
                    inline,
                    words,
                    &mut index,
                    &mut args,
                )?;
            } else if word.len() > 1
                && word.starts_with('-')
                && (digit_shorts || !looks_negative(word))
            {
                self.parse_shorts(&word[1..], words, &mut index, &mut args)?;
            } else {
                loose.push(word);
            }
        }
        self.place_positionals(&loose, before_dashes, &mut args)?;
        Ok(args)
    }

    /// Binds a JSON object of arguments (an LLM tool call) to this schema.
    ///
    /// Keys are parameter names, aliases or long flag names (with `-` or
    /// `_`). Each value is checked against its type: integers for `int`,
    /// non-negative integers for `uint` and `count`, numbers for `float`,
    /// `true`/`false` for `bool`, strings for text, paths, bytes and enums
    /// (an enum's value must be one of its names), anything for `json`, and
    /// an array (or a single value) for a list. `null` counts as absent.
    ///
    /// # Errors
    ///
    /// A [`BindError`] naming the argument, as for
    /// [`parse_words`](ToolSchema::parse_words).
    pub fn parse_json(&self, value: &serde_json::Value) -> Result<ToolArgs, BindError> {
        let serde_json::Value::Object(object) = value else {
            return Err(BindError::new(
                BindErrorKind::NotAnObject,
                format!(
                    "arguments must be a JSON object of named values, not {}",
                    json_type_name(value)
                ),
            ));
        };
        let mut args = ToolArgs::new();
        for (key, value) in object {
            let Some(param) = self.param_by_any_name(key) else {
                let names = self.params.iter().map(|p| &*p.name);
                let near = closest(key, names.clone());
                let message = match near {
                    Some(near) => format!("unknown argument `{key}`; did you mean `{near}`?"),
                    None => format!(
                        "unknown argument `{key}`; {} takes {}",
                        self.name,
                        describe_names(names)
                    ),
                };
                return Err(BindError::new(BindErrorKind::UnknownFlag, message)
                    .argument(key.clone())
                    .suggest(near.map(str::to_owned)));
            };
            if value.is_null() {
                continue;
            }
            if args.named.contains_key(&*param.name) {
                return Err(BindError::new(
                    BindErrorKind::Duplicate,
                    format!(
                        "argument `{}` is given more than once (as `{key}`)",
                        param.name
                    ),
                )
                .argument(key.clone()));
            }
            let bound = if param.is_list() {
                let items: Vec<&serde_json::Value> = match value {
                    serde_json::Value::Array(items) => items.iter().collect(),
                    single => vec![single],
                };
                check_value_count(param, key, items.len())?;
                let mut list = Vec::with_capacity(items.len());
                for item in items {
                    list.push(value_to_json(json_value(param, key, item)?));
                }
                Value::Json(serde_json::Value::Array(list))
            } else {
                json_value(param, key, value)?
            };
            args.named.insert(param.name.to_string(), bound);
        }
        self.place_positionals(&[], None, &mut args)?;
        Ok(args)
    }

    /// Checks that every required argument is present in `args`.
    ///
    /// # Errors
    ///
    /// [`BindErrorKind::MissingArgument`] naming the first one missing.
    pub fn check_required(&self, args: &ToolArgs) -> Result<(), BindError> {
        for param in self.params.iter().filter(|p| p.required) {
            let present = match param.positional {
                Some(index) => {
                    args.positional.len() > usize::from(index)
                        || args.named.contains_key(&*param.name)
                }
                None => args.named.contains_key(&*param.name) || args.flags.contains(&*param.name),
            };
            if !present {
                let shown = display_name(param);
                let how = if param.stdin {
                    " (give it, or pipe it in on standard input)"
                } else {
                    ""
                };
                return Err(BindError::new(
                    BindErrorKind::MissingArgument,
                    format!("missing required argument `{shown}`{how}"),
                )
                .argument(shown));
            }
        }
        Ok(())
    }

    /// The parameter a long flag `--name` means: its long name, its wire
    /// name, or an alias (as written, or in kebab-case).
    pub fn param_by_long(&self, name: &str) -> Option<&ParamSchema> {
        self.params.iter().find(|p| p.long == name).or_else(|| {
            self.params.iter().find(|p| {
                p.name == name
                    || p.aliases
                        .iter()
                        .any(|a| a == name || crate::schema::cli_long_name(a) == name)
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
            return name == "help" || self.param_by_long(name).is_some();
        }
        match word.strip_prefix('-').and_then(|rest| rest.chars().next()) {
            Some(short) => short == 'h' || self.param_by_short(short).is_some(),
            None => false,
        }
    }

    fn param_by_any_name(&self, key: &str) -> Option<&ParamSchema> {
        self.param(key).or_else(|| {
            self.params
                .iter()
                .find(|p| p.long == key || p.long.replace('-', "_") == key)
        })
    }

    fn unknown_long(&self, name: &str) -> BindError {
        let all_longs = self.params.iter().flat_map(|p| {
            std::iter::once(p.long.to_string())
                .chain(p.aliases.iter().map(|a| crate::schema::cli_long_name(a)))
        });
        let all_longs: Vec<String> = all_longs.collect();
        let near = closest(name, all_longs.iter().map(String::as_str)).map(|n| format!("--{n}"));
        let options: Vec<String> = self
            .params
            .iter()
            .filter(|p| p.positional.is_none())
            .map(|p| format!("--{}", p.long))
            .collect();
        let message = match &near {
            Some(near) => format!("unknown flag `--{name}`; did you mean `{near}`?"),
            None if options.is_empty() => {
                format!("unknown flag `--{name}`: {} takes no flags", self.name)
            }
            None => format!(
                "unknown flag `--{name}`; {} takes {}",
                self.name,
                describe_names(options.iter())
            ),
        };
        BindError::new(BindErrorKind::UnknownFlag, message)
            .argument(format!("--{name}"))
            .suggest(near)
    }

    /// One cluster of short flags, without the leading `-`.
    fn parse_shorts<S: AsRef<str>>(
        &self,
        cluster: &str,
        words: &[S],
        index: &mut usize,
        args: &mut ToolArgs,
    ) -> Result<(), BindError> {
        for (at, short) in cluster.char_indices() {
            if short == 'h' && self.param_by_short('h').is_none() {
                return Err(help_requested());
            }
            // A parameter whose name is this one character renders as `-x`
            // (see `ToolArgs::to_argv`), so `-x` reaches it too.
            let by_name = || {
                self.params.iter().find(|p| {
                    p.positional.is_none()
                        && p.name.chars().count() == 1
                        && p.name.starts_with(short)
                })
            };
            let Some(param) = self.param_by_short(short).or_else(by_name) else {
                let shorts: Vec<String> = self
                    .params
                    .iter()
                    .filter_map(|p| p.short)
                    .map(|c| c.to_string())
                    .collect();
                let near = if shorts.is_empty() {
                    None
                } else {
                    closest(&short.to_string(), shorts.iter().map(String::as_str))
                        .map(|c| format!("-{c}"))
                };
                let message = if cluster.len() > 1
                    && at == 0
                    && self.param_by_long(cluster).is_some()
                {
                    format!("unknown flag `-{short}` in `-{cluster}`; did you mean `--{cluster}`?")
                } else {
                    format!("unknown flag `-{short}`{}", self.short_list_hint())
                };
                let one_char_long = self
                    .param_by_long(&short.to_string())
                    .filter(|_| cluster.chars().count() == 1)
                    .map(|p| format!("--{}", p.long));
                let (message, suggestion) = match one_char_long {
                    Some(long) => (
                        format!("unknown flag `-{short}`; did you mean `{long}`?"),
                        Some(long),
                    ),
                    None if cluster.len() > 1 && self.param_by_long(cluster).is_some() => {
                        (message, Some(format!("--{cluster}")))
                    }
                    None => (message, near),
                };
                return Err(BindError::new(BindErrorKind::UnknownFlag, message)
                    .argument(format!("-{short}"))
                    .suggest(suggestion));
            };
            let rest = &cluster[at + short.len_utf8()..];
            if param.is_flag() {
                if let Some(value) = rest.strip_prefix('=') {
                    return self.take_option(
                        param,
                        &format!("-{short}"),
                        Some(value),
                        words,
                        index,
                        args,
                    );
                }
                self.take_option(param, &format!("-{short}"), None, words, index, args)?;
                continue;
            }
            // A value-taking short: the rest of the cluster is its value.
            let inline = if rest.is_empty() {
                None
            } else {
                Some(rest.strip_prefix('=').unwrap_or(rest))
            };
            return self.take_option(param, &format!("-{short}"), inline, words, index, args);
        }
        Ok(())
    }

    fn short_list_hint(&self) -> String {
        let shorts: Vec<String> = self
            .params
            .iter()
            .filter_map(|p| p.short)
            .map(|c| format!("`-{c}`"))
            .collect();
        if shorts.is_empty() {
            format!(": {} has no short flags", self.name)
        } else {
            format!("; {} takes {}", self.name, shorts.join(", "))
        }
    }

    /// One occurrence of an option, with its inline value if any.
    fn take_option<S: AsRef<str>>(
        &self,
        param: &ParamSchema,
        spelled: &str,
        inline: Option<&str>,
        words: &[S],
        index: &mut usize,
        args: &mut ToolArgs,
    ) -> Result<(), BindError> {
        let name = param.name.to_string();
        if param.is_flag() {
            match (&param.kind, inline) {
                (ValueKind::Count, None) => {
                    let count = match args.named.get(&name) {
                        Some(Value::Int(n)) => n + 1,
                        _ => 1,
                    };
                    if count > MAX_COUNT {
                        return Err(invalid(
                            param,
                            spelled,
                            &count.to_string(),
                            "a count from 0 to 255",
                        ));
                    }
                    args.named.insert(name, Value::Int(count));
                }
                (ValueKind::Count, Some(text)) => {
                    let count: u8 = text
                        .parse()
                        .map_err(|_| invalid(param, spelled, text, "a count from 0 to 255"))?;
                    args.named.insert(name, Value::Int(i64::from(count)));
                }
                (_, None) => {
                    args.named.remove(&name);
                    args.flags.insert(name);
                }
                (_, Some(text)) => {
                    let value = parse_bool(text)
                        .ok_or_else(|| invalid(param, spelled, text, "`true` or `false`"))?;
                    args.flags.remove(&name);
                    args.named.insert(name, Value::Bool(value));
                }
            }
            return Ok(());
        }
        let (min, max) = match param.consumes {
            Some(count) => (usize::from(count.min), count.max.map(usize::from)),
            None => (1, Some(1)),
        };
        let mut values: Vec<&str> = Vec::new();
        if let Some(text) = inline {
            values.push(text);
        } else {
            // The words the option needs are its own, whatever they look
            // like, as getopt does; more only up to its count and only while
            // they do not look like options. A value attached with `=` is
            // the whole of it, as in clap.
            while max.is_none_or(|max| values.len() < max) && *index < words.len() {
                let next = words[*index].as_ref();
                let needed = values.len() < min;
                if !needed && next.starts_with('-') && next.len() > 1 && !looks_negative(next) {
                    break;
                }
                values.push(next);
                *index += 1;
            }
        }
        if values.is_empty() && min == 0 {
            // An option whose value may be left out: present, no value.
            args.flags.insert(name);
            return Ok(());
        }
        if values.len() < min.max(1) {
            return Err(BindError::new(
                BindErrorKind::MissingValue,
                if min > 1 {
                    format!("`{spelled}` needs {min} values")
                } else {
                    format!(
                        "`{spelled}` needs a value, as in `{spelled} {}`",
                        value_placeholder(param)
                    )
                },
            )
            .argument(spelled.to_owned()));
        }
        let multi = param.repeatable || max != Some(1);
        if multi {
            let mut typed = Vec::with_capacity(values.len());
            for text in values {
                typed.push(value_to_json(word_value(param, spelled, text)?));
            }
            match args.named.get_mut(&name) {
                Some(Value::Json(serde_json::Value::Array(existing))) if param.repeatable => {
                    existing.extend(typed)
                }
                Some(_) => return Err(duplicate(spelled)),
                None => {
                    args.named
                        .insert(name, Value::Json(serde_json::Value::Array(typed)));
                }
            }
        } else {
            if args.named.contains_key(&name) {
                return Err(duplicate(spelled));
            }
            let value = word_value(param, spelled, values[0])?;
            args.named.insert(name, value);
        }
        Ok(())
    }

    /// Types the loose words by the positional parameters they fill, and
    /// moves named values of positional parameters into place, so a clap
    /// parser, which has no flag for a positional, still sees them.
    ///
    /// `before_dashes` is how many of the loose words came before a `--`,
    /// if one was given: the words after it are values whatever they look
    /// like, which the error for one too many says.
    fn place_positionals(
        &self,
        loose: &[&str],
        before_dashes: Option<usize>,
        args: &mut ToolArgs,
    ) -> Result<(), BindError> {
        let positionals: Vec<&ParamSchema> = self.positionals().collect();
        let mut placed: Vec<Value> = Vec::with_capacity(loose.len());
        let mut words = loose.iter();
        for (slot, param) in positionals.iter().enumerate() {
            let shown = display_name(param);
            // Given by name, it takes its own slot and the loose words fill
            // the others.
            let from_named = args.named.remove(&*param.name);
            if param.repeatable {
                if placed.len() != slot {
                    // An earlier optional positional is missing: the list
                    // cannot move into place without filling it.
                    if let Some(named) = from_named {
                        args.named.insert(param.name.to_string(), named);
                    }
                    break;
                }
                if let Some(named) = from_named {
                    match named {
                        Value::Json(serde_json::Value::Array(items)) => {
                            placed.extend(items.into_iter().map(json_to_value));
                        }
                        other => placed.push(other),
                    }
                }
                for word in words.by_ref() {
                    placed.push(word_value(param, &shown, word)?);
                }
                break;
            }
            let value = match from_named {
                Some(value) => value,
                None => match words.next() {
                    Some(word) => word_value(param, &shown, word)?,
                    None => continue,
                },
            };
            if placed.len() == slot {
                placed.push(value);
            } else {
                // An earlier optional positional is missing: keep this one
                // by name, which a positional-only parser cannot take
                // anyway.
                args.named.insert(param.name.to_string(), value);
            }
        }
        if let Some(extra) = words.next() {
            let message = if positionals.is_empty() {
                format!(
                    "unexpected argument `{extra}`: {} takes no positional arguments",
                    self.name
                )
            } else {
                let names: Vec<String> = positionals.iter().map(|p| display_name(p)).collect();
                format!(
                    "unexpected argument `{extra}`: {} takes {} positional argument{} ({})",
                    self.name,
                    positionals.len(),
                    if positionals.len() == 1 { "" } else { "s" },
                    names.join(" ")
                )
            };
            // A loose word is a value already (after `--`, or a number like
            // `-5`): adding `--` would not help. One after `--` that names an
            // option was most likely meant as that option.
            let position = loose.len() - words.len() - 1;
            let after_dashes = before_dashes.is_some_and(|before| position >= before);
            let hint = (after_dashes && self.names_an_option(extra)).then(|| {
                format!(
                    "`{extra}` comes after `--`, which makes it a value; \
                     to use it as an option, put it before `--`"
                )
            });
            return Err(BindError::new(
                BindErrorKind::UnexpectedArgument,
                match hint {
                    Some(hint) => format!("{message}; {hint}"),
                    None => message,
                },
            )
            .argument((*extra).to_owned()));
        }
        args.positional = placed;
        Ok(())
    }
}

/// The most a counted flag counts (clap counts into a `u8`).
const MAX_COUNT: i64 = 255;

/// For a JSON list of `len` values: whether it fits the parameter's value
/// count (per occurrence, for a repeatable one).
fn check_value_count(param: &ParamSchema, key: &str, len: usize) -> Result<(), BindError> {
    let Some(count) = param.consumes else {
        return Ok(());
    };
    let (min, max) = (usize::from(count.min), count.max.map(usize::from));
    let fits = if param.repeatable {
        match max {
            Some(k) if k == min && k > 0 => len.is_multiple_of(k),
            _ => true,
        }
    } else {
        len >= min && max.is_none_or(|max| len <= max)
    };
    if fits {
        return Ok(());
    }
    let wanted = match (max, param.repeatable) {
        (Some(k), true) => format!("a multiple of {k} values"),
        (Some(max), false) if max == min => format!("{min} values"),
        (Some(max), false) => format!("{min} to {max} values"),
        (None, _) => format!("at least {min} values"),
    };
    Err(BindError::new(
        BindErrorKind::InvalidValue,
        format!("argument `{key}` takes {wanted}, not {len}"),
    )
    .argument(key.to_owned()))
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

fn invalid(param: &ParamSchema, spelled: &str, text: &str, expected: &str) -> BindError {
    let _ = param;
    BindError::new(
        BindErrorKind::InvalidValue,
        format!("invalid value `{text}` for `{spelled}`: expected {expected}"),
    )
    .argument(spelled.to_owned())
}

/// Whether a word is a negative number (`-5`, `-1.5`, `-.5`), which is a
/// value, not a flag, unless the schema has digit short flags.
fn looks_negative(word: &str) -> bool {
    let rest = &word[1..];
    !rest.is_empty()
        && rest.parse::<f64>().is_ok()
        && rest.starts_with(|c: char| c.is_ascii_digit() || c == '.')
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
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

/// A word typed by its parameter.
fn word_value(param: &ParamSchema, spelled: &str, text: &str) -> Result<Value, BindError> {
    Ok(match &param.kind {
        ValueKind::String | ValueKind::Path => Value::String(text.to_owned()),
        ValueKind::Bytes => Value::Bytes(text.as_bytes().to_vec()),
        ValueKind::Int => Value::Int(
            text.parse()
                .map_err(|_| invalid(param, spelled, text, "an integer"))?,
        ),
        ValueKind::Count => {
            Value::Int(i64::from(text.parse::<u8>().map_err(|_| {
                invalid(param, spelled, text, "a count from 0 to 255")
            })?))
        }
        ValueKind::UInt => {
            let n: u64 = text
                .parse()
                .map_err(|_| invalid(param, spelled, text, "a whole number (0 or more)"))?;
            match i64::try_from(n) {
                Ok(n) => Value::Int(n),
                Err(_) => Value::Json(serde_json::Value::from(n)),
            }
        }
        ValueKind::Float => {
            let x: f64 = text
                .parse()
                .map_err(|_| invalid(param, spelled, text, "a number"))?;
            if !x.is_finite() {
                return Err(invalid(param, spelled, text, "a finite number"));
            }
            Value::Float(x)
        }
        ValueKind::Bool => Value::Bool(
            parse_bool(text).ok_or_else(|| invalid(param, spelled, text, "`true` or `false`"))?,
        ),
        ValueKind::Json => Value::Json(
            serde_json::from_str(text)
                .map_err(|error| invalid(param, spelled, text, &format!("JSON ({error})")))?,
        ),
        ValueKind::Enum(values) => {
            check_enum(text, values, |expected| {
                invalid(param, spelled, text, &expected)
            })?;
            Value::String(text.to_owned())
        }
        // Unknown future kinds bind as text.
        #[allow(unreachable_patterns)]
        _ => Value::String(text.to_owned()),
    })
}

/// Checks that `text` is one of `values`; otherwise the error `refuse`
/// makes from the expectation ("one of ..."), with the nearest valid
/// spelling suggested.
fn check_enum(
    text: &str,
    values: &[std::borrow::Cow<'static, str>],
    refuse: impl FnOnce(String) -> BindError,
) -> Result<(), BindError> {
    if values.iter().any(|v| v == text) {
        return Ok(());
    }
    let mut error = refuse(format!(
        "one of {}",
        describe_names(values.iter().map(|v| &**v))
    ));
    if let Some(near) = closest(text, values.iter().map(|v| &**v)) {
        error.message = format!("{}; did you mean `{near}`?", error.message);
        error.suggestion = Some(near.to_owned());
    }
    Err(error)
}

/// A JSON argument checked against its parameter's type.
fn json_value(
    param: &ParamSchema,
    key: &str,
    value: &serde_json::Value,
) -> Result<Value, BindError> {
    let wrong = |expected: &str| {
        BindError::new(
            BindErrorKind::InvalidValue,
            format!(
                "argument `{key}` must be {expected}, not {}",
                json_type_name(value)
            ),
        )
        .argument(key.to_owned())
    };
    Ok(match &param.kind {
        ValueKind::String | ValueKind::Path => {
            Value::String(value.as_str().ok_or_else(|| wrong("a string"))?.to_owned())
        }
        ValueKind::Bytes => Value::Bytes(
            value
                .as_str()
                .ok_or_else(|| wrong("a string"))?
                .as_bytes()
                .to_vec(),
        ),
        ValueKind::Int => Value::Int(value.as_i64().ok_or_else(|| wrong("an integer"))?),
        ValueKind::Count => match value.as_u64() {
            Some(n) if n <= MAX_COUNT as u64 => Value::Int(n as i64),
            _ => return Err(wrong("a count from 0 to 255")),
        },
        ValueKind::UInt => match value.as_u64() {
            Some(n) => match i64::try_from(n) {
                Ok(n) => Value::Int(n),
                Err(_) => Value::Json(value.clone()),
            },
            None => return Err(wrong("a whole number (0 or more)")),
        },
        ValueKind::Float => Value::Float(value.as_f64().ok_or_else(|| wrong("a number"))?),
        ValueKind::Bool => Value::Bool(value.as_bool().ok_or_else(|| wrong("`true` or `false`"))?),
        ValueKind::Json => Value::Json(value.clone()),
        ValueKind::Enum(values) => {
            let text = value.as_str().ok_or_else(|| wrong("a string"))?;
            check_enum(text, values, |expected| {
                BindError::new(
                    BindErrorKind::InvalidValue,
                    format!("argument `{key}` must be {expected}, not `{text}`"),
                )
                .argument(key.to_owned())
            })?;
            Value::String(text.to_owned())
        }
        #[allow(unreachable_patterns)]
        _ => Value::Json(value.clone()),
    })
}

/// A value as an element of a JSON list.
fn value_to_json(value: Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(b),
        Value::Int(n) => serde_json::Value::from(n),
        Value::Float(x) => serde_json::Value::from(x),
        Value::String(text) => serde_json::Value::String(text),
        Value::Json(json) => json,
        Value::Bytes(bytes) => match String::from_utf8(bytes) {
            Ok(text) => serde_json::Value::String(text),
            Err(error) => serde_json::Value::from(error.into_bytes()),
        },
    }
}

/// A JSON list element back as a value.
fn json_to_value(json: serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::String(text) => Value::String(text),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::Int(i),
            (None, Some(x)) if !n.is_u64() => Value::Float(x),
            _ => Value::Json(serde_json::Value::Number(n)),
        },
        other => Value::Json(other),
    }
}

fn json_type_name(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
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
