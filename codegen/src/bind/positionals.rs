//! Putting positional parameters in place, for both binders: the loose
//! words typed by the slot they fill, and a positional given by name moved
//! into its slot, so a clap parser, which has no flag for a positional,
//! still sees it.

use super::value::{json_to_value, word_value};
use super::{BindError, BindErrorKind, display_name, excerpt};
use crate::args::{ToolArgs, Value};
use crate::schema::{ParamSchema, ToolSchema};

impl ToolSchema {
    /// Types the loose words by the positional parameters they fill, and
    /// moves named values of positional parameters into place, so a clap
    /// parser, which has no flag for a positional, still sees them.
    ///
    /// `before_dashes` is how many of the loose words came before a `--`,
    /// if one was given: the words after it are values whatever they look
    /// like, which the error for one too many says.
    pub(super) fn place_positionals(
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
            let shown = excerpt(extra);
            let message = if positionals.is_empty() {
                format!(
                    "unexpected argument `{shown}`: {} takes no positional arguments",
                    self.name
                )
            } else {
                let names: Vec<String> = positionals.iter().map(|p| display_name(p)).collect();
                format!(
                    "unexpected argument `{shown}`: {} takes {} positional argument{} ({})",
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
                    "`{shown}` comes after `--`, which makes it a value; \
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
