//! `gangway::mcp::McpServer` against a real MCP client: the Python SDK
//! (`mcp`, as `scripts/test` installs it) drives `examples/mcp.rs` over
//! stdio: initialize, the tools and their schemas, typed calls, a stdin
//! argument given as a string, a failing handler and a misspelt argument as
//! `isError` results, progress notifications, and a cancelled call whose
//! handler sees the cancellation while the session is still open, a few
//! steps in. The same client scripts, and the TypeScript SDK's, drive the
//! example over Streamable HTTP too (`--http 127.0.0.1:0`), where closing
//! the session cancels its calls.

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

/// What the example's countdown writes on its stderr when it sees the
/// cancel: `countdown: cancelled after <steps> steps`.
const CANCELLED: &str = "countdown: cancelled after ";

/// The options that make a client script keep its session open, once it
/// has abandoned the slow countdown, until the handler says (in
/// `server_stderr`) that it saw the cancel.
fn witness_args(server_stderr: &std::path::Path) -> [std::ffi::OsString; 3] {
    [
        "--cancel-witness".into(),
        server_stderr.into(),
        CANCELLED.into(),
    ]
}

/// The client saw the handler see its cancel while the session was still
/// open (so the cancel was `notifications/cancelled`, not the session's
/// end), and the countdown stopped early: the client gave up after 0.5 s
/// of 50 ms steps (about 10), where the whole countdown is 200.
fn assert_cancelled_early(seen: &serde_json::Value, stderr: &str) {
    assert_eq!(
        seen["cancel_seen"], true,
        "the handler saw the cancel while the session was open: {stderr}"
    );
    let steps: u64 = stderr
        .split(CANCELLED)
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|steps| steps.parse().ok())
        .unwrap_or_else(|| panic!("the handler saw the cancellation: {stderr}"));
    assert!(
        steps < 100,
        "cancelled after {steps} of 200 steps, not early"
    );
}

/// Runs `script` with `program` against the example on stdio, its stderr
/// in a file, and checks what the client saw.
fn drive_over_stdio(program: &str, script: &str, sdk: expected::Sdk) {
    let dir = tempfile::tempdir().unwrap();
    let server_stderr = dir.path().join("server.stderr");
    let mut args = vec!["--server-stderr".into(), server_stderr.clone().into()];
    args.extend(witness_args(&server_stderr));
    args.push(example_server().into());
    let (seen, _) = expected::drive(program, script, &args);
    expected::check(&seen, "gangway-example", sdk, UNKNOWN_TOOL);
    let stderr = std::fs::read_to_string(&server_stderr).unwrap();
    assert_cancelled_early(&seen, &stderr);
}

#[test]
#[ignore = "needs python3 with the mcp SDK"]
fn the_python_sdk_lists_calls_follows_and_cancels_tools() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/mcp_client.py");
    drive_over_stdio("python3", script, expected::Sdk::Python);
}

#[test]
#[ignore = "needs node with the TypeScript MCP SDK"]
fn the_typescript_sdk_lists_calls_follows_and_cancels_tools() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/peers/node/mcp_client.mjs"
    );
    drive_over_stdio("node", script, expected::Sdk::TypeScript);
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
/// and what it writes on stderr gathered (also into a file, for a peer to
/// watch); killed when dropped.
struct HttpExample {
    child: std::process::Child,
    url: String,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    stderr_file: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl HttpExample {
    fn start() -> Self {
        use std::io::{BufRead, Write};
        let mut child = std::process::Command::new(example_server())
            .args(["--http", "127.0.0.1:0"])
            .env("MCP_TOKEN", EXAMPLE_TOKEN)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the example starts");
        let dir = tempfile::tempdir().unwrap();
        let stderr_file = dir.path().join("server.stderr");
        let mut file = std::fs::File::create(&stderr_file).unwrap();
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (url_tx, url_rx) = std::sync::mpsc::channel();
        let lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let gathered = stderr.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("mcp example: serving MCP on ") {
                    let _ = url_tx.send(url.to_owned());
                }
                let _ = writeln!(file, "{line}");
                let mut gathered = gathered.lock().unwrap();
                gathered.push_str(&line);
                gathered.push('\n');
            }
        });
        let url = url_rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the example prints the URL it serves");
        HttpExample {
            child,
            url,
            stderr,
            stderr_file,
            _dir: dir,
        }
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

    /// Runs `script` with `program` against this server, the client
    /// keeping its session open until the handler saw the cancel, and
    /// checks what it saw.
    fn drive(&self, program: &str, script: &str, sdk: expected::Sdk) {
        let mut args: Vec<std::ffi::OsString> = witness_args(&self.stderr_file).into();
        args.extend(http_args(self));
        let (seen, _) = expected::drive(program, script, &args);
        expected::check(&seen, "gangway-example", sdk, UNKNOWN_TOOL);
        assert_cancelled_early(&seen, &self.stderr_once(CANCELLED));
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
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/mcp_client.py");
    HttpExample::start().drive("python3", script, expected::Sdk::Python);
}

#[test]
#[ignore = "needs node with the TypeScript MCP SDK"]
fn the_typescript_sdk_drives_the_example_over_streamable_http() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/peers/node/mcp_client.mjs"
    );
    HttpExample::start().drive("node", script, expected::Sdk::TypeScript);
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
    // rmcp answers a `DELETE` it served 202; the closed session's id is
    // then unknown (404), as the spec has it.
    assert_eq!(seen["delete_status"], 202, "{seen}");
    assert_eq!(seen["status_after"], 404, "{seen}");
    let closed_at = seen["progress_at_close"].as_u64().expect("progress came");
    let stderr = server.stderr_once(CANCELLED);
    let steps: u64 = stderr
        .split(CANCELLED)
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|steps| steps.parse().ok())
        .unwrap_or_else(|| panic!("the handler saw the cancellation: {stderr}"));
    // 50 ms steps: rmcp alone would let the call run 5 s (100 steps) past
    // the `DELETE`; 90 leaves a loaded machine 4.5 s to act on it.
    assert!(
        steps < closed_at + 90,
        "cancelled after {steps} steps, closed at {closed_at}: not at once"
    );
}
