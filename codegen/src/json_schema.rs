//! A schema as JSON Schema (draft 2020-12), usable as an MCP tool's
//! `inputSchema` or an LLM function's parameters.

use serde_json::{Map, Value as Json, json};

use crate::schema::{ParamSchema, ToolSchema, ValueKind};

impl ToolSchema {
    /// The arguments as a JSON Schema object: `type: object`, one property
    /// per parameter (with its description, type, enum values and default,
    /// except a secret's default),
    /// `required`, and no other properties. An optional argument is a plain
    /// property left out of `required`, never a `["T", "null"]` union, which
    /// several clients reject. A bytes argument is `anyOf` a string and
    /// `{"base64": "..."}`, the two forms
    /// [`parse_json`](ToolSchema::parse_json) takes.
    ///
    /// ```
    /// use gangway_codegen::schema::{ParamSchema, ToolSchema, ValueKind};
    ///
    /// let schema = ToolSchema::new("search")
    ///     .with_description("Search.")
    ///     .with_param(ParamSchema::new("query", ValueKind::String).required().description("What to find."))
    ///     .with_param(ParamSchema::new("limit", ValueKind::UInt).default_text("10"));
    /// let json = schema.json_schema();
    /// assert_eq!(json["properties"]["limit"], serde_json::json!({"type": "integer", "minimum": 0, "default": 10}));
    /// assert_eq!(json["required"], serde_json::json!(["query"]));
    /// ```
    pub fn json_schema(&self) -> Json {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for param in self.params.iter().filter(|p| !p.hidden) {
            properties.insert(param.name.to_string(), property(param));
            if param.required {
                required.push(Json::String(param.name.to_string()));
            }
        }
        let mut schema = Map::new();
        schema.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        schema.insert("type".into(), json!("object"));
        if !self.description.is_empty() {
            let description = if self.long_description.is_empty() {
                self.description.to_string()
            } else {
                format!("{}\n\n{}", self.description, self.long_description)
            };
            schema.insert("description".into(), Json::String(description));
        }
        schema.insert("properties".into(), Json::Object(properties));
        schema.insert("required".into(), Json::Array(required));
        schema.insert("additionalProperties".into(), json!(false));
        Json::Object(schema)
    }
}

fn property(param: &ParamSchema) -> Json {
    let mut item = value_schema(&param.kind);
    let mut property = if param.is_list() {
        let mut array = Map::new();
        array.insert("type".into(), json!("array"));
        array.insert("items".into(), Json::Object(std::mem::take(&mut item)));
        if let Some(count) = param.consumes.filter(|_| !param.repeatable) {
            array.insert("minItems".into(), json!(count.min));
            if let Some(max) = count.max {
                array.insert("maxItems".into(), json!(max));
            }
        }
        array
    } else {
        item
    };
    if !param.description.is_empty() {
        property.insert(
            "description".into(),
            Json::String(param.description.to_string()),
        );
    }
    // A secret's default is not published, as help does not show it.
    if let Some(default) = param.default.as_ref().filter(|_| !param.secret)
        && let Some(value) = typed_default(param, default)
    {
        property.insert("default".into(), value);
    }
    Json::Object(property)
}

fn value_schema(kind: &ValueKind) -> Map<String, Json> {
    let mut schema = Map::new();
    match kind {
        ValueKind::String | ValueKind::Path => {
            schema.insert("type".into(), json!("string"));
        }
        // JSON has no bytes: text as a string, anything else as base64.
        ValueKind::Bytes => {
            schema.insert(
                "anyOf".into(),
                json!([
                    {"type": "string"},
                    {
                        "type": "object",
                        "properties": {"base64": {"type": "string", "contentEncoding": "base64"}},
                        "required": ["base64"],
                        "additionalProperties": false
                    }
                ]),
            );
        }
        ValueKind::Int => {
            schema.insert("type".into(), json!("integer"));
        }
        ValueKind::UInt => {
            schema.insert("type".into(), json!("integer"));
            schema.insert("minimum".into(), json!(0));
        }
        ValueKind::Count => {
            schema.insert("type".into(), json!("integer"));
            schema.insert("minimum".into(), json!(0));
            schema.insert("maximum".into(), json!(255));
        }
        ValueKind::Float => {
            schema.insert("type".into(), json!("number"));
        }
        ValueKind::Bool => {
            schema.insert("type".into(), json!("boolean"));
        }
        ValueKind::Enum(values) => {
            schema.insert("type".into(), json!("string"));
            schema.insert(
                "enum".into(),
                Json::Array(values.iter().map(|v| json!(v)).collect()),
            );
        }
        // Any JSON value: no constraint at all.
        ValueKind::Json => {}
    }
    schema
}

/// The default text as a JSON value of the parameter's type, when it parses
/// as one; text that does not is left out rather than published wrong.
fn typed_default(param: &ParamSchema, text: &str) -> Option<Json> {
    if param.repeatable {
        return None;
    }
    match &param.kind {
        ValueKind::String | ValueKind::Path | ValueKind::Bytes => Some(json!(text)),
        ValueKind::Enum(values) => values.iter().any(|v| v == text).then(|| json!(text)),
        ValueKind::Int => text.parse::<i64>().ok().map(Json::from),
        ValueKind::UInt | ValueKind::Count => text.parse::<u64>().ok().map(Json::from),
        ValueKind::Float => text
            .parse::<f64>()
            .ok()
            .and_then(|x| serde_json::Number::from_f64(x).map(Json::Number)),
        ValueKind::Bool => text.parse::<bool>().ok().map(Json::Bool),
        ValueKind::Json => serde_json::from_str(text).ok(),
    }
}
