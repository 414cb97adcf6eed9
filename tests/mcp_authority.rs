//! An MCP server of a router in this process decides and records its calls
//! as the socket's server does: its guard (the same `CallGuard`) sees the
//! bound arguments and may deny with a reason the model reads, and its
//! audit log (the same `AuditSink`) gets one record per call, scope `mcp`.
//! A forwarding server given either is refused: its host decides.

#[path = "../examples/mcp/commands.rs"]
mod commands;

#[path = "support/mcp_session.rs"]
mod session;

use std::time::Duration;

use gangway::ipc::{AsyncIpcClient, AuditLog, CallInfo, Decision, IpcServer};
use gangway::mcp::McpServer;
use serde_json::{Value, json};
use session::{PATIENCE, Session, text};

/// The audit log's records, once there are `count` of them.
async fn records(path: &std::path::Path, count: usize) -> Vec<Value> {
    let started = std::time::Instant::now();
    loop {
        let log = std::fs::read_to_string(path).unwrap_or_default();
        let records: Vec<Value> = log
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        if records.len() >= count {
            return records;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "{} records: {records:?}",
            records.len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_is_decided_by_the_guard_and_recorded_in_the_audit_log() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let told = seen.clone();
    let guard = move |info: &CallInfo| {
        told.lock()
            .unwrap()
            .push((info.scope().map(str::to_owned), info.args().clone()));
        let decision = if info.args()["name"] == "mallory" {
            Decision::deny("mallory may not be greeted; ask the user")
        } else {
            Decision::Allow
        };
        std::future::ready(decision)
    };
    let server = McpServer::new(commands::router())
        .guard(guard)
        .audit(AuditLog::jsonl(&audit).unwrap());
    let (mut session, _serving) = Session::start(server).await;

    let allowed = session.call(1, "greet", json!({"name": "ada"})).await;
    assert_eq!(text(&allowed), (false, "hello ada"));
    let denied = session.call(2, "greet", json!({"name": "mallory"})).await;
    assert_eq!(
        text(&denied),
        (true, "greet: mallory may not be greeted; ask the user")
    );
    let failed = session.call(3, "fail", json!({"why": "on purpose"})).await;
    assert!(text(&failed).0);

    // The guard saw the scope `mcp` and the bound arguments.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[0], (Some("mcp".to_owned()), json!({"name": "ada"})));

    let records = records(&audit, 3).await;
    let summary: Vec<(&str, &str, &str, Option<i64>)> = records
        .iter()
        .map(|r| {
            (
                r["scope"].as_str().unwrap(),
                r["command"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
                r["exit"].as_i64(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("mcp", "greet", "ok", Some(0)),
            ("mcp", "greet", "denied", Some(77)),
            ("mcp", "fail", "handler_error", Some(1)),
        ]
    );
    assert_eq!(
        records[1]["reason"],
        "mallory may not be greeted; ask the user"
    );
    assert_eq!(records[1]["args"], json!({"name": "mallory"}));
    assert!(records[0]["pid"].is_null() && records[0]["uid"].is_null());
    assert!(records[0]["bytes_in"].as_u64().unwrap() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarding_server_given_a_guard_or_an_audit_log_is_refused() {
    let host = IpcServer::start(commands::router()).await.unwrap();
    let env = host.sandbox_env();
    for with in ["guard", "audit"] {
        let client = AsyncIpcClient::connect_to(env.endpoint(), env.token())
            .await
            .unwrap();
        let server = McpServer::forwarding(client);
        let server = match with {
            "guard" => server.guard(|_: &CallInfo| std::future::ready(Decision::Allow)),
            _ => server.audit(AuditLog::tracing()),
        };
        let (_client_end, server_end) = tokio::io::duplex(1024);
        let (read, write) = tokio::io::split(server_end);
        let refused = server.serve_io(read, write).await.unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("decided and recorded by its host"),
            "{with}: {refused}"
        );
    }
    host.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_is_recorded_cancelled_and_every_record_is_written_when_serving_ends() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let server = McpServer::new(commands::router()).audit(AuditLog::jsonl(&audit).unwrap());
    let (mut session, serving) = Session::start(server).await;
    session
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "countdown", "arguments": {"from": 1000, "step_ms": 10},
                       "_meta": {"progressToken": "p"}}}))
        .await;
    // It runs: a progress report came.
    while session.next().await["method"] != "notifications/progress" {}
    session
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "the user changed their mind"}}),
        )
        .await;
    // The handler honours the cancel and answers "cancelled after N steps":
    // the call was cancelled all the same.
    let records = records(&audit, 1).await;
    assert_eq!(records[0]["command"], "countdown");
    assert_eq!(records[0]["outcome"], "cancelled", "{:?}", records[0]);
    assert!(records[0]["exit"].is_null(), "{:?}", records[0]);
    // Cancelled by the client's cancel, with the session open: long before
    // its 1000 steps of 10 ms were done.
    let took = records[0]["duration_ms"].as_u64().unwrap();
    // An uncancelled countdown takes at least 10 s.
    assert!(took < 9_000, "cancelled after {took} ms: {:?}", records[0]);
    // Calls made just before the session ends are in the log once serving
    // has returned, with no wait.
    for id in 2..12 {
        session
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "greet", "arguments": {"name": "ada"}}}))
            .await;
    }
    // Answered in any order.
    let mut answered = 0;
    while answered < 10 {
        if session.next().await["result"]["content"][0]["text"] == "hello ada" {
            answered += 1;
        }
    }
    drop(session);
    tokio::time::timeout(PATIENCE, serving)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let log = std::fs::read_to_string(&audit).unwrap();
    assert_eq!(log.lines().count(), 11, "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_name_that_cannot_be_a_commands_is_refused_short_without_a_search() {
    let (mut session, _serving) = Session::start(McpServer::new(commands::router())).await;
    let huge = "g".repeat(1 << 20);
    let refused = session.call(1, &huge, json!({})).await;
    let (is_error, message) = text(&refused);
    assert!(is_error);
    assert!(
        message.contains("cannot be a command's name") && message.len() < 1024,
        "{}",
        &message[..message.len().min(300)]
    );
    let refused = session.call(2, "gr\u{1b}[2Jeet", json!({})).await;
    let message = text(&refused).1;
    assert!(message.contains("cannot be a command's name"), "{message}");
    assert!(
        message.contains("gr\\u{1b}[2Jeet") && !message.contains('\u{1b}'),
        "{message}"
    );
}
