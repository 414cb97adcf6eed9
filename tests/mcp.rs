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

#[test]
#[ignore = "needs python3 with the mcp SDK"]
fn the_python_sdk_lists_calls_follows_and_cancels_tools() {
    let client = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/mcp_client.py");
    let output = Command::new("python3")
        .arg(client)
        .arg(example_server())
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let seen: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(seen["server"], "gangway-example");
    let tools = seen["tools"].as_object().unwrap();
    let names: Vec<&str> = tools.keys().map(String::as_str).collect();
    assert_eq!(names, ["count_words", "countdown", "fail", "greet"]);
    for (name, tool) in tools {
        assert_eq!(tool["root"], "object", "{name}");
        assert_eq!(tool["problems"], serde_json::json!([]), "{name}");
    }
    assert_eq!(tools["greet"]["description"], "Greet someone.");
    assert_eq!(seen["greet"], serde_json::json!([false, "HELLO ADA"]));
    assert_eq!(seen["count_words"], serde_json::json!([false, "3"]));
    assert_eq!(
        seen["fail"],
        serde_json::json!([true, "fail: failed: on purpose"])
    );
    assert_eq!(
        seen["typo"],
        serde_json::json!([true, "greet: unknown argument `nmae`; did you mean `name`?"])
    );
    // What the handler streamed, then its answer; every progress report,
    // the last one included, before the result.
    assert_eq!(
        seen["countdown"],
        serde_json::json!([false, "3\n2\n1\nliftoff"])
    );
    assert_eq!(
        seen["progress"],
        serde_json::json!([
            [0.0, 3.0, "counting down"],
            [1.0, 3.0, "counting down"],
            [2.0, 3.0, "counting down"],
            [3.0, 3.0, "done"]
        ])
    );
    assert_eq!(
        seen["abandoned"], "MCPError",
        "the client gave up after 0.5 s"
    );
    assert!(
        stderr.contains("countdown: cancelled after"),
        "the handler saw the cancellation: {stderr}"
    );
    assert_eq!(seen["after"], serde_json::json!([false, "hello bob"]));
}
