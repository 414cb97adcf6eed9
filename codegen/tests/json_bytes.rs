//! Bytes arguments in JSON: a string (its UTF-8 bytes) or
//! `{"base64": "..."}`, what each bad shape or bad base64 is told, and the
//! JSON Schema that publishes both forms.

use gangway_codegen::args::Value;
use gangway_codegen::bind::BindErrorKind;
use gangway_codegen::schema::{ParamSchema, ToolSchema, ValueKind};
use serde_json::json;

/// A checksum command: bytes on stdin, a list of bytes keys, a secret
/// bytes salt.
fn schema() -> ToolSchema {
    ToolSchema::new("checksum")
        .with_param(
            ParamSchema::new("data", ValueKind::Bytes)
                .stdin()
                .required()
                .description("The bytes to sum."),
        )
        .with_param(ParamSchema::new("keys", ValueKind::Bytes).repeatable())
        .with_param(ParamSchema::new("salt", ValueKind::Bytes).secret())
}

fn bytes_of(args: serde_json::Value, name: &str) -> Value {
    let bound = schema().parse_json(&args).unwrap();
    bound.named[name].clone()
}

#[test]
fn a_string_is_its_utf8_bytes() {
    assert_eq!(
        bytes_of(json!({"data": "héllo"}), "data"),
        Value::Bytes("héllo".as_bytes().to_vec())
    );
    assert_eq!(
        bytes_of(json!({"data": ""}), "data"),
        Value::Bytes(Vec::new())
    );
}

#[test]
fn base64_gives_any_bytes() {
    // Wrapped as the `base64` program writes it: the breaks are no data.
    assert_eq!(
        bytes_of(json!({"data": {"base64": "/wD+\ngA==\n"}}), "data"),
        Value::Bytes(vec![0xff, 0x00, 0xfe, 0x80])
    );
    // 0xff 0x00 0xfe 0x80: not UTF-8.
    assert_eq!(
        bytes_of(json!({"data": {"base64": "/wD+gA=="}}), "data"),
        Value::Bytes(vec![0xff, 0x00, 0xfe, 0x80])
    );
    assert_eq!(
        bytes_of(json!({"data": {"base64": ""}}), "data"),
        Value::Bytes(Vec::new())
    );
    // A string that looks like base64 is still text.
    assert_eq!(
        bytes_of(json!({"data": "/wD+gA=="}), "data"),
        Value::Bytes(b"/wD+gA==".to_vec())
    );
}

#[test]
fn a_list_of_bytes_takes_either_form_per_item() {
    let keys = bytes_of(
        json!({"data": "x", "keys": ["ab", {"base64": "/w=="}]}),
        "keys",
    );
    // Lists are held as JSON: text as a string, other bytes as numbers.
    assert_eq!(keys, Value::Json(json!(["ab", [255]])));
}

#[test]
fn bad_base64_says_where_and_how_to_fix_it() {
    let fix = r#"give a string, or {"base64": "<standard base64>"}"#;
    let cases = [
        ("QUJ!", "invalid byte `!` at 3"),
        ("QUJD RA==!", "invalid byte `!` at 8"),
        ("QU=D", "padding `=` at 2 where none belongs"),
        ("QUJDRA===", "padding `=` at 6 where none belongs"),
        (
            "QUJDR",
            "5 characters end in a lone one; it comes in groups of 4",
        ),
        (
            "QUJDRA",
            "missing `=` padding; it comes in groups of 4 characters",
        ),
        (
            "QUJDRB==",
            "the last symbol `B` at 5 has bits no byte uses: cut short?",
        ),
        // URL-safe base64 is not the standard alphabet.
        (
            "_w==",
            "invalid byte `_` at 0: URL-safe base64? use the standard alphabet, `+` and `/`",
        ),
    ];
    for (encoded, what) in cases {
        let error = schema()
            .parse_json(&json!({"data": {"base64": encoded}}))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("argument `data`: not valid base64 ({what}); {fix}"),
            "{encoded:?}"
        );
        assert_eq!(error.kind(), BindErrorKind::InvalidValue);
        assert_eq!(error.argument_name(), Some("data"));
    }
}

#[test]
fn a_secrets_bad_base64_does_not_show_its_bytes() {
    let error = schema()
        .parse_json(&json!({"data": "x", "salt": {"base64": "c2Vj!"}}))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"argument `salt`: not valid base64 (invalid byte at 4); give a string, or {"base64": "<standard base64>"}"#
    );
}

#[test]
fn any_other_shape_names_both_forms() {
    let forms = r#"expected a string, or {"base64": "<standard base64>"}"#;
    let cases = [
        (
            json!(3),
            format!("invalid value `3` for `data`: {forms}; write `\"3\"`, in quotes"),
        ),
        (
            json!([1, 2]),
            format!("invalid value `[1,2]` for `data`: {forms}"),
        ),
        (
            json!({"b64": "QUJD"}),
            format!(r#"invalid value `{{"b64":"QUJD"}}` for `data`: {forms}"#),
        ),
        (
            json!({"base64": 3}),
            format!(r#"invalid value `{{"base64":3}}` for `data`: {forms}"#),
        ),
        (
            json!({"base64": "QUJD", "text": "x"}),
            format!(r#"invalid value `{{"base64":"QUJD","text":"x"}}` for `data`: {forms}"#),
        ),
    ];
    for (data, message) in cases {
        let error = schema().parse_json(&json!({ "data": data })).unwrap_err();
        assert_eq!(error.to_string(), message, "{data}");
        assert_eq!(error.kind(), BindErrorKind::InvalidValue);
    }
    let error = schema()
        .parse_json(&json!({"data": "x", "salt": {"hex": "00"}}))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("invalid value for `salt` (secret, not shown): {forms}")
    );
}

#[test]
fn the_json_schema_offers_a_string_or_base64() {
    let json = schema().json_schema();
    let base64 = json!({
        "type": "object",
        "properties": {"base64": {"type": "string", "contentEncoding": "base64"}},
        "required": ["base64"],
        "additionalProperties": false
    });
    assert_eq!(
        json["properties"]["data"],
        json!({
            "anyOf": [{"type": "string"}, base64],
            "description": "The bytes to sum."
        })
    );
    assert_eq!(
        json["properties"]["keys"],
        json!({"type": "array", "items": {"anyOf": [{"type": "string"}, base64]}})
    );
    assert_eq!(json["required"], json!(["data"]));
    let text = json.to_string();
    assert!(!text.contains("null") && !text.contains("$ref"), "{text}");
}
