//! The binder's rules for JSON objects, one test each, written from the
//! rules in the docs: arguments type-checked against the schema, and the
//! schema published as an MCP input schema.

use gangway_codegen::args::Value;
use gangway_codegen::bind::BindErrorKind;
use serde_json::json;

mod common;

#[path = "common/search.rs"]
mod search;

use search::{s, schema};

/// The JSON arguments `json_arguments_are_type_checked` sees refused, each
/// with what the refusal says.
fn refused_json() -> [(serde_json::Value, &'static str); 14] {
    [
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
    ]
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

    for (input, message) in refused_json() {
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
