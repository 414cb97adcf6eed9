//! The binder's rules, one test each, written from the rules in the docs:
//! shell words and JSON objects bound to a schema.

use gangway_codegen::args::{ToolArgs, Value};
use gangway_codegen::bind::BindErrorKind;
use gangway_codegen::schema::{ArgBinding, ParamSchema, ToolSchema, ValueKind};
use serde_json::json;

mod common;
use common::enum_of;

/// A search command: a query positional, a list of extra terms, and options
/// of every kind.
fn schema() -> ToolSchema {
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

fn bind(words: &[&str]) -> ToolArgs {
    schema()
        .parse_words(words)
        .unwrap_or_else(|e| panic!("{words:?}: {e}"))
}

fn fail(words: &[&str]) -> gangway_codegen::bind::BindError {
    schema()
        .parse_words(words)
        .expect_err(&format!("{words:?} should fail"))
}

fn s(text: &str) -> Value {
    Value::String(text.to_owned())
}

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
fn a_bare_key_value_word_is_a_positional() {
    let args = bind(&["limit=5", "x=y"]);
    assert_eq!(args.positional, [s("limit=5"), s("x=y")]);
    assert!(args.named.is_empty());
}

#[test]
fn unknown_flags_suggest_the_nearest_name() {
    let err = fail(&["--limt", "5"]);
    assert_eq!(err.kind(), BindErrorKind::UnknownFlag);
    assert_eq!(
        err.to_string(),
        "unknown flag `--limt`; did you mean `--limit`?"
    );
    assert_eq!(err.argument_name(), Some("--limt"));
    assert_eq!(err.suggestion(), Some("--limit"));
    let err = fail(&["--zzzzzzzz"]);
    assert!(
        err.to_string()
            .starts_with("unknown flag `--zzzzzzzz`; search takes `--limit`"),
        "{err}"
    );
    let err = fail(&["-x"]);
    assert!(
        err.to_string()
            .starts_with("unknown flag `-x`; search takes `-n`"),
        "{err}"
    );
    let err = fail(&["-limit", "5"]);
    assert_eq!(
        err.to_string(),
        "unknown flag `-l` in `-limit`; did you mean `--limit`?"
    );
    assert_eq!(err.suggestion(), Some("--limit"));
}

#[test]
fn aliases_answer_as_long_flags() {
    let args = bind(&["--max", "3", "q"]);
    assert_eq!(args.named["max_results"], Value::Int(3));
    let args = bind(&["--max-results=4", "q"]);
    assert_eq!(args.named["max_results"], Value::Int(4));
}

#[test]
fn values_are_typed_and_checked() {
    let err = fail(&["--limit", "-1"]);
    assert_eq!(
        err.to_string(),
        "invalid value `-1` for `--limit`: expected a whole number, 0 or more"
    );
    assert_eq!(err.kind(), BindErrorKind::InvalidValue);
    assert_eq!(err.argument_name(), Some("--limit"));
    let err = fail(&["-o", "ten"]);
    assert_eq!(
        err.to_string(),
        "invalid value `ten` for `-o`: expected a whole number"
    );
    let err = fail(&["-o", "1.5"]);
    assert_eq!(
        err.to_string(),
        "invalid value `1.5` for `-o`: expected a whole number"
    );
    let err = fail(&["--scale", "NaN"]);
    assert_eq!(err.kind(), BindErrorKind::InvalidValue);
    assert_eq!(
        err.to_string(),
        "invalid value `NaN` for `--scale`: expected a finite number"
    );
    let err = fail(&["--scale", "half"]);
    assert_eq!(
        err.to_string(),
        "invalid value `half` for `--scale`: expected a number"
    );
    let err = fail(&["--offset", "99999999999999999999"]);
    assert_eq!(
        err.to_string(),
        "invalid value `99999999999999999999` for `--offset`: \
         expected a whole number from -9223372036854775808 to 9223372036854775807"
    );
    let err = fail(&["--max", "99999999999999999999", "q"]);
    assert_eq!(
        err.to_string(),
        "invalid value `99999999999999999999` for `--max`: \
         expected a whole number from 0 to 18446744073709551615"
    );
    let long = format!("{}\n", "9".repeat(70));
    let err = fail(&["--limit", &long]);
    assert_eq!(
        err.to_string(),
        format!(
            "invalid value `{}…` for `--limit`: expected a whole number, 0 or more",
            "9".repeat(50)
        ),
        "a long value is cut short"
    );
    let err = fail(&["--limit", "1\n2"]);
    assert_eq!(
        err.to_string(),
        "invalid value `1\\n2` for `--limit`: expected a whole number, 0 or more",
        "a control character is escaped, so the message stays one line"
    );
    let err = fail(&["--mode", "fsat"]);
    assert_eq!(
        err.to_string(),
        "invalid value `fsat` for `--mode`: expected one of `fast` or `thorough`; did you mean `fast`?"
    );
    let err = fail(&["--filter", "{oops"]);
    assert!(
        err.to_string()
            .starts_with("invalid value `{oops` for `--filter`: expected JSON"),
        "{err}"
    );
    let args = bind(&["--filter", r#"{"a":[1,2]}"#, "--scale=2.5", "q"]);
    assert_eq!(args.named["filter"], Value::Json(json!({"a": [1, 2]})));
    assert_eq!(args.named["scale"], Value::Float(2.5));
    let big = bind(&["--limit", "18446744073709551615", "q"]);
    assert_eq!(big.named["limit"], Value::Json(json!(u64::MAX)));
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
fn a_missing_value_is_named() {
    let err = fail(&["q", "--limit"]);
    assert_eq!(err.kind(), BindErrorKind::MissingValue);
    assert_eq!(
        err.to_string(),
        "`--limit` needs a value, as in `--limit <LIMIT>`"
    );
    let err = fail(&["--mode"]);
    assert_eq!(
        err.to_string(),
        "`--mode` needs a value, as in `--mode <fast|thorough>`"
    );
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
fn help_is_requested_not_an_error() {
    for words in [&["--help"][..], &["-h"], &["q", "-ah"]] {
        let err = fail(words);
        assert!(err.is_help(), "{words:?}");
    }
    let args = bind(&["--", "--help"]);
    assert_eq!(args.positional, [s("--help")]);
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
fn json_arguments_are_type_checked() {
    let schema = schema();
    let args = schema
        .parse_json(&json!({
            "query": "rust",
            "more": ["a", "b"],
            "limit": 3,
            "offset": -2,
            "scale": 1.5,
            "all": true,
            "verbose": 2,
            "tag": "single",
            "mode": "fast",
            "filter": {"any": ["json"]},
            "max": 9,
            "point": [1, 2],
            "brief": null,
        }))
        .unwrap();
    assert_eq!(args.positional, [s("rust"), s("a"), s("b")]);
    assert_eq!(args.named["limit"], Value::Int(3));
    assert_eq!(args.named["offset"], Value::Int(-2));
    assert_eq!(args.named["all"], Value::Bool(true));
    assert_eq!(args.named["verbose"], Value::Int(2));
    assert_eq!(
        args.named["tag"],
        Value::Json(json!(["single"])),
        "a single value becomes a list"
    );
    assert_eq!(args.named["filter"], Value::Json(json!({"any": ["json"]})));
    assert_eq!(args.named["max_results"], Value::Int(9));
    assert!(!args.named.contains_key("brief"), "null is absent");

    let cases = [
        (
            json!({"limit": "3"}),
            "invalid value `\"3\"` for `limit`: expected a whole number, 0 or more; \
             write `3`, without quotes",
        ),
        (
            json!({"limit": -1}),
            "invalid value `-1` for `limit`: expected a whole number, 0 or more",
        ),
        (
            json!({"offset": 1.5}),
            "invalid value `1.5` for `offset`: expected a whole number",
        ),
        (
            json!({"offset": 3.0}),
            "invalid value `3.0` for `offset`: expected a whole number; write `3`",
        ),
        (
            json!({"offset": u64::MAX}),
            "invalid value `18446744073709551615` for `offset`: \
             expected a whole number from -9223372036854775808 to 9223372036854775807",
        ),
        (
            json!({"scale": "2.5"}),
            "invalid value `\"2.5\"` for `scale`: expected a number; write `2.5`, without quotes",
        ),
        (
            json!({"all": "yes"}),
            "invalid value `\"yes\"` for `all`: expected `true` or `false`",
        ),
        (
            json!({"all": "true"}),
            "invalid value `\"true\"` for `all`: expected `true` or `false`; \
             write `true`, without quotes",
        ),
        (
            json!({"mode": "slow"}),
            "invalid value `\"slow\"` for `mode`: expected one of `fast` or `thorough`",
        ),
        (
            json!({"mode": "fsat"}),
            "invalid value `\"fsat\"` for `mode`: expected one of `fast` or `thorough`; \
             did you mean `fast`?",
        ),
        (
            json!({"tag": [1]}),
            "invalid value `1` for `tag`: expected a string; write `\"1\"`, in quotes",
        ),
        (
            json!({"query": {"text": "rust"}}),
            "invalid value `{\"text\":\"rust\"}` for `query`: expected a string",
        ),
        (
            json!({"querry": "x"}),
            "unknown argument `querry`; did you mean `query`?",
        ),
        (
            json!(["query"]),
            "arguments must be a JSON object of named values, not an array",
        ),
    ];
    for (input, message) in cases {
        assert_eq!(
            schema.parse_json(&input).unwrap_err().to_string(),
            message,
            "{input}"
        );
    }
    let err = schema
        .parse_json(&json!({"max": 1, "max_results": 2}))
        .unwrap_err();
    assert_eq!(err.kind(), BindErrorKind::Duplicate);
}

#[test]
fn json_schema_is_usable_as_an_mcp_input_schema() {
    let json = schema().json_schema();
    assert_eq!(
        json["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(json["type"], "object");
    assert_eq!(json["description"], "Search the notes.");
    assert_eq!(json["required"], json!(["query"]));
    assert_eq!(json["additionalProperties"], json!(false));
    let props = &json["properties"];
    assert_eq!(
        props["query"],
        json!({"type": "string", "description": "What to find."})
    );
    assert_eq!(
        props["more"],
        json!({"type": "array", "items": {"type": "string"}, "description": "More terms."})
    );
    assert_eq!(
        props["limit"],
        json!({"type": "integer", "minimum": 0, "default": 10, "description": "How many."})
    );
    assert_eq!(props["offset"], json!({"type": "integer"}));
    assert_eq!(props["scale"], json!({"type": "number"}));
    assert_eq!(props["all"], json!({"type": "boolean"}));
    assert_eq!(
        props["verbose"],
        json!({"type": "integer", "minimum": 0, "maximum": 255})
    );
    assert_eq!(
        props["mode"],
        json!({"type": "string", "enum": ["fast", "thorough"]})
    );
    assert_eq!(props["filter"], json!({}));
    assert_eq!(
        props["point"],
        json!({"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2})
    );
    let text = json.to_string();
    assert!(!text.contains("null"), "no null unions anywhere: {text}");
}

#[test]
fn help_lists_every_argument_with_its_description() {
    let schema = schema();
    let help = schema.help_text();
    assert!(
        help.starts_with("Search the notes.\n\nUsage: search [OPTIONS] <query> [more]...\n"),
        "{help}"
    );
    for param in schema.params.iter() {
        assert!(
            help.contains(&*param.long),
            "help lists `{}`:\n{help}",
            param.long
        );
        if !param.description.is_empty() {
            assert!(
                help.contains(&*param.description),
                "help describes `{}`:\n{help}",
                param.long
            );
        }
    }
    assert!(help.contains("-n, --limit <LIMIT>"), "{help}");
    assert!(help.contains("[default: 10]"), "{help}");
    assert!(help.contains("--mode <fast|thorough>"), "{help}");
    assert!(help.contains("-h, --help"), "{help}");
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
fn flag_spelling_mistakes_get_pointed_advice() {
    let err = fail(&["--=x"]);
    assert_eq!(
        err.to_string(),
        "`--=` has no flag name before `=`; write `--name=value`"
    );
    let one_char = ToolSchema::new("t")
        .with_param(ParamSchema::new("f", ValueKind::Bool).long("f").short('x'));
    assert!(
        one_char.parse_words(&["-f"]).unwrap().flags.contains("f"),
        "a one-character name answers `-f`"
    );
    let with_long_f =
        ToolSchema::new("t").with_param(ParamSchema::new("force", ValueKind::Bool).long("f"));
    let err = with_long_f.parse_words(&["-f"]).unwrap_err();
    assert_eq!(err.to_string(), "unknown flag `-f`; did you mean `--f`?");
}

#[test]
fn wire_names_are_accepted_as_long_flags() {
    let args = bind(&["--max_results=5", "q"]);
    assert_eq!(args.named["max_results"], Value::Int(5));
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

#[test]
fn json_lists_must_fit_the_value_count() {
    let err = schema().parse_json(&json!({"point": [1]})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid value `[1]` for `point`: expected a list of 2 values, not 1"
    );
    assert_eq!(err.kind(), BindErrorKind::InvalidValue);
    assert_eq!(err.argument_name(), Some("point"));
}

#[test]
fn help_shows_dots_only_for_several_values_per_use() {
    let schema = ToolSchema::new("plot")
        .with_param(ParamSchema::new("point", ValueKind::Float).consumes(2, Some(2)))
        .with_param(
            ParamSchema::new("tag", ValueKind::String)
                .short('t')
                .repeatable(),
        )
        .with_param(ParamSchema::new("color", ValueKind::String).consumes(0, Some(1)));
    let help = schema.help_text();
    let line = |flag: &str| {
        help.lines()
            .find(|l| l.contains(flag))
            .unwrap_or_else(|| panic!("no {flag}:\n{help}"))
            .to_owned()
    };
    assert!(line("--point").contains("--point <POINT>..."), "{help}");
    let tag = line("--tag");
    assert!(
        tag.contains("-t, --tag <TAG> ") && tag.ends_with("[repeatable]"),
        "{tag}"
    );
    assert!(!line("--color").contains("..."), "{help}");
}

#[test]
fn unknown_names_and_stray_words_are_quoted_short_and_on_one_line() {
    let long = "z".repeat(80);
    let cut = format!("{}…", "z".repeat(50));
    let err = fail(&[&format!("--{long}")]);
    assert!(
        err.to_string()
            .starts_with(&format!("unknown flag `--{cut}`; search takes `--limit`")),
        "{err}"
    );
    let err = fail(&["--li\nmit"]);
    assert!(
        err.to_string().starts_with("unknown flag `--li\\nmit`"),
        "{err}"
    );
    let err = fail(&[&format!("-a{long}")]);
    assert!(
        err.to_string().starts_with("unknown flag `-z`"),
        "a cluster names the one flag: {err}"
    );
    let err = fail(&["-\u{1b}"]);
    assert!(
        err.to_string().starts_with("unknown flag `-\\u{1b}`"),
        "an escape character is shown escaped: {err}"
    );
    let err = schema()
        .parse_json(&json!({ long.clone(): 1 }))
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("unknown argument `{cut}`;")),
        "{err}"
    );
    let words = ToolSchema::new("one")
        .with_param(ParamSchema::new("only", ValueKind::String).positional(0))
        .parse_words(&["a", &format!("b\n{long}")])
        .unwrap_err();
    assert_eq!(
        words.to_string(),
        format!(
            "unexpected argument `b\\n{}…`: one takes 1 positional argument (<only>)",
            "z".repeat(48)
        )
    );
}
