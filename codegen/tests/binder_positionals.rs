//! The binder's rules for positional arguments, one test each, written
//! from the rules in the docs: their slots, by name or loose, the rest list,
//! the unexpected ones, required ones, and verbatim binding.

use gangway_codegen::args::Value;
use gangway_codegen::bind::BindErrorKind;
use gangway_codegen::schema::{ArgBinding, ParamSchema, ToolSchema, ValueKind};
use serde_json::json;

mod common;

#[path = "common/search.rs"]
mod search;

use search::{bind, fail, s, schema};

#[test]
fn a_bare_key_value_word_is_a_positional() {
    let args = bind(&["limit=5", "x=y"]);
    assert_eq!(args.positional, [s("limit=5"), s("x=y")]);
    assert!(args.named.is_empty());
}

#[test]
fn positionals_by_name_and_the_rest_list() {
    let args = bind(&["--query", "rust", "a", "b"]);
    assert_eq!(
        args.positional,
        [s("rust"), s("a"), s("b")],
        "named positional moves into place"
    );
    let args = bind(&["rust", "-a", "b", "-", "c"]);
    assert_eq!(
        args.positional,
        [s("rust"), s("b"), s("-"), s("c")],
        "`-` alone is a word"
    );
    let err = fail(&["--query", "x", "y", "--query", "z"]);
    assert_eq!(err.kind(), BindErrorKind::Duplicate);
    let args = bind(&["--query=x", "y"]);
    assert_eq!(
        args.positional,
        [s("x"), s("y")],
        "the loose word fills the next slot"
    );
    let args = bind(&["--more", "m", "x", "y"]);
    assert_eq!(args.positional, [s("x"), s("m"), s("y")]);
}

#[test]
fn unexpected_positionals_are_named() {
    let only_one =
        ToolSchema::new("show").with_param(ParamSchema::new("file", ValueKind::Path).positional(0));
    let err = only_one.parse_words(&["a", "b"]).unwrap_err();
    assert_eq!(err.kind(), BindErrorKind::UnexpectedArgument);
    assert_eq!(
        err.to_string(),
        "unexpected argument `b`: show takes 1 positional argument (<file>)"
    );
    // A dash word after `--` is a value already: no advice to add `--`.
    let none = ToolSchema::new("ping");
    let err = none.parse_words(&["--", "-x"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unexpected argument `-x`: ping takes no positional arguments"
    );
    // One that names an option belongs before the `--`.
    let find = ToolSchema::new("notes-find")
        .with_param(ParamSchema::new("text", ValueKind::String).positional(0))
        .with_param(ParamSchema::new("limit", ValueKind::UInt).short('n'));
    for option in ["-n", "-n3", "--limit", "--limit=3"] {
        let err = find.parse_words(&["text", "--", option]).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "unexpected argument `{option}`: notes-find takes 1 positional argument (<text>); \
                 `{option}` comes after `--`, which makes it a value; to use it as an option, put it before `--`"
            )
        );
    }
    // A negative number is a value already: no advice about `--` either.
    let err = find.parse_words(&["text", "-5"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unexpected argument `-5`: notes-find takes 1 positional argument (<text>)"
    );
}

#[test]
fn required_arguments_are_checked_separately() {
    let schema = schema();
    let args = schema.parse_words(&["--limit", "2"]).unwrap();
    let err = schema.check_required(&args).unwrap_err();
    assert_eq!(err.kind(), BindErrorKind::MissingArgument);
    assert_eq!(err.to_string(), "missing required argument `<query>`");
    schema.check_required(&bind(&["q"])).unwrap();
}

#[test]
fn verbatim_keeps_every_word_in_order() {
    let schema = ToolSchema::new("ls").with_binding(ArgBinding::Verbatim);
    let args = schema.parse_words(&["-la", "--", "x=y", "--help"]).unwrap();
    assert_eq!(
        args.words,
        Some(vec![s("-la"), s("--"), s("x=y"), s("--help")])
    );
    assert!(args.positional.is_empty() && args.named.is_empty() && args.flags.is_empty());
}

#[test]
fn a_list_positional_after_a_missing_optional_one_stays_by_name() {
    let schema = ToolSchema::new("cp")
        .with_param(
            ParamSchema::new("src", ValueKind::String)
                .positional(0)
                .required(),
        )
        .with_param(ParamSchema::new("dest", ValueKind::String).positional(1))
        .with_param(
            ParamSchema::new("extra", ValueKind::String)
                .positional(2)
                .repeatable(),
        );
    let args = schema.parse_words(&["a", "--extra", "x"]).unwrap();
    assert_eq!(args.positional, [s("a")], "`x` does not slide into `dest`");
    assert_eq!(args.named["extra"], Value::Json(json!(["x"])));
    let args = schema
        .parse_json(&json!({"src": "a", "extra": ["x", "y"]}))
        .unwrap();
    assert_eq!(args.positional, [s("a")]);
    assert_eq!(args.named["extra"], Value::Json(json!(["x", "y"])));
}
