//! `gangway::mcp::McpServer` against a real MCP client: the Python SDK
//! (`mcp`, as `scripts/test` installs it) drives `examples/mcp.rs` over
//! stdio: initialize, the tools and their schemas, typed calls, a stdin
//! argument given as a string, a failing handler and a misspelt argument as
//! `isError` results, progress notifications, and a cancelled call whose
//! handler sees the cancellation.

use std::path::PathBuf;
use std::process::Command;

/// `examples/mcp.rs`, built beside this test by `cargo test`.
fn example_server() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let server = profile_dir.join("examples").join("mcp");
    assert!(
        server.is_file(),
        "{} is missing: `cargo test` builds the examples",
        server.display()
    );
    server
}

/// Runs a client script (`program script server`) and gives what it
/// printed as JSON, and its standard error (the server's too).
fn drive(program: &str, script: &str) -> (serde_json::Value, String) {
    let output = Command::new(program)
        .arg(script)
        .arg(example_server())
        .output()
        .unwrap_or_else(|error| panic!("{program} runs: {error}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let seen = serde_json::from_str(stdout.trim()).expect("one JSON object");
    (seen, stderr)
}

/// What every client must have seen.
fn check(seen: &serde_json::Value, stderr: &str, abandoned: &str) {
    use serde_json::json;
    assert_eq!(seen["server"], "gangway-example");
    let tools = seen["tools"].as_object().unwrap();
    let names: Vec<&str> = tools.keys().map(String::as_str).collect();
    assert_eq!(names, ["count_words", "countdown", "fail", "greet"]);
    for (name, tool) in tools {
        assert_eq!(tool["root"], "object", "{name}");
        assert_eq!(tool["problems"], json!([]), "{name}");
    }
    assert_eq!(tools["greet"]["description"], "Greet someone.");
    // `#[ipc(read_only, idempotent)]`, every hint stated; none where none is set.
    assert_eq!(
        tools["greet"]["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(tools["fail"]["annotations"], serde_json::Value::Null);
    assert_eq!(seen["greet"], json!([false, "HELLO ADA"]));
    assert_eq!(seen["count_words"], json!([false, "3"]));
    assert_eq!(seen["fail"], json!([true, "fail: failed: on purpose"]));
    assert_eq!(
        seen["typo"],
        json!([true, "greet: unknown argument `nmae`; did you mean `name`?"])
    );
    // What the handler streamed, then its answer; every progress report,
    // the last one included, before the result.
    assert_eq!(seen["countdown"], json!([false, "3\n2\n1\nliftoff"]));
    let progress: Vec<(f64, f64, String)> =
        serde_json::from_value(seen["progress"].clone()).unwrap();
    let expected = [
        (0.0, 3.0, "counting down"),
        (1.0, 3.0, "counting down"),
        (2.0, 3.0, "counting down"),
        (3.0, 3.0, "done"),
    ];
    assert_eq!(progress.len(), expected.len(), "{progress:?}");
    for ((done, total, message), (want_done, want_total, want_message)) in
        progress.iter().zip(expected)
    {
        assert!(
            *done == want_done && *total == want_total && message == want_message,
            "{progress:?}"
        );
    }
    assert_eq!(
        seen["abandoned"], abandoned,
        "the client gave up after 0.5 s"
    );
    assert!(
        stderr.contains("countdown: cancelled after"),
        "the handler saw the cancellation: {stderr}"
    );
    assert_eq!(seen["after"], json!([false, "hello bob"]));
}

#[test]
#[ignore = "needs python3 with the mcp SDK"]
fn the_python_sdk_lists_calls_follows_and_cancels_tools() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/mcp_client.py");
    let (seen, stderr) = drive("python3", script);
    check(&seen, &stderr, "MCPError");
}

#[test]
#[ignore = "needs node with the TypeScript MCP SDK"]
fn the_typescript_sdk_lists_calls_follows_and_cancels_tools() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/peers/node/mcp_client.mjs"
    );
    let (seen, stderr) = drive("node", script);
    check(&seen, &stderr, "aborted");
}
