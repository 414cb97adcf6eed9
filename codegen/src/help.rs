//! Help text rendered from a schema: what `CMD --help` prints inside a
//! sandbox, and the usage line shown under a usage error.

use std::fmt::Write as _;

use crate::bind::value_placeholder;
use crate::schema::{ArgBinding, ParamSchema, ToolSchema, ValueKind};

impl ToolSchema {
    /// One line showing how to call the command:
    /// `web_search [OPTIONS] <query> [sites]...`.
    pub fn usage(&self) -> String {
        let mut line = self.name.to_string();
        if self.binding == ArgBinding::Verbatim {
            line.push_str(" [ARGS]...");
            return line;
        }
        if self.params.iter().any(|p| p.positional.is_none()) {
            line.push_str(" [OPTIONS]");
        }
        for param in self.positionals() {
            let name = &param.long;
            let shown = match (param.required, param.repeatable) {
                (true, true) => format!(" <{name}>..."),
                (true, false) => format!(" <{name}>"),
                (false, true) => format!(" [{name}]..."),
                (false, false) => format!(" [{name}]"),
            };
            line.push_str(&shown);
        }
        line
    }

    /// The whole help text: description, usage, each argument with its
    /// description, type and default (a secret's marked `(secret)`, without
    /// its default), then the long description.
    pub fn help_text(&self) -> String {
        let mut out = String::new();
        if self.description.is_empty() {
            let _ = writeln!(out, "{}", self.name);
        } else {
            let _ = writeln!(out, "{}", self.description);
        }
        let _ = writeln!(out, "\nUsage: {}", self.usage());

        let positionals: Vec<&ParamSchema> = self.positionals().filter(|p| !p.hidden).collect();
        if !positionals.is_empty() {
            out.push_str("\nArguments:\n");
            let rows: Vec<(String, String)> = positionals
                .iter()
                .map(|p| {
                    let name = if p.repeatable {
                        format!("<{}>...", p.long)
                    } else {
                        format!("<{}>", p.long)
                    };
                    (name, param_notes(p))
                })
                .collect();
            write_rows(&mut out, &rows);
        }

        let mut rows: Vec<(String, String)> = self
            .params
            .iter()
            .filter(|p| p.positional.is_none() && !p.hidden)
            .map(|p| {
                let short = match p.short {
                    Some(c) => format!("-{c}, "),
                    None => "    ".to_owned(),
                };
                let value = if p.is_flag() {
                    String::new()
                } else if takes_several_values(p) {
                    // Only an option that takes several words per use
                    // shows `...`; a repeatable one takes one per use
                    // and says so in its notes.
                    format!(" {}...", value_placeholder(p))
                } else {
                    format!(" {}", value_placeholder(p))
                };
                (format!("{short}--{}{value}", p.long), param_notes(p))
            })
            .collect();
        // `-h` and `--help` ask for help unless an argument took them.
        let help_short = self.param_by_short('h').is_none();
        let help_long = self.param_by_long("help").is_none();
        match (help_short, help_long) {
            (true, true) => rows.push(("-h, --help".to_owned(), "Print help".to_owned())),
            (false, true) => rows.push(("    --help".to_owned(), "Print help".to_owned())),
            (true, false) => rows.push(("-h".to_owned(), "Print help".to_owned())),
            (false, false) => {}
        }
        out.push_str("\nOptions:\n");
        write_rows(&mut out, &rows);

        if !self.long_description.is_empty() {
            let _ = writeln!(out, "\n{}", self.long_description);
        }
        out
    }
}

/// An argument's description followed by what help should say about it: a
/// secret is marked `(secret)` and its default is not shown.
fn param_notes(param: &ParamSchema) -> String {
    let mut notes = param.description.to_string();
    if param.secret {
        if !notes.is_empty() {
            notes.push(' ');
        }
        notes.push_str("(secret)");
    }
    let mut extra = Vec::new();
    if let ValueKind::Enum(values) = &param.kind
        && values.len() > 6
    {
        extra.push(format!("one of: {}", values.join(", ")));
    }
    if param.required && param.positional.is_none() && !param.stdin {
        extra.push("required".to_owned());
    }
    if param.repeatable && param.positional.is_none() && !param.is_flag() {
        extra.push("repeatable".to_owned());
    }
    if let Some(default) = &param.default
        && !(param.kind == ValueKind::Bool && default == "false")
        && !param.secret
    {
        extra.push(format!("default: {default}"));
    }
    if !param.aliases.is_empty() {
        extra.push(format!("aliases: {}", param.aliases.join(", ")));
    }
    if param.stdin {
        let long = &param.long;
        extra.push(if param.required {
            format!(
                "required: give `--{long}` or pipe it on standard input; `--{long}` wins when both are given"
            )
        } else {
            format!("or piped on standard input; `--{long}` wins when both are given")
        });
    }
    for note in extra {
        if !notes.is_empty() {
            notes.push(' ');
        }
        let _ = write!(notes, "[{note}]");
    }
    notes
}

/// Whether one use of the option takes more than one word
/// (`num_args = 2..`).
fn takes_several_values(param: &ParamSchema) -> bool {
    param
        .consumes
        .is_some_and(|count| count.max != Some(1) || count.min > 1)
}

fn write_rows(out: &mut String, rows: &[(String, String)]) {
    let width = rows
        .iter()
        .map(|(left, _)| left.chars().count())
        .max()
        .unwrap_or(0);
    for (left, right) in rows {
        if right.is_empty() {
            let _ = writeln!(out, "  {left}");
        } else {
            let _ = writeln!(out, "  {left:width$}  {right}");
        }
    }
}
