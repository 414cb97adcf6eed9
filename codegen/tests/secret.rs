//! Secret arguments (`ParamSchema::secret`): the flag in the schema and the
//! manifest, help's `(secret)` mark, and binder messages that never repeat
//! a secret's value.

use gangway_codegen::bind::{BindError, BindErrorKind};
use gangway_codegen::schema::{Manifest, ParamSchema, ToolSchema, ValueKind};
use serde_json::json;

mod common;
use common::enum_of;

/// A login command: a secret positional token, a secret API key, a secret
/// PIN with a default, a secret enum, a secret bool flag and a secret list,
/// beside a plain `--limit`.
fn schema() -> ToolSchema {
    ToolSchema::new("login")
        .with_description("Log in.")
        .with_param(
            ParamSchema::new("token", ValueKind::UInt)
                .positional(0)
                .secret()
                .description("The session token."),
        )
        .with_param(
            ParamSchema::new("api_key", ValueKind::String)
                .short('k')
                .required()
                .secret()
                .description("The API key."),
        )
        .with_param(
            ParamSchema::new("pin", ValueKind::Int)
                .default_text("4321")
                .secret()
                .description("The PIN."),
        )
        .with_param(ParamSchema::new("realm", enum_of(&["alpha", "beta"])).secret())
        .with_param(ParamSchema::new("insecure", ValueKind::Bool).secret())
        .with_param(
            ParamSchema::new("pair", ValueKind::Int)
                .consumes(2, Some(2))
                .secret(),
        )
        .with_param(ParamSchema::new("limit", ValueKind::UInt).short('n'))
}

fn words_error(words: &[&str]) -> BindError {
    schema()
        .parse_words(words)
        .expect_err("the words are refused")
}

fn json_error(value: serde_json::Value) -> BindError {
    schema()
        .parse_json(&value)
        .expect_err("the JSON is refused")
}

/// The message names `argument` and does not hold `value` anywhere, byte for
/// byte.
fn hides(error: &BindError, value: &str, argument: &str) {
    let message = error.to_string();
    assert!(
        !message.contains(value),
        "the message repeats the secret `{value}`: {message}"
    );
    assert!(
        message.contains(argument),
        "the message does not name `{argument}`: {message}"
    );
    assert!(
        error.suggestion().is_none_or(|s| !s.contains(value)),
        "{message}"
    );
}

#[test]
fn the_builder_marks_a_secret_and_plain_params_are_not() {
    let schema = schema();
    assert!(schema.param("api_key").unwrap().secret);
    assert!(!schema.param("limit").unwrap().secret);
    assert!(!ParamSchema::new("x", ValueKind::String).secret);
}

#[test]
fn the_manifest_round_trips_the_flag_and_writes_it_only_when_set() {
    let manifest = Manifest::new(vec![schema()]);
    let text = serde_json::to_string(&manifest).unwrap();
    let back: Manifest = serde_json::from_str(&text).unwrap();
    assert_eq!(back, manifest);
    assert!(back.commands[0].param("api_key").unwrap().secret);

    let value = serde_json::to_value(&manifest).unwrap();
    let params = value["commands"][0]["params"].as_array().unwrap();
    let by_name = |name: &str| params.iter().find(|p| p["name"] == name).unwrap();
    assert_eq!(by_name("api_key")["secret"], json!(true));
    assert!(
        by_name("limit").get("secret").is_none(),
        "false is left out, like `hidden`"
    );

    let old: ParamSchema =
        serde_json::from_value(json!({"name": "x", "long": "x", "kind": "string"})).unwrap();
    assert!(
        !old.secret,
        "a manifest without the key reads as not secret"
    );
}

#[test]
fn help_marks_a_secret_and_hides_its_default() {
    let help = schema().help_text();
    let line = |needle: &str| {
        help.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle}: {help}"))
            .to_owned()
    };
    assert!(
        line("--api-key").contains("The API key. (secret) [required]"),
        "{help}"
    );
    assert!(
        line("<token>").contains("The session token. (secret)"),
        "{help}"
    );
    assert!(line("--pin").contains("The PIN. (secret)"), "{help}");
    assert!(line("--insecure").ends_with("(secret)"), "{help}");
    assert!(
        !help.contains("4321"),
        "a secret's default is not shown: {help}"
    );
    assert!(!line("--limit").contains("secret"), "{help}");
}

#[test]
fn json_schema_leaves_out_a_secret_default() {
    let json = schema().json_schema();
    assert_eq!(
        json["properties"]["pin"],
        json!({"type": "integer", "description": "The PIN."})
    );
}

#[test]
fn an_invalid_word_for_a_secret_is_not_repeated() {
    let err = words_error(&["--api-key", "k", "--pin", "hunter2"]);
    assert_eq!(err.kind(), BindErrorKind::InvalidValue);
    assert_eq!(
        err.to_string(),
        "invalid value for `--pin` (secret, not shown): expected a whole number"
    );
    hides(&err, "hunter2", "--pin");
    assert_eq!(err.argument_name(), Some("--pin"));

    for words in [
        &["--pin=hunter2"][..],
        &["--pin", "99999999999999999999999"],
        &["--insecure=hunter2"],
        &["--pair", "1", "hunter2"],
    ] {
        let err = words_error(words);
        let given = words.last().unwrap().trim_start_matches("--pin=");
        let given = given.trim_start_matches("--insecure=");
        hides(&err, given, "(secret, not shown)");
    }
}

#[test]
fn an_invalid_positional_secret_is_not_repeated() {
    let err = words_error(&["s3cr3t-token"]);
    assert_eq!(
        err.to_string(),
        "invalid value for `<token>` (secret, not shown): expected a whole number, 0 or more"
    );
    hides(&err, "s3cr3t-token", "<token>");
}

#[test]
fn a_secret_enum_gets_no_suggestion() {
    let err = words_error(&["--realm", "alphx"]);
    hides(&err, "alphx", "--realm");
    assert_eq!(
        err.to_string(),
        "invalid value for `--realm` (secret, not shown): expected one of `alpha` or `beta`"
    );
    assert_eq!(
        err.suggestion(),
        None,
        "a near value would tell how close it came"
    );

    let err = json_error(json!({"realm": "alphx"}));
    hides(&err, "alphx", "realm");
    assert_eq!(err.suggestion(), None);
}

#[test]
fn a_plain_argument_still_quotes_its_value() {
    let err = words_error(&["--limit", "lots"]);
    assert_eq!(
        err.to_string(),
        "invalid value `lots` for `--limit`: expected a whole number, 0 or more"
    );
    let err = json_error(json!({"limit": "3"}));
    assert!(
        err.to_string().ends_with("write `3`, without quotes"),
        "{err}"
    );
}

#[test]
fn a_json_value_of_the_wrong_type_is_not_repeated_nor_its_fix() {
    let err = json_error(json!({"pin": "97531"}));
    assert_eq!(
        err.to_string(),
        "invalid value for `pin` (secret, not shown): expected a whole number; write it, \
         without quotes"
    );
    hides(&err, "97531", "pin");

    let err = json_error(json!({"api_key": 8642}));
    assert_eq!(
        err.to_string(),
        "invalid value for `api_key` (secret, not shown): expected a string; write it, in quotes"
    );
    hides(&err, "8642", "api_key");

    let err = json_error(json!({"pin": 97531.0}));
    assert!(
        err.to_string().ends_with("; write it as a whole number"),
        "{err}"
    );
    hides(&err, "97531", "pin");

    let err = json_error(json!({"insecure": "hunter2"}));
    hides(&err, "hunter2", "insecure");

    let err = json_error(json!({"pair": [1, 2, 97531]}));
    assert_eq!(err.kind(), BindErrorKind::InvalidValue);
    hides(&err, "97531", "pair");

    let err = json_error(json!({"pair": [1, "hunter2"]}));
    hides(&err, "hunter2", "pair");
}

#[test]
fn a_misspelt_flag_never_repeats_what_follows_its_equals_sign() {
    let err = words_error(&["--api-kye=hunter2"]);
    assert_eq!(err.kind(), BindErrorKind::UnknownFlag);
    assert_eq!(
        err.to_string(),
        "unknown flag `--api-kye`; did you mean `--api-key`?"
    );
    hides(&err, "hunter2", "--api-kye");
    assert_eq!(err.argument_name(), Some("--api-kye"));

    let err = words_error(&["--=hunter2"]);
    assert_eq!(
        err.to_string(),
        "`--=` has no flag name before `=`; write `--name=value`"
    );
    assert!(!err.argument_name().unwrap().contains("hunter2"));
}
