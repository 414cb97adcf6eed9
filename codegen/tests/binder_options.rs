//! The binder's rules for options, one test each, written from the rules
//! in the docs: every way of giving an option and its value, flags, counts,
//! lists and options that take several values or none.

use gangway_codegen::args::Value;
use gangway_codegen::bind::BindErrorKind;
use gangway_codegen::schema::{ParamSchema, ToolSchema, ValueKind};
use serde_json::json;

mod common;

#[path = "common/search.rs"]
mod search;

use search::{bind, fail, s, schema};

#[test]
fn every_way_of_giving_an_option_value() {
    for words in [
        &["--limit=5", "q"][..],
        &["--limit", "5", "q"],
        &["-n", "5", "q"],
        &["-n5", "q"],
        &["-n=5", "q"],
        &["q", "--limit", "5"],
    ] {
        let args = bind(words);
        assert_eq!(args.named["limit"], Value::Int(5), "{words:?}");
        assert_eq!(args.positional, [s("q")], "{words:?}");
    }
}

#[test]
fn stacked_short_flags_and_a_trailing_value() {
    let args = bind(&["-ab", "q"]);
    assert!(args.flags.contains("all") && args.flags.contains("brief"));
    let args = bind(&["-abn5", "q"]);
    assert!(args.flags.contains("all") && args.flags.contains("brief"));
    assert_eq!(args.named["limit"], Value::Int(5));
    let args = bind(&["-abn", "7", "q"]);
    assert_eq!(args.named["limit"], Value::Int(7));
    assert_eq!(args.positional, [s("q")]);
}

#[test]
fn a_flag_before_a_positional_does_not_eat_it() {
    let args = bind(&["--all", "rust"]);
    assert!(args.flags.contains("all"));
    assert_eq!(args.positional, [s("rust")]);
}

#[test]
fn double_dash_ends_options() {
    let args = bind(&["--all", "--", "--limit", "-n", "--"]);
    assert_eq!(args.positional, [s("--limit"), s("-n"), s("--")]);
    assert!(!args.named.contains_key("limit"));
}

#[test]
fn negative_numbers_are_values() {
    let args = bind(&["-o", "-5", "-3", "--scale", "-1.5"]);
    assert_eq!(args.named["offset"], Value::Int(-5));
    assert_eq!(args.named["scale"], Value::Float(-1.5));
    assert_eq!(
        args.positional,
        [s("-3")],
        "a negative number is a positional, not a flag"
    );
    let with_digit_short = ToolSchema::new("x")
        .with_param(ParamSchema::new("one", ValueKind::Bool).short('1'))
        .with_param(
            ParamSchema::new("rest", ValueKind::String)
                .positional(0)
                .repeatable(),
        );
    let args = with_digit_short.parse_words(&["-1"]).unwrap();
    assert!(
        args.flags.contains("one"),
        "with digit shorts, -1 is the flag"
    );
}

#[test]
fn a_value_option_takes_its_next_word_whatever_it_looks_like() {
    let args = bind(&["--mode", "fast", "--filter", "-1", "q"]);
    assert_eq!(args.named["filter"], Value::Json(json!(-1)));
    let args = bind(&["-t", "--weird", "q"]);
    assert_eq!(args.named["tag"], Value::Json(json!(["--weird"])));
}

#[test]
fn repeated_options_accumulate_for_lists_only() {
    let args = bind(&["-t", "a", "--tag=b", "-tc", "q"]);
    assert_eq!(args.named["tag"], Value::Json(json!(["a", "b", "c"])));
    let err = fail(&["-n", "1", "--limit", "2", "q"]);
    assert_eq!(err.kind(), BindErrorKind::Duplicate);
    assert_eq!(
        err.to_string(),
        "`--limit` is given more than once; it takes one value"
    );
}

#[test]
fn aliases_answer_as_long_flags() {
    let args = bind(&["--max", "3", "q"]);
    assert_eq!(args.named["max_results"], Value::Int(3));
    let args = bind(&["--max-results=4", "q"]);
    assert_eq!(args.named["max_results"], Value::Int(4));
}

#[test]
fn bools_take_an_explicit_value_with_equals() {
    let args = bind(&["--all=false", "--brief=true", "q"]);
    assert_eq!(args.named["all"], Value::Bool(false));
    assert_eq!(args.named["brief"], Value::Bool(true));
    assert!(!args.flags.contains("all"));
    let err = fail(&["--all=maybe"]);
    assert_eq!(
        err.to_string(),
        "invalid value `maybe` for `--all`: expected `true` or `false`"
    );
}

#[test]
fn counts_count_occurrences() {
    assert_eq!(bind(&["-vvv", "q"]).named["verbose"], Value::Int(3));
    assert_eq!(
        bind(&["-v", "--verbose", "-av", "q"]).named["verbose"],
        Value::Int(3)
    );
    assert_eq!(bind(&["--verbose=5", "q"]).named["verbose"], Value::Int(5));
}

#[test]
fn an_option_with_a_value_count_takes_that_many_words() {
    let args = bind(&["--point", "1", "-2.5", "q"]);
    assert_eq!(args.named["point"], Value::Json(json!([1.0, -2.5])));
    assert_eq!(args.positional, [s("q")]);
    let err = fail(&["--point", "1"]);
    assert_eq!(err.to_string(), "`--point` needs 2 values");
}

#[test]
fn counts_are_bounded() {
    let err = fail(&["--verbose=300"]);
    assert_eq!(
        err.to_string(),
        "invalid value `300` for `--verbose`: expected a whole number from 0 to 255"
    );
    let many: Vec<&str> = std::iter::repeat_n("-v", 256).chain(["q"]).collect();
    let err = fail(&many);
    assert_eq!(err.kind(), BindErrorKind::InvalidValue);
    assert_eq!(
        err.to_string(),
        "`-v` is given 256 times: `--verbose` counts to 255 at most"
    );
    let err = schema()
        .parse_json(&json!({"verbose": 5_000_000}))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid value `5000000` for `verbose`: expected a whole number from 0 to 255"
    );
}

#[test]
fn an_attached_value_is_the_whole_value() {
    let schema = ToolSchema::new("t")
        .with_param(
            ParamSchema::new("files", ValueKind::String)
                .repeatable()
                .consumes(1, None),
        )
        .with_param(ParamSchema::new("pattern", ValueKind::String).positional(0));
    let args = schema.parse_words(&["--files=a.rs", "needle"]).unwrap();
    assert_eq!(args.named["files"], Value::Json(json!(["a.rs"])));
    assert_eq!(args.positional, [s("needle")]);
    let args = schema
        .parse_words(&["--files", "a", "b", "--", "needle"])
        .unwrap();
    assert_eq!(args.named["files"], Value::Json(json!(["a", "b"])));
}

#[test]
fn an_option_whose_value_may_be_left_out() {
    let schema = ToolSchema::new("t")
        .with_param(ParamSchema::new("color", ValueKind::String).consumes(0, Some(1)))
        .with_param(ParamSchema::new("verbose", ValueKind::Bool).short('v'));
    let args = schema.parse_words(&["--color"]).unwrap();
    assert!(args.flags.contains("color") && !args.named.contains_key("color"));
    let args = schema.parse_words(&["--color", "-v"]).unwrap();
    assert!(
        args.flags.contains("color") && args.flags.contains("verbose"),
        "`-v` is not its value"
    );
    let args = schema.parse_words(&["--color", "red"]).unwrap();
    assert_eq!(args.named["color"], s("red"));
}

#[test]
fn a_bool_that_takes_a_value_is_not_a_flag() {
    let schema = ToolSchema::new("t")
        .with_param(ParamSchema::new("flag", ValueKind::Bool).consumes(1, Some(1)))
        .with_param(ParamSchema::new("word", ValueKind::String).positional(0));
    let args = schema.parse_words(&["--flag", "false", "w"]).unwrap();
    assert_eq!(args.named["flag"], Value::Bool(false));
    assert_eq!(args.positional, [s("w")]);
    let mut flagged = args.clone();
    flagged.flagify_bool_named(&schema);
    assert_eq!(flagged, args, "flagify leaves a value-taking bool alone");
}

#[test]
fn wire_names_are_accepted_as_long_flags() {
    let args = bind(&["--max_results=5", "q"]);
    assert_eq!(args.named["max_results"], Value::Int(5));
}
