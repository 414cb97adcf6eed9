//! What the binder tells a caller, one test each, written from the rules in
//! the docs: unknown flags and their suggestions, bad and missing values,
//! names quoted short on one line, and the help text.

use gangway_codegen::args::Value;
use gangway_codegen::bind::BindErrorKind;
use gangway_codegen::schema::{ParamSchema, ToolSchema, ValueKind};
use serde_json::json;

mod common;

#[path = "common/search.rs"]
mod search;

use search::{bind, fail, s, schema};

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
