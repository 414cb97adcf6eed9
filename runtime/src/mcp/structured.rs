//! The result of a call to a tool with an output schema
//! (`#[ipc(output_schema)]`): the MessagePack answer as JSON, given both
//! as `structuredContent` and, as MCP asks for clients that read only
//! content, as the same JSON in a text block.
//!
//! The answer arrives already in its JSON form (the router's
//! `structured_reply`, on the host: the success value as `serde_json`
//! writes it, encoded as MessagePack), so reading it back is exact. An
//! answer that has no JSON form (a 128-bit integer past `u64`) comes as
//! the command wrote it and is read as serde would write it: a map's key
//! that is not a string becomes its JSON text (`1` is `"1"`); bytes (`bin`,
//! and an extension's data) become an array of numbers, as schemars
//! describes a byte buffer; a NaN or infinite float becomes `null`; text
//! that is not UTF-8 is read lossily.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value as Json;

use crate::tool::OutputSchema;

/// The tool result of a successful call's MessagePack `reply`, after what
/// the handler streamed (a text block of its own, first).
pub(super) fn result(reply: &[u8], streamed: Vec<u8>, output: &OutputSchema) -> CallToolResult {
    let mut content = Vec::new();
    if !streamed.is_empty() {
        content.push(ContentBlock::text(
            String::from_utf8_lossy(&streamed).into_owned(),
        ));
    }
    let answer = match rmpv::decode::read_value(&mut &reply[..]) {
        Ok(answer) => json(answer),
        Err(error) => {
            content.push(ContentBlock::text(format!(
                "the command's answer is not MessagePack ({error}); this is a bug in the command's \
                 `IpcCommand` impl"
            )));
            return CallToolResult::error(content);
        }
    };
    let structured = output.structured(answer);
    content.push(ContentBlock::text(structured.to_string()));
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(structured);
    result
}

/// A MessagePack value as JSON.
fn json(value: rmpv::Value) -> Json {
    use rmpv::Value;
    match value {
        Value::Nil => Json::Null,
        Value::Boolean(b) => Json::Bool(b),
        Value::Integer(n) => match (n.as_u64(), n.as_i64()) {
            (Some(n), _) => Json::from(n),
            (None, Some(n)) => Json::from(n),
            (None, None) => Json::Null,
        },
        Value::F32(x) => float(f64::from(x)),
        Value::F64(x) => float(x),
        Value::String(text) => Json::String(match text.as_str() {
            Some(text) => text.to_owned(),
            None => String::from_utf8_lossy(text.as_bytes()).into_owned(),
        }),
        Value::Binary(bytes) | Value::Ext(_, bytes) => bytes_json(&bytes),
        Value::Array(items) => Json::Array(items.into_iter().map(json).collect()),
        Value::Map(entries) => Json::Object(
            entries
                .into_iter()
                .map(|(key, value)| {
                    let key = match json(key) {
                        Json::String(key) => key,
                        other => other.to_string(),
                    };
                    (key, json(value))
                })
                .collect(),
        ),
    }
}

fn float(x: f64) -> Json {
    serde_json::Number::from_f64(x).map_or(Json::Null, Json::Number)
}

fn bytes_json(bytes: &[u8]) -> Json {
    Json::Array(bytes.iter().map(|b| Json::from(*b)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn as_json<T: serde::Serialize>(value: &T) -> Json {
        let packed = rmp_serde::to_vec_named(value).unwrap();
        json(rmpv::decode::read_value(&mut &packed[..]).unwrap())
    }

    #[test]
    fn messagepack_becomes_the_json_serde_would_write() {
        #[derive(serde::Serialize)]
        struct Answer {
            words: u64,
            delta: i32,
            ratio: f32,
            nothing: Option<String>,
            #[serde(with = "serde_bytes")]
            raw: Vec<u8>,
            keyed: std::collections::BTreeMap<u8, &'static str>,
        }
        let answer = Answer {
            words: u64::MAX,
            delta: -3,
            ratio: 0.5,
            nothing: None,
            raw: vec![0, 255],
            keyed: [(1, "one")].into(),
        };
        assert_eq!(
            as_json(&answer),
            json!({
                "words": u64::MAX,
                "delta": -3,
                "ratio": 0.5,
                "nothing": null,
                "raw": [0, 255],
                "keyed": {"1": "one"}
            })
        );
        assert_eq!(as_json(&f64::NAN), Json::Null);
    }

    #[test]
    fn the_result_carries_the_same_json_twice() {
        let output = OutputSchema::from_json_schema(&json!({"type": "integer"})).unwrap();
        let reply = rmp_serde::to_vec(&7).unwrap();
        let result = result(&reply, b"working\n".to_vec(), &output);
        assert_eq!(result.structured_content, Some(json!({"result": 7})));
        assert_eq!(result.is_error, Some(false));
        let texts: Vec<&str> = result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
            .collect();
        assert_eq!(texts, ["working\n", r#"{"result":7}"#]);
    }
}
