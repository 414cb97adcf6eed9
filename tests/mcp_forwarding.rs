//! `McpServer::forwarding` in-process, without a sandbox or an SDK: an MCP
//! session over an in-memory stream whose tools are a host's scoped
//! commands, with calls, progress, a cancelled call the host's handler
//! sees, this side's deadline, and the session's end when the host goes.
//! (`cli/tests/mcp.rs` runs the same through `gangway mcp` in bubblewrap,
//! driven by the real SDKs.)

#[path = "../examples/mcp/commands.rs"]
mod commands;

use std::time::Duration;

use gangway::ipc::{AsyncIpcClient, AuditLog, IpcServer, Scope};
use gangway::mcp::McpServer;
use serde_json::{Value, json};

#[path = "support/mcp_session.rs"]
mod session;

use session::{PATIENCE, Session, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_session_keeps_its_connection_past_the_hosts_idle_timeout() {
    let server = IpcServer::builder()
        .idle_timeout(Duration::from_millis(150))
        .start(commands::router())
        .await
        .unwrap();
    let env = server.scope(Scope::new("agent").commands(["greet"]));
    let client = AsyncIpcClient::connect_to(env.endpoint(), env.token())
        .await
        .unwrap();
    assert_eq!(client.idle_timeout(), Some(Duration::from_millis(150)));
    let (mut session, _serving) = Session::start(McpServer::forwarding(client)).await;
    // An agent thinking for several idle timeouts: the session keeps its
    // connection (a bare client would have lost it).
    tokio::time::sleep(Duration::from_millis(800)).await;
    let greet = session.call(1, "greet", json!({"name": "later"})).await;
    assert_eq!(text(&greet), (false, "hello later"));
    let bare = AsyncIpcClient::connect_to(env.endpoint(), env.token())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(bare.is_closed(), "the host closed the idle one");
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_quiet_forwarding_server_keeps_its_connection_too() {
    let server = IpcServer::builder()
        .idle_timeout(Duration::from_millis(150))
        .start(commands::router())
        .await
        .unwrap();
    let env = server.scope(Scope::new("agent").commands(["greet"]));
    let client = AsyncIpcClient::connect_to(env.endpoint(), env.token())
        .await
        .unwrap();
    let watch = client.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let serving = tokio::spawn(
        McpServer::forwarding(client)
            .bearer_token("a-test-token")
            .serve_http_on(listener),
    );
    // No session calls for several idle timeouts: the connection stays.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(!watch.is_closed(), "the host closed the quiet connection");
    serving.abort();
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarding_server_lists_calls_cancels_and_ends_with_its_host() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let server = IpcServer::builder()
        .audit(AuditLog::jsonl(&audit).unwrap())
        .start(commands::router())
        .await
        .unwrap();
    let env = server.scope(Scope::new("agent").commands(["greet", "countdown"]));
    let client = AsyncIpcClient::connect_to(env.endpoint(), env.token())
        .await
        .unwrap();
    let (mut session, serving) = Session::start(McpServer::forwarding(client)).await;

    lists_only_the_scopes_commands(&mut session).await;
    binds_calls_on_the_host(&mut session).await;
    cancels_a_slow_call_on_the_host(&mut session, &audit).await;

    // The host goes: so does the session, with an error saying why.
    server.shutdown(Duration::from_secs(5)).await;
    let ended = tokio::time::timeout(PATIENCE, serving)
        .await
        .expect("the session ends with its host")
        .unwrap();
    let error = ended.expect_err("an error: the host was lost");
    assert_eq!(error.kind(), std::io::ErrorKind::ConnectionAborted);
    assert_eq!(
        error.to_string(),
        "the connection to the gangway host was lost"
    );
}

/// Only the scope's commands, as the host lists them.
async fn lists_only_the_scopes_commands(session: &mut Session) {
    session
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let listed = session.answer(1).await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["countdown", "greet"]);
}

/// Bound on the host: a typed call, a misspelt argument, a command outside
/// the scope.
async fn binds_calls_on_the_host(session: &mut Session) {
    let greet = session.call(2, "greet", json!({"name": "ada"})).await;
    assert_eq!(text(&greet), (false, "hello ada"));
    let typo = session.call(3, "greet", json!({"nmae": "ada"})).await;
    assert_eq!(
        text(&typo),
        (true, "greet: unknown argument `nmae`; did you mean `name`?")
    );
    let outside = session.call(4, "fail", json!({"why": "x"})).await;
    assert_eq!(
        text(&outside),
        (true, "fail: not available in this sandbox")
    );
}

/// A slow call reporting progress, cancelled once the first report
/// arrived: the host's handler sees the cancel and says how far it got
/// (in the audit log at `audit`), and the session goes on.
async fn cancels_a_slow_call_on_the_host(session: &mut Session, audit: &std::path::Path) {
    session
        .send(
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "countdown", "arguments": {"from": 1000, "step_ms": 20},
            "_meta": {"progressToken": "p"}}}),
        )
        .await;
    loop {
        let message = session.next().await;
        if message["method"] == "notifications/progress" {
            assert_eq!(message["params"]["progressToken"], "p");
            assert_eq!(message["params"]["total"], 1000.0);
            break;
        }
    }
    session
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 5}}),
        )
        .await;
    // Nothing answers a cancelled request; the host's audit log shows its
    // call cancelled, long before its 20 s, and the session goes on.
    let started = std::time::Instant::now();
    let countdown = loop {
        let log = std::fs::read_to_string(audit).unwrap_or_default();
        let records: Vec<Value> = log
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        if let Some(record) = records.into_iter().find(|r| r["command"] == "countdown") {
            break record;
        }
        assert!(started.elapsed() < PATIENCE, "no record of the countdown");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(countdown["outcome"], "cancelled", "{countdown}");
    assert!(
        countdown["duration_ms"].as_u64().unwrap() < 10_000,
        "{countdown}"
    );
    let after = session.call(6, "greet", json!({"name": "bob"})).await;
    assert_eq!(text(&after), (false, "hello bob"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_call_past_this_sides_deadline_is_cancelled_on_the_host() {
    let server = IpcServer::builder()
        .start(commands::router())
        .await
        .unwrap();
    let env = server.sandbox_env();
    let client = AsyncIpcClient::connect_to(env.endpoint(), env.token())
        .await
        .unwrap();
    let forwarding =
        McpServer::forwarding(client).with_call_timeout(Some(Duration::from_millis(300)));
    let (mut session, serving) = Session::start(forwarding).await;
    let slow = session
        .call(1, "countdown", json!({"from": 1000, "step_ms": 20}))
        .await;
    assert_eq!(
        text(&slow),
        (true, "command `countdown` timed out after 300ms")
    );
    // The session goes on.
    let greet = session.call(2, "greet", json!({"name": "ada"})).await;
    assert_eq!(text(&greet), (false, "hello ada"));
    drop(session);
    let ended = tokio::time::timeout(PATIENCE, serving)
        .await
        .expect("the session ends with its client")
        .unwrap();
    assert!(ended.is_ok(), "{ended:?}");
    server.shutdown(Duration::from_secs(5)).await;
}

/// Writes until its writes fail, then waits to be cancelled.
#[derive(Clone, serde::Serialize, gangway::IpcCommand)]
#[ipc(response = String)]
struct Flood {
    #[ipc(context)]
    #[serde(skip)]
    ctx: gangway::ipc::CallContext,
}

impl Flood {
    async fn handle(&mut self) -> String {
        let chunk = vec![b'x'; 64 * 1024];
        while self.ctx.stdout(&chunk).await.is_ok() {}
        self.ctx.cancelled().await;
        "stopped".to_owned()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_past_the_cap_cancels_the_hosts_call() {
    let router = gangway::ipc::IpcRouter::new().register(Flood {
        ctx: gangway::ipc::CallContext::detached(),
    });
    let server = IpcServer::builder().start(router).await.unwrap();
    let env = server.sandbox_env();
    let client = AsyncIpcClient::connect_to(env.endpoint(), env.token())
        .await
        .unwrap();
    let (mut session, _serving) = Session::start(McpServer::forwarding(client)).await;
    // Without the cancel, the flood would run to the host's timeout.
    let flood = session.call(1, "flood", json!({})).await;
    let (is_error, text) = text(&flood);
    assert!(!is_error, "{}", &text[text.len().saturating_sub(200)..]);
    assert!(
        text.ends_with("\n(output cut at 1 MiB)\nstopped"),
        "{}",
        &text[text.len().saturating_sub(200)..]
    );
    assert!(text.len() < 1024 * 1024 + 100, "{}", text.len());
    server.shutdown(Duration::from_secs(5)).await;
}

/// A peer the host knows: an address (text in JSON, bytes in MessagePack)
/// and a unit marker.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Peer {
    addr: std::net::IpAddr,
    seen: Seen,
}

/// A unit struct: `null` in JSON, an empty array in MessagePack.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Seen;

/// Look a peer up.
#[derive(Clone, serde::Serialize, gangway::IpcCommand)]
#[ipc(response = Option<Peer>, output_schema)]
struct Lookup {
    /// Whether it is known.
    found: bool,
}

impl Lookup {
    async fn handle(&mut self) -> Option<Peer> {
        self.found.then(|| Peer {
            addr: std::net::Ipv4Addr::LOCALHOST.into(),
            seen: Seen,
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_content_is_the_answers_json_in_process_and_forwarded() {
    let router = || gangway::ipc::IpcRouter::new().register(Lookup { found: false });
    let server = IpcServer::builder().start(router()).await.unwrap();
    let env = server.sandbox_env();
    let client = AsyncIpcClient::connect_to(env.endpoint(), env.token())
        .await
        .unwrap();
    let (mut local, _serving) = Session::start(McpServer::new(router())).await;
    let (mut forwarded, _forwarding) = Session::start(McpServer::forwarding(client)).await;
    for session in [&mut local, &mut forwarded] {
        session
            .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
            .await;
        let listed = session.answer(1).await;
        let schema = &listed["result"]["tools"][0]["outputSchema"];
        // `Option<Peer>` is wrapped, so that `None` still answers an object.
        assert_eq!(schema["required"], json!([]), "{schema}");
        assert_eq!(
            schema["properties"]["result"]["properties"]["addr"]["type"], "string",
            "{schema}"
        );
        let found = session.call(2, "lookup", json!({"found": true})).await;
        assert_eq!(
            found["structuredContent"],
            json!({"result": {"addr": "127.0.0.1", "seen": null}}),
            "{found}"
        );
        let missing = session.call(3, "lookup", json!({"found": false})).await;
        assert_eq!(missing["structuredContent"], json!({}), "{missing}");
    }
    server.shutdown(Duration::from_secs(5)).await;
}
