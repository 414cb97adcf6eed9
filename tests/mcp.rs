//! `gangway::mcp::McpServer` against a real MCP client: the Python SDK
//! (`mcp`, as `scripts/test` installs it) drives `examples/mcp.rs` over
//! stdio: initialize, the tools and their schemas, typed calls, a stdin
//! argument given as a string, a failing handler and a misspelt argument as
//! `isError` results, progress notifications, and a cancelled call whose
//! handler sees the cancellation. The same client scripts, and the
//! TypeScript SDK's, drive the example over Streamable HTTP too
//! (`--http 127.0.0.1:0`), where closing the session cancels its calls.

#[path = "peers/mcp_expected.rs"]
mod expected;

use std::path::PathBuf;

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

/// What a call of a tool the server does not have answers.
const UNKNOWN_TOOL: &str = "unknown command `reboot`; did you mean `greet`?";

/// The example's countdown says on its stderr when it sees the cancel.
fn assert_handler_saw_cancellation(stderr: &str) {
    assert!(
        stderr.contains("countdown: cancelled after"),
        "the handler saw the cancellation: {stderr}"
    );
}

#[test]
#[ignore = "needs python3 with the mcp SDK"]
fn the_python_sdk_lists_calls_follows_and_cancels_tools() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/mcp_client.py");
    let (seen, stderr) = expected::drive("python3", script, &[example_server().into()]);
    expected::check(
        &seen,
        "gangway-example",
        expected::Sdk::Python,
        UNKNOWN_TOOL,
    );
    assert_handler_saw_cancellation(&stderr);
}

#[test]
#[ignore = "needs node with the TypeScript MCP SDK"]
fn the_typescript_sdk_lists_calls_follows_and_cancels_tools() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/peers/node/mcp_client.mjs"
    );
    let (seen, stderr) = expected::drive("node", script, &[example_server().into()]);
    expected::check(
        &seen,
        "gangway-example",
        expected::Sdk::TypeScript,
        UNKNOWN_TOOL,
    );
    assert_handler_saw_cancellation(&stderr);
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
        text.ends_with("command `stall` timed out after 300ms"),
        "{}",
        &text[text.len() - 100..]
    );
    drop(client_write);
    drop(lines);
    let ended = tokio::time::timeout(std::time::Duration::from_secs(10), serving)
        .await
        .expect("the session ends with its client")
        .unwrap();
    assert!(ended.is_ok(), "{ended:?}");
}

/// The bearer token the HTTP example is started with.
const EXAMPLE_TOKEN: &str = "example-token-0123456789";

/// The arguments that point a peer at the HTTP example, token and all.
fn http_args(server: &HttpExample) -> [std::ffi::OsString; 4] {
    [
        "--url".into(),
        (&server.url).into(),
        "--token".into(),
        EXAMPLE_TOKEN.into(),
    ]
}

/// `examples/mcp.rs --http 127.0.0.1:0` running, with the URL it printed
/// and what it writes on stderr gathered; killed when dropped.
struct HttpExample {
    child: std::process::Child,
    url: String,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl HttpExample {
    fn start() -> Self {
        use std::io::BufRead;
        let mut child = std::process::Command::new(example_server())
            .args(["--http", "127.0.0.1:0"])
            .env("MCP_TOKEN", EXAMPLE_TOKEN)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the example starts");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (url_tx, url_rx) = std::sync::mpsc::channel();
        let lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let gathered = stderr.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("mcp example: serving MCP on ") {
                    let _ = url_tx.send(url.to_owned());
                }
                let mut gathered = gathered.lock().unwrap();
                gathered.push_str(&line);
                gathered.push('\n');
            }
        });
        let url = url_rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the example prints the URL it serves");
        HttpExample { child, url, stderr }
    }

    /// What the example wrote on stderr so far, once `wanted` is in it
    /// (or after 5 s).
    fn stderr_once(&self, wanted: &str) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let stderr = self.stderr.lock().unwrap().clone();
            if stderr.contains(wanted) || std::time::Instant::now() > deadline {
                return stderr;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for HttpExample {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[ignore = "needs python3 with the mcp SDK"]
fn the_python_sdk_drives_the_example_over_streamable_http() {
    let server = HttpExample::start();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/mcp_client.py");
    let (seen, _) = expected::drive("python3", script, &http_args(&server));
    expected::check(
        &seen,
        "gangway-example",
        expected::Sdk::Python,
        UNKNOWN_TOOL,
    );
    assert_handler_saw_cancellation(&server.stderr_once("countdown: cancelled after"));
}

#[test]
#[ignore = "needs node with the TypeScript MCP SDK"]
fn the_typescript_sdk_drives_the_example_over_streamable_http() {
    let server = HttpExample::start();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/peers/node/mcp_client.mjs"
    );
    let (seen, _) = expected::drive("node", script, &http_args(&server));
    expected::check(
        &seen,
        "gangway-example",
        expected::Sdk::TypeScript,
        UNKNOWN_TOOL,
    );
    assert_handler_saw_cancellation(&server.stderr_once("countdown: cancelled after"));
}

#[test]
#[ignore = "needs node with the TypeScript MCP SDK"]
fn closing_an_http_session_cancels_its_calls_at_once() {
    let server = HttpExample::start();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/peers/node/mcp_session_close.mjs"
    );
    let (seen, _) = expected::drive("node", script, &http_args(&server));
    assert_eq!(seen["terminated"], true);
    let stderr = server.stderr_once("countdown: cancelled after");
    let steps: u64 = stderr
        .split("countdown: cancelled after ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|steps| steps.parse().ok())
        .unwrap_or_else(|| panic!("the handler saw the cancellation: {stderr}"));
    // 0.3 s of 50 ms steps before the `DELETE`; rmcp alone would let the
    // call run 5 s more (100 steps).
    assert!(steps < 30, "cancelled after {steps} steps, not at once");
}
