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

/// Wait until cancelled; write a lot first.
#[derive(Clone, serde::Serialize, gangway::IpcCommand)]
#[ipc(response = String)]
struct Stall {
    #[ipc(context)]
    #[serde(skip)]
    ctx: gangway::ipc::CallContext,
}

impl Stall {
    async fn handle(&mut self) -> String {
        let chunk = vec![b'x'; 64 * 1024];
        let mut written = 0;
        while self.ctx.stdout(&chunk).await.is_ok() {
            written += chunk.len();
        }
        eprintln!("stall: writes failed after {written} bytes");
        self.ctx.cancelled().await;
        "stopped".to_owned()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_its_timeout_is_an_error_result_and_its_output_is_capped() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let router = gangway::ipc::IpcRouter::new().register(Stall {
        ctx: gangway::ipc::CallContext::detached(),
    });
    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    let serving = tokio::spawn(
        gangway::mcp::McpServer::new(router)
            .with_call_timeout(Some(std::time::Duration::from_millis(300)))
            .serve_io(server_read, server_write),
    );
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    for message in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stall","arguments":{}}}"#,
    ] {
        client_write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    let answer = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            let line = lines.next_line().await.unwrap().expect("an answer");
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            if message["id"] == 2 {
                return message;
            }
        }
    })
    .await
    .expect("the call is answered");
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("(output cut at 1 MiB)"),
        "{}",
        &text[text.len().saturating_sub(200)..]
    );
    assert!(text.len() < 1024 * 1024 + 200, "{}", text.len());
    assert!(
        text.ends_with("stall: timed out after 300ms; the call was cancelled"),
        "{}",
        &text[text.len() - 100..]
    );
    drop(client_write);
    drop(lines);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), serving).await;
}
