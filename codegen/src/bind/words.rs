//! Binding shell words: long flags (`--key=value`, `--key value`), short
//! flags and their clusters (`-abn5`), option values by the count the schema
//! gives, `--`, and negative numbers as values.

use super::value::{MAX_COUNT, expectation, parse_bool, value_to_json, word_value};
use super::{
    BindError, BindErrorKind, describe_names, display_name, duplicate, excerpt, help_requested,
    invalid, value_placeholder,
};
use crate::args::{ToolArgs, Value};
use crate::schema::{
    ArgBinding, HELP_LONG, HELP_SHORT, ParamSchema, ToolSchema, ValueKind, cli_long_name, closest,
};

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
                    // What follows `=` may be a value meant for a secret,
                    // so the message does not repeat it.
                    return Err(BindError::new(
                        BindErrorKind::UnknownFlag,
                        "`--=` has no flag name before `=`; write `--name=value`",
                    )
                    .argument("--="));
                }
                if name == HELP_LONG && self.param_by_long(HELP_LONG).is_none() {
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

    fn unknown_long(&self, name: &str) -> BindError {
        let all_longs = self.params.iter().flat_map(|p| {
            std::iter::once(p.long.to_string()).chain(p.aliases.iter().map(|a| cli_long_name(a)))
        });
        let all_longs: Vec<String> = all_longs.collect();
        let near = closest(name, all_longs.iter().map(String::as_str)).map(|n| format!("--{n}"));
        let options: Vec<String> = self
            .params
            .iter()
            .filter(|p| p.positional.is_none())
            .map(|p| format!("--{}", p.long))
            .collect();
        let shown = excerpt(name);
        let message = match &near {
            Some(near) => format!("unknown flag `--{shown}`; did you mean `{near}`?"),
            None if options.is_empty() => {
                format!("unknown flag `--{shown}`: {} takes no flags", self.name)
            }
            None => format!(
                "unknown flag `--{shown}`; {} takes {}",
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
            if short == HELP_SHORT && self.param_by_short(HELP_SHORT).is_none() {
                return Err(help_requested());
            }
            let Some(param) = self
                .param_by_short(short)
                .or_else(|| self.param_by_argv_name(short))
            else {
                return Err(self.unknown_short(short, cluster, at));
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

    /// The error for `-{short}`, at byte `at` of the cluster `-{cluster}`,
    /// which no parameter answers to, with the spelling most likely meant:
    /// `--x` for a one-character long flag, `--{cluster}` when the cluster
    /// spells a long flag, else the nearest short flag.
    fn unknown_short(&self, short: char, cluster: &str, at: usize) -> BindError {
        let one_char_long = self
            .param_by_long(&short.to_string())
            .filter(|_| cluster.chars().count() == 1)
            .map(|p| format!("--{}", p.long));
        let whole_long = (cluster.len() > 1 && self.param_by_long(cluster).is_some())
            .then(|| format!("--{cluster}"));
        // The character as messages quote it (a control character escaped).
        let shown = excerpt(&short.to_string()).into_owned();
        let (message, suggestion) = match (one_char_long, whole_long) {
            (Some(long), _) => (
                format!("unknown flag `-{shown}`; did you mean `{long}`?"),
                Some(long),
            ),
            (None, Some(whole)) if at == 0 => (
                format!(
                    "unknown flag `-{shown}` in `-{}`; did you mean `{whole}`?",
                    excerpt(cluster)
                ),
                Some(whole),
            ),
            (None, whole) => {
                let message = format!("unknown flag `-{shown}`{}", self.short_list_hint());
                let near = || {
                    let shorts: Vec<String> = self
                        .params
                        .iter()
                        .filter_map(|p| p.short)
                        .map(|c| c.to_string())
                        .collect();
                    closest(&short.to_string(), shorts.iter().map(String::as_str))
                        .map(|c| format!("-{c}"))
                };
                (message, whole.or_else(near))
            }
        };
        BindError::new(BindErrorKind::UnknownFlag, message)
            .argument(format!("-{short}"))
            .suggest(suggestion)
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
        if param.is_flag() {
            return take_flag(param, spelled, inline, args);
        }
        let name = param.name.to_string();
        let (min, max) = match param.consumes {
            Some(count) => (usize::from(count.min), count.max.map(usize::from)),
            None => (1, Some(1)),
        };
        let values = option_values(inline, words, index, min, max);
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
            return store_several(param, spelled, values, args);
        }
        if args.named.contains_key(&name) {
            return Err(duplicate(spelled));
        }
        let value = word_value(param, spelled, values[0])?;
        args.named.insert(name, value);
        Ok(())
    }
}

/// One occurrence of a flag (a bool or a count), with its inline value if
/// any.
fn take_flag(
    param: &ParamSchema,
    spelled: &str,
    inline: Option<&str>,
    args: &mut ToolArgs,
) -> Result<(), BindError> {
    let name = param.name.to_string();
    match (&param.kind, inline) {
        (ValueKind::Count, None) => {
            let count = match args.named.get(&name) {
                Some(Value::Int(n)) => n + 1,
                _ => 1,
            };
            if count > MAX_COUNT {
                return Err(BindError::new(
                    BindErrorKind::InvalidValue,
                    format!(
                        "`{spelled}` is given {count} times: `{}` counts to \
                         {MAX_COUNT} at most",
                        display_name(param)
                    ),
                )
                .argument(spelled.to_owned()));
            }
            args.named.insert(name, Value::Int(count));
        }
        (ValueKind::Count, Some(text)) => {
            let count = word_value(param, spelled, text)?;
            args.named.insert(name, count);
        }
        (_, None) => {
            args.named.remove(&name);
            args.flags.insert(name);
        }
        (_, Some(text)) => {
            let value = parse_bool(text)
                .ok_or_else(|| invalid(param, spelled, text, &expectation(&ValueKind::Bool)))?;
            args.flags.remove(&name);
            args.named.insert(name, Value::Bool(value));
        }
    }
    Ok(())
}

/// The words an option's occurrence takes: its inline value, or the words
/// after it, from `index` on, by the option's count.
fn option_values<'a, S: AsRef<str>>(
    inline: Option<&'a str>,
    words: &'a [S],
    index: &mut usize,
    min: usize,
    max: Option<usize>,
) -> Vec<&'a str> {
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
    values
}

/// Stores the values of an option that takes several, or is repeatable, as
/// a JSON array: a repeatable option's occurrences accumulate.
fn store_several(
    param: &ParamSchema,
    spelled: &str,
    values: Vec<&str>,
    args: &mut ToolArgs,
) -> Result<(), BindError> {
    let name = param.name.to_string();
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
    Ok(())
}

/// Whether a word is a negative number (`-5`, `-1.5`, `-.5`), which is a
/// value, not a flag, unless the schema has digit short flags.
fn looks_negative(word: &str) -> bool {
    let rest = &word[1..];
    !rest.is_empty()
        && rest.parse::<f64>().is_ok()
        && rest.starts_with(|c: char| c.is_ascii_digit() || c == '.')
}
