//! `gangway mcp` inside a bubblewrap sandbox with a scoped token, driven by
//! the real MCP SDKs (Python and TypeScript) from outside: the tools are the
//! scope's commands as the host lists them, each call runs on the host
//! (bound there, recorded in its audit log), a command outside the scope is
//! refused as an `isError` result without running, and a call the client
//! abandons is cancelled on the host (while the client's session, and so
//! the bridge, stays open). `gangway mcp` asks its host at each
//! `tools/list` (a host whose commands change, spoken to by hand), and the
//! lean `gangway-client` refuses `mcp`, naming the program that has it.

#[path = "../../examples/mcp/commands.rs"]
mod commands;
#[path = "../../tests/peers/mcp_expected.rs"]
mod expected;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use gangway::ipc::{AuditLog, Bwrap, IpcServer, Scope};

/// The full `gangway` program: the sandbox runs its `mcp` subcommand.
const GANGWAY: &str = env!("CARGO_BIN_EXE_gangway");

/// How often `reboot` ran: never, as no scope of the test allows it.
static REBOOTS: AtomicUsize = AtomicUsize::new(0);

/// A host command the sandbox's scope leaves out.
#[derive(Clone, serde::Serialize, gangway::IpcCommand)]
#[ipc(response = String, destructive)]
struct Reboot {}

impl Reboot {
    async fn handle(&mut self) -> String {
        REBOOTS.fetch_add(1, Ordering::SeqCst);
        "rebooting".to_owned()
    }
}

/// Hosts the example's commands and `reboot`, runs the client script
/// against `gangway mcp` in a sandbox holding a token for every command
/// but `reboot`, and checks what the client saw and what the host's audit
/// log recorded.
fn bridge(program: &str, script: &str, sdk: expected::Sdk) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let router = commands::router().register(Reboot {});
    let server = runtime
        .block_on(
            IpcServer::builder()
                .client_bin(GANGWAY)
                .audit(AuditLog::jsonl(&audit).unwrap())
                .start(router),
        )
        .unwrap();
    let env = server.scope(Scope::new("agent").commands([
        "greet",
        "count_words",
        "count_bytes",
        "fail",
        "countdown",
        "stats",
    ]));
    // The SDKs start the server with an environment of their own choosing;
    // the prefix sets the sandbox's own (`--clearenv`, then `--setenv`),
    // the token going in as its read-only file, never in this argv.
    let mut server_argv = Bwrap::new(&env).prefix().unwrap();
    assert!(
        !server_argv
            .iter()
            .any(|arg| arg.to_string_lossy().contains(env.token()))
    );
    server_argv.extend([GANGWAY.into(), "mcp".into()]);
    // Once it has abandoned the slow countdown, the client keeps its
    // session (and so the bridge) open until the host's audit log records
    // the call cancelled: the cancel that stopped it is the client's, not
    // the bridge's end.
    let mut args: Vec<std::ffi::OsString> = vec![
        "--cancel-witness".into(),
        audit.clone().into(),
        r#""outcome":"cancelled""#.into(),
    ];
    args.extend(server_argv);

    let (seen, stderr) = expected::drive(program, script, &args);
    expected::check(
        &seen,
        "gangway",
        sdk,
        "reboot: not available in this sandbox",
    );
    assert_eq!(seen["cancel_seen"], true, "{stderr}");
    assert_eq!(REBOOTS.load(Ordering::SeqCst), 0, "reboot never ran");

    let report = runtime.block_on(server.shutdown(Duration::from_secs(5)));
    assert_eq!((report.audit_errors, report.audit_unwritten), (0, 0));
    check_audit(&audit, &stderr);
}

/// The host's audit log at `audit` holds every call of the session, the
/// abandoned countdown cancelled early.
fn check_audit(audit: &std::path::Path, stderr: &str) {
    let records: Vec<serde_json::Value> = std::fs::read_to_string(audit)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let mut outcomes: Vec<(&str, &str)> = records
        .iter()
        .filter(|record| record["command"].is_string())
        .map(|record| {
            assert_eq!(record["scope"], "agent", "{record}");
            (
                record["command"].as_str().unwrap(),
                record["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    // Every call of the session (sorted: the abandoned countdown and the
    // greeting after it end in either order): the abandoned countdown was
    // cancelled on the host, not left running.
    outcomes.sort_unstable();
    assert_eq!(
        outcomes,
        [
            ("count_bytes", "ok"),
            ("count_bytes", "ok"),
            ("count_words", "ok"),
            ("countdown", "cancelled"),
            ("countdown", "ok"),
            ("fail", "handler_error"),
            ("greet", "ok"),
            ("greet", "ok"),
            ("greet", "usage"),
            ("reboot", "denied"),
            ("stats", "ok"),
            ("stats", "ok"),
        ],
        "{records:#?}\n{stderr}"
    );
    // Cancelled about 0.5 s in (the client's patience), well before its
    // 200 steps of 50 ms (10 s) were done.
    let cancelled = records
        .iter()
        .find(|record| record["outcome"] == "cancelled")
        .unwrap();
    let took = cancelled["duration_ms"].as_u64().unwrap();
    // An uncancelled countdown takes at least 10 s.
    assert!(took < 9_000, "cancelled after {took} ms: {cancelled}");
}

#[test]
#[ignore = "needs bwrap and python3 with the mcp SDK"]
fn the_python_sdk_calls_the_hosts_commands_through_gangway_mcp_in_a_sandbox() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/peers/mcp_client.py");
    bridge("python3", script, expected::Sdk::Python);
}

#[test]
#[ignore = "needs bwrap and node with the TypeScript MCP SDK"]
fn the_typescript_sdk_calls_the_hosts_commands_through_gangway_mcp_in_a_sandbox() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/peers/node/mcp_client.mjs"
    );
    bridge("node", script, expected::Sdk::TypeScript);
}

/// The lean client placed by link wrappers.
const GANGWAY_CLIENT: &str = env!("CARGO_BIN_EXE_gangway-client");

#[test]
fn the_lean_client_refuses_mcp_and_names_the_program_that_has_it() {
    let output = std::process::Command::new(GANGWAY_CLIENT)
        .arg("mcp")
        // No host to reach: the refusal needs none.
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    // A usage error (2), said on stderr, naming the program that has it.
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(output.stdout.is_empty(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for part in [
        "gangway-client mcp: this client program has no MCP server",
        "run the `gangway` program as `gangway mcp`",
        "`gangway wrappers --style links --client <path to gangway>`",
    ] {
        assert!(stderr.contains(part), "{part:?} in {stderr}");
    }
}

#[path = "../../tests/peers/mcp_fake_host.rs"]
mod fake_host;

/// `gangway mcp`'s end of a session: its standard input and output.
struct McpChild {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl McpChild {
    async fn send(&mut self, message: serde_json::Value) {
        use tokio::io::AsyncWriteExt;
        let line = format!("{message}\n");
        self.stdin.write_all(line.as_bytes()).await.unwrap();
    }

    /// The answer to request `id` (within 30 s: only a failure waits).
    async fn answer(&mut self, id: u64) -> serde_json::Value {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
                .await
                .expect("gangway mcp answers")
                .unwrap()
                .expect("gangway mcp is still serving");
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// The names of the tools listed (request `id`).
    async fn listed(&mut self, id: u64) -> Vec<String> {
        self.send(fake_host::list_request(id)).await;
        fake_host::tool_names(&self.answer(id).await)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gangway_mcp_asks_the_host_at_each_tools_list() {
    use tokio::io::AsyncBufReadExt;
    let (host, endpoint) = fake_host::FakeHost::start(commands::router().manifest(), &["greet"]);
    let mut child = tokio::process::Command::new(GANGWAY)
        .arg("mcp")
        .env_clear()
        .env("GANGWAY_ENDPOINT", endpoint.to_string())
        .env("GANGWAY_TOKEN", fake_host::TOKEN)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut mcp = McpChild {
        stdin: child.stdin.take().unwrap(),
        lines: tokio::io::BufReader::new(child.stdout.take().unwrap()).lines(),
        child,
    };
    mcp.send(
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}),
    )
    .await;
    mcp.answer(0).await;
    mcp.send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    assert_eq!(mcp.listed(1).await, ["greet"]);
    // The host comes to serve `count_words`, then stops serving `greet`:
    // the same `gangway mcp` lists each change.
    host.serve(&["count_words", "greet"]);
    assert_eq!(mcp.listed(2).await, ["count_words", "greet"]);
    host.serve(&["count_words"]);
    assert_eq!(mcp.listed(3).await, ["count_words"]);
    assert_eq!(host.lists(), 3);
    // The end of its input ends it.
    drop(mcp.stdin);
    let status = tokio::time::timeout(Duration::from_secs(30), mcp.child.wait())
        .await
        .expect("gangway mcp ends with its input")
        .unwrap();
    assert!(status.success(), "{status}");
}
