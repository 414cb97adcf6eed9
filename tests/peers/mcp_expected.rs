//! What the MCP tests share: running a real client script against a server
//! command line, and what every client must have seen of the commands in
//! `examples/mcp/commands.rs` (included by `tests/mcp.rs` and
//! `cli/tests/mcp.rs` with `#[path]`).

use std::ffi::OsString;
use std::process::Command;

/// Runs a client script (`program script server`) and gives what it
/// printed as JSON, and its standard error (the server's too).
pub fn drive(program: &str, script: &str, server: &[OsString]) -> (serde_json::Value, String) {
    let output = Command::new(program)
        .arg(script)
        .args(server)
        .output()
        .unwrap_or_else(|error| panic!("{program} runs: {error}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let seen = serde_json::from_str(stdout.trim()).expect("one JSON object");
    (seen, stderr)
}

/// The SDK a client script is built on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// A test file may drive one of them only.
#[allow(dead_code)]
pub enum Sdk {
    Python,
    TypeScript,
}

impl Sdk {
    /// How the client reports the call it gave up on.
    fn abandoned(self) -> &'static str {
        match self {
            Sdk::Python => "MCPError",
            Sdk::TypeScript => "aborted",
        }
    }
}

/// What every client must have seen of `examples/mcp/commands.rs` served
/// by `server`: `outside` is the message for a tool the list did not offer.
pub fn check(seen: &serde_json::Value, server: &str, sdk: Sdk, outside: &str) {
    use serde_json::json;
    assert_eq!(seen["server"], server);
    let tools = seen["tools"].as_object().unwrap();
    let names: Vec<&str> = tools.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "count_bytes",
            "count_words",
            "countdown",
            "fail",
            "greet",
            "stats"
        ]
    );
    for (name, tool) in tools {
        assert_eq!(tool["root"], "object", "{name}");
        assert_eq!(tool["problems"], json!([]), "{name}");
        if name != "stats" {
            assert_eq!(tool["output"], serde_json::Value::Null, "{name}");
        }
    }
    check_typed_result(seen);
    assert_eq!(tools["greet"]["description"], "Greet someone.");
    // `#[ipc(read_only, idempotent)]`, every hint stated; none where none is set.
    assert_eq!(
        tools["greet"]["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(tools["fail"]["annotations"], serde_json::Value::Null);
    assert_eq!(seen["greet"], json!([false, "HELLO ADA"]));
    assert_eq!(seen["count_words"], json!([false, "3"]));
    // Bytes as a string (its UTF-8 bytes) and as base64 (0xff 0x00 0xfe
    // 0x80), both of which the inputSchema takes; another shape it refuses.
    assert_eq!(
        seen["count_bytes"],
        json!([[false, "6 bytes, sum 795"], [false, "4 bytes, sum 637"]])
    );
    assert_eq!(seen["count_bytes_schema"], json!([true, true, false]));
    assert_eq!(seen["fail"], json!([true, "fail: failed: on purpose"]));
    assert_eq!(
        seen["typo"],
        json!([true, "greet: unknown argument `nmae`; did you mean `name`?"])
    );
    assert_eq!(seen["outside"], json!([true, outside]));
    // What the handler streamed, then its answer; its progress reports
    // before the result.
    assert_eq!(seen["countdown"], json!([false, "3\n2\n1\nliftoff"]));
    let progress: Vec<(f64, f64, String)> =
        serde_json::from_value(seen["progress"].clone()).unwrap();
    let expected = [
        (0.0, 3.0, "counting down"),
        (1.0, 3.0, "counting down"),
        (2.0, 3.0, "counting down"),
        (3.0, 3.0, "done"),
    ];
    // Reports may merge on the way (the latest wins), never reorder, and
    // the last always goes out before the result. (The TypeScript SDK
    // hands a notification to its handler a microtask late, and drops the
    // call's progress handler as soon as the result is read: a report that
    // arrives in the same read as the result is lost there.)
    let mut rest = expected.iter();
    for (done, total, message) in &progress {
        assert!(
            rest.any(|(want_done, want_total, want_message)| {
                done == want_done && total == want_total && message == want_message
            }),
            "{progress:?} is not an ordered part of {expected:?}"
        );
    }
    if sdk == Sdk::Python {
        assert_eq!(
            progress
                .last()
                .map(|(done, _, message)| (*done, message.as_str())),
            Some((3.0, "done")),
            "{progress:?}"
        );
    } else {
        assert!(!progress.is_empty(), "some progress arrived");
    }
    assert_eq!(
        seen["abandoned"],
        sdk.abandoned(),
        "the client gave up after 0.5 s"
    );
    assert_eq!(seen["after"], json!([false, "hello bob"]));
}

/// `stats` (`#[ipc(output_schema)]`): its outputSchema (valid 2020-12, an
/// object root, inline, no null unions: `Option<String>` is a property not
/// required), and its results' structuredContent, valid against it and the
/// same JSON as their text.
fn check_typed_result(seen: &serde_json::Value) {
    use serde_json::json;
    let stats = &seen["tools"]["stats"];
    assert_eq!(stats["output_problems"], json!([]));
    let output = &stats["output"];
    assert_eq!(output["type"], "object", "{output}");
    assert_eq!(
        output["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(output["required"], json!(["words", "lines"]), "{output}");
    assert_eq!(
        output["properties"]["longest"]["type"], "string",
        "{output}"
    );
    assert_eq!(
        seen["stats"],
        json!({
            "is_error": false,
            "structured": {"words": 3, "lines": 2, "longest": "three"},
            "valid": true,
            "text_is_json": true,
        })
    );
    // `None` is an absent property, not `null`.
    assert_eq!(
        seen["stats_empty"],
        json!({
            "is_error": false,
            "structured": {"words": 0, "lines": 0},
            "valid": true,
            "text_is_json": true,
        })
    );
}
