//! A command's output schema: the JSON Schema of what a successful call
//! answers, made fit for an MCP tool's `outputSchema` from the schema a
//! generator (schemars) gives, and the answer made to match it.
//!
//! What MCP clients accept, and so what [`OutputSchema::from_json_schema`]
//! makes of a generated schema:
//!
//! - an object root: a schema whose root is not `"type": "object"` (a
//!   number, a list, an enum of variants, any JSON) is wrapped as the one
//!   property `result` of an object, and the answer with it;
//! - everything inline: each `$ref` to a definition is replaced by the
//!   definition, and `$defs` dropped; a recursive type, which cannot be
//!   inlined, is refused ([`OutputSchemaError::Recursive`]);
//! - no null unions: `["T", "null"]`, `anyOf: [T, {"type": "null"}]`,
//!   `nullable` and a `null` among `enum` values become `T` alone, and a
//!   property that admitted null is no longer required. An answer's
//!   `null`-valued property is left out to match
//!   ([`OutputSchema::structured`]), so `Option<T>`'s `None` is an absent
//!   property. (A `null` inside a list is kept, and is not described.)

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json, json};

/// The JSON Schema of a command's successful answer, as an MCP tool's
/// `outputSchema`: an object root, inline, with no null unions (see
/// [`from_json_schema`](OutputSchema::from_json_schema)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OutputSchema {
    /// The schema (draft 2020-12), its root `"type": "object"`.
    pub schema: Map<String, Json>,
    /// Whether the answer's own schema was not an object, so the schema
    /// is an object whose one property `result` holds it, and an answer
    /// is given as `{"result": answer}`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub wrapped: bool,
}

/// Why a generated schema cannot be an output schema.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputSchemaError {
    /// The type refers to itself (a tree, a linked list), so its schema
    /// cannot be written out inline.
    Recursive {
        /// The definition that refers to itself.
        definition: String,
    },
    /// A `$ref` names no definition of the schema.
    UnknownRef {
        /// The reference.
        reference: String,
    },
}

impl std::fmt::Display for OutputSchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OutputSchemaError::Recursive { definition } => write!(
                f,
                "the response type `{definition}` contains itself, so its JSON Schema cannot be \
                 inlined as an MCP output schema; remove `#[ipc(output_schema)]` (the answer is \
                 then JSON text) or answer with a type that does not nest itself"
            ),
            OutputSchemaError::UnknownRef { reference } => write!(
                f,
                "the response type's JSON Schema refers to `{reference}`, which it does not \
                 define; its `JsonSchema` impl is incomplete"
            ),
        }
    }
}

impl std::error::Error for OutputSchemaError {}

fn is_false(value: &bool) -> bool {
    !*value
}

/// The draft every schema gangway publishes follows.
const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// Keywords whose value is one subschema.
const ONE: &[&str] = &[
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
];
/// Keywords whose value is a list of subschemas.
const LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Keywords whose value maps names to subschemas.
const MAP: &[&str] = &["properties", "patternProperties", "dependentSchemas"];

impl OutputSchema {
    /// The output schema of a generated JSON Schema (as schemars writes
    /// it, definitions in `$defs` or `definitions`): inlined, null unions
    /// removed, and wrapped in `{"result": ...}` when its root is not an
    /// object.
    ///
    /// ```
    /// use gangway_codegen::schema::OutputSchema;
    /// use serde_json::json;
    ///
    /// let output = OutputSchema::from_json_schema(&json!({"type": "integer"})).unwrap();
    /// assert!(output.wrapped);
    /// assert_eq!(output.schema["properties"], json!({"result": {"type": "integer"}}));
    /// assert_eq!(output.structured(json!(3)), json!({"result": 3}));
    /// ```
    ///
    /// # Errors
    ///
    /// [`OutputSchemaError::Recursive`] for a type that contains itself,
    /// [`OutputSchemaError::UnknownRef`] for a reference to nothing.
    pub fn from_json_schema(generated: &Json) -> Result<OutputSchema, OutputSchemaError> {
        let mut root = generated.clone();
        let definitions = match &mut root {
            Json::Object(object) => {
                let mut definitions = Map::new();
                for key in ["$defs", "definitions"] {
                    if let Some(Json::Object(defs)) = object.remove(key) {
                        definitions.extend(defs);
                    }
                }
                object.remove("$schema");
                definitions
            }
            _ => Map::new(),
        };
        // The root's own name, for a root that contains itself (`$ref: "#"`).
        let root_name = root
            .get("title")
            .and_then(Json::as_str)
            .unwrap_or("(the root)")
            .to_owned();
        inline(&mut root, &definitions, &mut vec![root_name])?;
        let admits_null = strip_null(&mut root);
        // An optional object (`Option<Stats>`) is wrapped too: its `None`
        // must still answer an object (`{}`).
        let is_object = !admits_null && root.get("type").and_then(Json::as_str) == Some("object");
        let (mut schema, wrapped) = match root {
            Json::Object(object) if is_object => (object, false),
            inner => {
                // `true` (any JSON) as `{}`, which every client reads.
                let inner = match inner {
                    Json::Bool(true) => json!({}),
                    other => other,
                };
                let required: &[&str] = if admits_null { &[] } else { &["result"] };
                let mut wrapper = Map::new();
                wrapper.insert("type".into(), json!("object"));
                wrapper.insert("properties".into(), json!({ "result": inner }));
                wrapper.insert("required".into(), json!(required));
                (wrapper, true)
            }
        };
        let mut with_draft = Map::new();
        with_draft.insert("$schema".into(), json!(DRAFT));
        schema.remove("$schema");
        with_draft.append(&mut schema);
        Ok(OutputSchema {
            schema: with_draft,
            wrapped,
        })
    }

    /// An answer as the structured content this schema describes: in
    /// `{"result": ...}` when the schema is wrapped, and without the
    /// `null`-valued properties the schema leaves out.
    pub fn structured(&self, answer: Json) -> Json {
        let mut value = if self.wrapped {
            json!({ "result": answer })
        } else {
            answer
        };
        let schema = Json::Object(self.schema.clone());
        drop_absent_nulls(&mut value, Some(&schema));
        value
    }
}

/// Replaces every `$ref` under `schema` by its definition; `inlining` is
/// the root's name, then the definitions being inlined, outermost first.
fn inline(
    schema: &mut Json,
    definitions: &Map<String, Json>,
    inlining: &mut Vec<String>,
) -> Result<(), OutputSchemaError> {
    let Json::Object(object) = schema else {
        return Ok(());
    };
    for_each_subschema(object, &mut |_, sub| inline(sub, definitions, inlining))?;
    let Some(Json::String(reference)) = object.remove("$ref") else {
        return Ok(());
    };
    let name = ["#/$defs/", "#/definitions/"]
        .iter()
        .find_map(|prefix| reference.strip_prefix(prefix))
        .map(|name| name.replace("~1", "/").replace("~0", "~"));
    let Some(name) = name else {
        // `#` is the root: the type contains itself.
        return Err(if reference == "#" {
            OutputSchemaError::Recursive {
                definition: inlining.first().cloned().unwrap_or_default(),
            }
        } else {
            OutputSchemaError::UnknownRef { reference }
        });
    };
    if inlining.contains(&name) {
        return Err(OutputSchemaError::Recursive { definition: name });
    }
    let Some(definition) = definitions.get(&name) else {
        return Err(OutputSchemaError::UnknownRef { reference });
    };
    let mut definition = definition.clone();
    inlining.push(name);
    let inlined = inline(&mut definition, definitions, inlining);
    inlining.pop();
    inlined?;
    // What sits beside the `$ref` (a field's description) wins over the
    // definition's own.
    let siblings = std::mem::take(object);
    *schema = match definition {
        Json::Object(mut definition) => {
            definition.extend(siblings);
            Json::Object(definition)
        }
        Json::Bool(true) if !siblings.is_empty() => Json::Object(siblings),
        other => other,
    };
    Ok(())
}

/// Calls `f` on every direct subschema of `object`, with the property's
/// name for those of `properties`.
fn for_each_subschema<E>(
    object: &mut Map<String, Json>,
    f: &mut impl FnMut(Option<&str>, &mut Json) -> Result<(), E>,
) -> Result<(), E> {
    for (key, value) in object.iter_mut() {
        match value {
            Json::Object(sub) if MAP.contains(&key.as_str()) => {
                for (name, sub) in sub.iter_mut() {
                    let name = (key == "properties").then_some(name.as_str());
                    f(name, sub)?;
                }
            }
            Json::Array(items) if LIST.contains(&key.as_str()) => {
                for item in items {
                    f(None, item)?;
                }
            }
            Json::Object(_) | Json::Bool(_) if ONE.contains(&key.as_str()) => f(None, value)?,
            _ => {}
        }
    }
    Ok(())
}

/// Removes the null unions under `schema`: the union's other side stays.
/// Whether `schema` admitted null (a union, `nullable`, or null alone),
/// so a property holding it is not required.
fn strip_null(schema: &mut Json) -> bool {
    let Json::Object(object) = schema else {
        return false;
    };
    let mut admits_null = matches!(object.remove("nullable"), Some(Json::Bool(true)));
    let mut nullable_properties = Vec::new();
    let _ = for_each_subschema::<()>(object, &mut |property, sub| {
        if strip_null(sub)
            && let Some(property) = property
        {
            nullable_properties.push(property.to_owned());
        }
        Ok(())
    });
    if let Some(Json::Array(required)) = object.get_mut("required") {
        required.retain(|name| !nullable_properties.iter().any(|p| name == p.as_str()));
    }
    if let Some(Json::Array(types)) = object.get_mut("type")
        && types.iter().any(|t| t == "null")
    {
        admits_null = true;
        if types.len() > 1 {
            types.retain(|t| t != "null");
        }
        if types.len() == 1 {
            let only = types.remove(0);
            object.insert("type".into(), only);
        }
    }
    admits_null |= object.get("type").is_some_and(|t| t == "null");
    if let Some(Json::Array(values)) = object.get_mut("enum")
        && values.len() > 1
        && values.iter().any(Json::is_null)
    {
        admits_null = true;
        values.retain(|v| !v.is_null());
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Json::Array(members)) = object.get_mut(key) else {
            continue;
        };
        let before = members.len();
        members.retain(|member| !is_null_only(member));
        admits_null |= members.len() < before;
        if members.len() == 1 && !object.keys().any(|k| k != key && is_assertion(k)) {
            // One side left: it is the schema, under what was beside the union.
            let Some(Json::Array(mut members)) = object.remove(key) else {
                continue;
            };
            if let Some(Json::Object(member)) = members.pop() {
                for (k, v) in member {
                    object.entry(k).or_insert(v);
                }
            }
        }
    }
    admits_null
}

/// Whether `schema` accepts `null` and nothing else.
fn is_null_only(schema: &Json) -> bool {
    let Json::Object(object) = schema else {
        return false;
    };
    object.get("type").is_some_and(|t| t == "null")
        || object.get("const").is_some_and(Json::is_null)
        || object
            .get("enum")
            .is_some_and(|e| e.as_array().is_some_and(|e| e.len() == 1 && e[0].is_null()))
}

/// Whether a keyword constrains values (rather than annotating them).
fn is_assertion(keyword: &str) -> bool {
    !matches!(
        keyword,
        "title" | "description" | "default" | "examples" | "deprecated" | "readOnly" | "writeOnly"
    )
}

/// Whether `schema` says nothing about a value's shape (any JSON).
fn is_free_form(schema: &Json) -> bool {
    match schema {
        Json::Bool(any) => *any,
        Json::Object(object) => !object.keys().any(|k| is_assertion(k) && k != "$schema"),
        _ => false,
    }
}

/// Whether a value of `schema` may be `null`.
fn accepts_null(schema: &Json) -> bool {
    is_free_form(schema)
        || match schema.get("type") {
            Some(Json::String(t)) => t == "null",
            Some(Json::Array(types)) => types.iter().any(|t| t == "null"),
            _ => false,
        }
}

/// Leaves out the `null`-valued properties of `value` that its `schema`
/// (`None` where it cannot be followed, as under `anyOf`) does not require
/// and whose own schema does not accept null. Free-form JSON is left as
/// it is.
fn drop_absent_nulls(value: &mut Json, schema: Option<&Json>) {
    if schema.is_some_and(is_free_form) {
        return;
    }
    match value {
        Json::Object(object) => {
            let property = |name: &str| -> Option<&Json> {
                let schema = schema?;
                schema
                    .get("properties")
                    .and_then(|p| p.get(name))
                    .or_else(|| schema.get("additionalProperties"))
            };
            let required = |name: &str| {
                schema
                    .and_then(|s| s.get("required"))
                    .and_then(Json::as_array)
                    .is_some_and(|r| r.iter().any(|r| r == name))
            };
            object.retain(|name, value| {
                !value.is_null() || required(name) || property(name).is_some_and(accepts_null)
            });
            for (name, value) in object.iter_mut() {
                drop_absent_nulls(value, property(name));
            }
        }
        Json::Array(items) => {
            let items_schema = schema.and_then(|s| s.get("items"));
            for item in items {
                drop_absent_nulls(item, items_schema);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(generated: Json) -> OutputSchema {
        OutputSchema::from_json_schema(&generated).unwrap()
    }

    #[test]
    fn an_object_root_is_kept() {
        let out = output(json!({
            "$schema": DRAFT,
            "title": "Stats",
            "type": "object",
            "properties": {"words": {"type": "integer", "minimum": 0}},
            "required": ["words"]
        }));
        assert!(!out.wrapped);
        assert_eq!(
            Json::Object(out.schema.clone()),
            json!({
                "$schema": DRAFT,
                "title": "Stats",
                "type": "object",
                "properties": {"words": {"type": "integer", "minimum": 0}},
                "required": ["words"]
            })
        );
        assert_eq!(out.structured(json!({"words": 2})), json!({"words": 2}));
    }

    #[test]
    fn anything_else_is_wrapped_in_result() {
        let list = output(json!({"$schema": DRAFT, "type": "array", "items": {"type": "string"}}));
        assert!(list.wrapped);
        assert_eq!(
            Json::Object(list.schema.clone()),
            json!({
                "$schema": DRAFT,
                "type": "object",
                "properties": {"result": {"type": "array", "items": {"type": "string"}}},
                "required": ["result"]
            })
        );
        assert_eq!(list.structured(json!(["a"])), json!({"result": ["a"]}));
        // Any JSON (`serde_json::Value`), and a nullable answer.
        let any = output(json!(true));
        assert_eq!(any.schema["properties"], json!({"result": {}}));
        assert_eq!(any.structured(Json::Null), json!({"result": null}));
        let maybe = output(json!({"type": ["integer", "null"]}));
        assert_eq!(
            maybe.schema["properties"],
            json!({"result": {"type": "integer"}})
        );
        assert_eq!(maybe.schema["required"], json!([]));
        assert_eq!(maybe.structured(Json::Null), json!({}));
    }

    #[test]
    fn an_option_is_a_property_not_required() {
        let out = output(json!({
            "type": "object",
            "properties": {
                "longest": {"type": ["string", "null"], "description": "The longest word."},
                "inner": {"anyOf": [{"$ref": "#/$defs/Inner"}, {"type": "null"}], "description": "Nested."},
                "flag": {"type": "boolean", "nullable": true},
                "mode": {"enum": ["a", "b", null]},
                "words": {"type": "integer"}
            },
            "required": ["longest", "inner", "flag", "mode", "words"],
            "$defs": {"Inner": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
        }));
        assert_eq!(
            out.schema["properties"],
            json!({
                "longest": {"type": "string", "description": "The longest word."},
                "inner": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "required": ["n"],
                    "description": "Nested."
                },
                "flag": {"type": "boolean"},
                "mode": {"enum": ["a", "b"]},
                "words": {"type": "integer"}
            })
        );
        assert_eq!(out.schema["required"], json!(["words"]));
        let text = Json::Object(out.schema.clone()).to_string();
        assert!(!text.contains("null") && !text.contains("$ref"), "{text}");
        // A `None` is left out; a free-form value keeps its nulls.
        assert_eq!(
            out.structured(json!({"longest": null, "inner": {"n": 1}, "words": 0})),
            json!({"inner": {"n": 1}, "words": 0})
        );
    }

    #[test]
    fn nested_definitions_are_inlined() {
        let out = output(json!({
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                "extra": {"type": "object", "additionalProperties": true}
            },
            "$defs": {
                "Item": {"type": "object", "properties": {"tag": {"$ref": "#/$defs/Tag"}}},
                "Tag": {"type": "string", "enum": ["x", "y"]}
            }
        }));
        assert_eq!(
            out.schema["properties"]["items"]["items"],
            json!({"type": "object", "properties": {"tag": {"type": "string", "enum": ["x", "y"]}}})
        );
        assert!(!out.schema.contains_key("$defs"));
        assert_eq!(
            out.structured(json!({"items": [{"tag": "x"}], "extra": {"k": null}})),
            json!({"items": [{"tag": "x"}], "extra": {"k": null}})
        );
    }

    #[test]
    fn a_recursive_type_is_refused() {
        let tree = json!({
            "$ref": "#/$defs/Tree",
            "$defs": {"Tree": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}
            }}
        });
        let error = OutputSchema::from_json_schema(&tree).unwrap_err();
        assert_eq!(
            error,
            OutputSchemaError::Recursive {
                definition: "Tree".into()
            }
        );
        assert!(error.to_string().contains("contains itself"), "{error}");
        let root = json!({"type": "object", "properties": {"next": {"$ref": "#"}}});
        assert!(matches!(
            OutputSchema::from_json_schema(&root),
            Err(OutputSchemaError::Recursive { .. })
        ));
        let dangling = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Gone"}}});
        assert_eq!(
            OutputSchema::from_json_schema(&dangling).unwrap_err(),
            OutputSchemaError::UnknownRef {
                reference: "#/$defs/Gone".into()
            }
        );
    }

    #[test]
    fn the_unit_type_is_an_optional_null() {
        let unit = output(json!({"type": "null"}));
        assert_eq!(
            unit.schema["properties"],
            json!({"result": {"type": "null"}})
        );
        assert_eq!(unit.schema["required"], json!([]));
        assert_eq!(unit.structured(Json::Null), json!({"result": null}));
    }

    #[test]
    fn an_optional_object_is_wrapped_so_none_answers_an_object() {
        let out = output(json!({
            "anyOf": [{"$ref": "#/$defs/Stats"}, {"type": "null"}],
            "$defs": {"Stats": {"type": "object", "properties": {"words": {"type": "integer"}}}}
        }));
        assert!(out.wrapped);
        assert_eq!(out.schema["required"], json!([]));
        assert_eq!(out.schema["properties"]["result"]["type"], "object");
        assert_eq!(out.structured(Json::Null), json!({}));
        assert_eq!(
            out.structured(json!({"words": 2})),
            json!({"result": {"words": 2}})
        );
    }

    #[test]
    fn round_trips_through_json() {
        let out = output(json!({"type": "integer"}));
        let text = serde_json::to_string(&out).unwrap();
        assert_eq!(serde_json::from_str::<OutputSchema>(&text).unwrap(), out);
    }
}
