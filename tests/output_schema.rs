//! `#[ipc(output_schema)]` with real schemars derives: the output schema a
//! registered command carries (an object root, a non-object answer wrapped
//! in `result`, `Option` a property not required, nested types inlined), the
//! structured answer that matches it, and a recursive type refused.

use gangway::IpcCommand;
use gangway::ipc::{CommandResult, IpcRouter, RegisterError};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A text's counts.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Report {
    /// How many words.
    words: u32,
    /// The longest word.
    longest: Option<String>,
    /// Where the text came from.
    source: Source,
    tags: Vec<Tag>,
}

/// A nested type: inlined, never a `$ref`.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Source {
    path: String,
    line: Option<u32>,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Tag {
    Short,
    Long,
}

#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = Report, output_schema)]
struct Analyse {}

impl Analyse {
    async fn handle(&mut self) -> Report {
        Report {
            words: 2,
            longest: None,
            source: Source {
                path: "a.txt".into(),
                line: None,
            },
            tags: vec![Tag::Short],
        }
    }
}

#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = CommandResult<Option<u32>>, output_schema)]
struct Find {}

impl Find {
    async fn handle(&mut self) -> CommandResult<Option<u32>> {
        Ok(Some(4))
    }
}

/// A type that contains itself cannot be inlined.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Tree {
    children: Vec<Tree>,
}

#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = Tree, output_schema)]
struct Grow {}

impl Grow {
    async fn handle(&mut self) -> Tree {
        Tree {
            children: Vec::new(),
        }
    }
}

#[test]
fn an_object_answer_is_the_root_inlined_without_null_unions() {
    let router = IpcRouter::new().register(Analyse {});
    let output = router
        .command("analyse")
        .unwrap()
        .schema
        .output_schema
        .clone()
        .expect("an output schema");
    assert!(!output.wrapped);
    let schema = serde_json::Value::Object(output.schema.clone());
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["required"], json!(["words", "source", "tags"]));
    assert_eq!(
        schema["properties"]["longest"],
        json!({"type": "string", "description": "The longest word."})
    );
    assert_eq!(schema["properties"]["source"]["type"], "object");
    assert_eq!(
        schema["properties"]["source"]["description"],
        "Where the text came from."
    );
    assert_eq!(
        schema["properties"]["source"]["properties"]["line"]["type"],
        "integer"
    );
    assert_eq!(schema["properties"]["source"]["required"], json!(["path"]));
    assert_eq!(
        schema["properties"]["tags"]["items"]["enum"],
        json!(["short", "long"])
    );
    let text = schema.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$defs") && !text.contains("null"),
        "{text}"
    );
    // The manifest carries it, as `gangway mcp` reads it from the host.
    let manifest: gangway::tool::Manifest =
        serde_json::from_value(serde_json::to_value(router.manifest()).unwrap()).unwrap();
    assert_eq!(manifest.commands[0].output_schema.as_ref(), Some(&output));
    // An answer's `None`s are absent properties.
    assert_eq!(
        output.structured(json!({
            "words": 2, "longest": null, "source": {"path": "a.txt", "line": null}, "tags": ["short"]
        })),
        json!({"words": 2, "source": {"path": "a.txt"}, "tags": ["short"]})
    );
}

#[test]
fn any_other_answer_is_wrapped_in_result() {
    let router = IpcRouter::new().register(Find {});
    let output = router
        .command("find")
        .unwrap()
        .schema
        .output_schema
        .clone()
        .unwrap();
    assert!(output.wrapped);
    // A `Result`'s success, an `Option`: `result` is not required.
    assert_eq!(
        output.schema["properties"]["result"]["type"],
        json!("integer")
    );
    assert_eq!(output.schema["required"], json!([]));
    assert_eq!(output.structured(json!(4)), json!({"result": 4}));
    assert_eq!(output.structured(json!(null)), json!({}));
}

#[test]
fn a_type_that_contains_itself_is_refused_at_registration() {
    let error = IpcRouter::new().try_register(Grow {}).unwrap_err();
    assert!(
        matches!(&error.reason, RegisterError::OutputSchema { name, .. } if name == "grow"),
        "{:?}",
        error.reason
    );
    let message = error.reason.to_string();
    assert!(
        message.contains("`Tree` contains itself") && message.contains("#[ipc(output_schema)]"),
        "{message}"
    );
}

#[test]
fn a_command_without_it_has_no_output_schema() {
    #[derive(Clone, Serialize, IpcCommand)]
    #[ipc(response = String)]
    struct Plain {}
    impl Plain {
        async fn handle(&mut self) -> String {
            String::new()
        }
    }
    let router = IpcRouter::new().register(Plain {});
    assert_eq!(router.command("plain").unwrap().schema.output_schema, None);
    let json = serde_json::to_string(&router.manifest()).unwrap();
    assert!(!json.contains("output_schema"), "{json}");
}
