//! What the binder tests share: a search command whose options are of
//! every kind, and binding words to it.

// Each test file uses a part.
#![allow(dead_code)]

use gangway_codegen::args::{ToolArgs, Value};
use gangway_codegen::schema::{ParamSchema, ToolSchema, ValueKind};

use crate::common::enum_of;

/// A search command: a query positional, a list of extra terms, and options
/// of every kind.
pub fn schema() -> ToolSchema {
    ToolSchema::new("search")
        .with_description("Search the notes.")
        .with_param(
            ParamSchema::new("query", ValueKind::String)
                .positional(0)
                .required()
                .description("What to find."),
        )
        .with_param(
            ParamSchema::new("more", ValueKind::String)
                .positional(1)
                .repeatable()
                .description("More terms."),
        )
        .with_param(
            ParamSchema::new("limit", ValueKind::UInt)
                .short('n')
                .default_text("10")
                .description("How many."),
        )
        .with_param(ParamSchema::new("offset", ValueKind::Int).short('o'))
        .with_param(ParamSchema::new("scale", ValueKind::Float))
        .with_param(ParamSchema::new("all", ValueKind::Bool).short('a'))
        .with_param(ParamSchema::new("brief", ValueKind::Bool).short('b'))
        .with_param(ParamSchema::new("verbose", ValueKind::Count).short('v'))
        .with_param(
            ParamSchema::new("tag", ValueKind::String)
                .short('t')
                .repeatable(),
        )
        .with_param(ParamSchema::new("mode", enum_of(&["fast", "thorough"])))
        .with_param(ParamSchema::new("filter", ValueKind::Json))
        .with_param(ParamSchema::new("point", ValueKind::Float).consumes(2, Some(2)))
        .with_param(ParamSchema::new("max_results", ValueKind::UInt).alias("max"))
}

pub fn bind(words: &[&str]) -> ToolArgs {
    schema()
        .parse_words(words)
        .unwrap_or_else(|e| panic!("{words:?}: {e}"))
}

pub fn fail(words: &[&str]) -> gangway_codegen::bind::BindError {
    schema()
        .parse_words(words)
        .expect_err(&format!("{words:?} should fail"))
}

pub fn s(text: &str) -> Value {
    Value::String(text.to_owned())
}
