//! `McpServer::serve_http`'s gate: a bearer token the client must send
//! (401 without it, a session started with it; no token, no start, unless
//! loopback is opted into), the one path it answers on, a browser origin
//! other than loopback (or a `Host` other than loopback's) refused while a
//! loopback page is served, and a non-loopback address (or a blank token)
//! refused unless allowed. Each session has its own calls: a cancel or the
//! end of one session stops none of another's (the TypeScript SDK).

#[path = "peers/mcp_expected.rs"]
mod expected;

#[path = "../examples/mcp/commands.rs"]
mod commands;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use gangway::mcp::McpServer;

/// A runtime serving the example's commands over HTTP on a free loopback
/// port, with `server`'s settings; its address.
fn serve(server: McpServer) -> (tokio::runtime::Runtime, SocketAddr) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap();
    runtime.spawn(async move { server.serve_http_on(listener).await });
    (runtime, address)
}

fn example_commands() -> McpServer {
    McpServer::new(commands::router()).with_server_info("gangway-example", "1")
}

/// The status line and headers, and body, of one `POST` of `body` to
/// `path` naming `host`, with `extra` headers.
fn send(address: SocketAddr, path: &str, host: &str, extra: &str, body: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

/// The answer to a `ping` (outside any session) `POST`ed to `path` with
/// `extra` headers.
fn post(address: SocketAddr, path: &str, extra: &str) -> String {
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    send(address, path, &address.to_string(), extra, ping)
}

/// An MCP `initialize` request.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// The answer to an `initialize` `POST`ed to `/mcp` with `extra` headers.
fn initialize(address: SocketAddr, extra: &str) -> String {
    send(address, "/mcp", &address.to_string(), extra, INITIALIZE)
}

/// `answer` is a session's start: `200 OK`, and the `initialize` result
/// naming the example server.
fn assert_served(answer: &str) {
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(
        answer.contains(r#""id":1,"result":{"#)
            && answer.contains(r#""serverInfo":{"name":"gangway-example""#),
        "{answer}"
    );
}

#[test]
fn a_request_without_the_bearer_token_is_unauthorized() {
    let (_runtime, address) = serve(example_commands().bearer_token("s3cret"));
    for extra in [
        "",
        "Authorization: Bearer wrong\r\n",
        "Authorization: s3cret\r\n",
    ] {
        let answer = post(address, "/mcp", extra);
        assert!(answer.starts_with("HTTP/1.1 401"), "{extra}: {answer}");
        assert!(
            answer.contains("www-authenticate: Bearer"),
            "{extra}: {answer}"
        );
        assert!(
            answer.contains("send `Authorization: Bearer <token>`"),
            "{extra}: {answer}"
        );
    }
    // The token lets the request through to MCP, which answers it; and
    // only `/mcp` is served.
    assert_served(&initialize(address, "Authorization: Bearer s3cret\r\n"));
    // A request outside a session reaches MCP too, which wants one.
    let answer = post(address, "/mcp", "Authorization: Bearer s3cret\r\n");
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    assert!(answer.contains("Session ID is required"), "{answer}");
    // A browser page from elsewhere is refused even with the token.
    let answer = post(
        address,
        "/mcp",
        "Authorization: Bearer s3cret\r\nOrigin: http://evil.example\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    let answer = post(address, "/elsewhere", "Authorization: bearer s3cret\r\n");
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    assert!(answer.contains("it is at /mcp"), "{answer}");
    // Served remotely too: a browser page from elsewhere could reach it on
    // loopback through DNS rebinding.
    let (_remote_runtime, remote) =
        serve(example_commands().allow_remote(true).bearer_token("s3cret"));
    let answer = post(
        remote,
        "/mcp",
        "Authorization: Bearer s3cret\r\nOrigin: http://evil.example\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
}

#[tokio::test]
async fn without_a_bearer_token_serving_refuses_to_start_unless_loopback_is_opted_into() {
    let start = |server: McpServer| async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        tokio::time::timeout(
            std::time::Duration::from_secs(5),
            server.serve_http_on(listener),
        )
        .await
        .expect("refused at once, not served")
    };
    let refused = start(example_commands()).await.unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::InvalidInput);
    let message = refused.to_string();
    assert!(
        message.contains(".bearer_token(..)") && message.contains(".allow_unauthenticated()"),
        "{message}"
    );
    // Beyond this machine there is no opting out.
    let remote = start(
        example_commands()
            .allow_remote(true)
            .allow_unauthenticated(),
    )
    .await
    .unwrap_err();
    let message = remote.to_string();
    assert!(
        message.contains(".bearer_token(..)") && !message.contains("allow_unauthenticated"),
        "{message}"
    );
    // Opted into on loopback: a request is answered.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let serving = tokio::spawn(
        example_commands()
            .allow_unauthenticated()
            .serve_http_on(listener),
    );
    let answer = tokio::task::spawn_blocking(move || initialize(address, ""))
        .await
        .unwrap();
    serving.abort();
    assert_served(&answer);
}

#[test]
#[ignore = "needs python3 with the mcp SDK"]
fn the_python_sdk_with_the_bearer_token_is_served() {
    let (_runtime, address) = serve(example_commands().bearer_token("s3cret"));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/mcp_client.py");
    let url = format!("http://{address}/mcp");
    let (seen, _) = expected::drive(
        "python3",
        script,
        &[
            "--url".into(),
            url.into(),
            "--token".into(),
            "s3cret".into(),
        ],
    );
    expected::check(
        &seen,
        "gangway-example",
        expected::Sdk::Python,
        "unknown command `reboot`; did you mean `greet`?",
    );
}

#[tokio::test]
async fn a_non_loopback_address_is_refused_unless_allowed() {
    let refused = example_commands()
        .bearer_token("s3cret")
        .serve_http("0.0.0.0:0")
        .await
        .expect_err("0.0.0.0 is refused");
    assert_eq!(refused.kind(), std::io::ErrorKind::PermissionDenied);
    let message = refused.to_string();
    assert!(message.contains("0.0.0.0:0"), "{message}");
    assert!(message.contains(".allow_remote(true)"), "{message}");
    // A listener bound by the caller is checked the same way.
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let refused = example_commands()
        .bearer_token("s3cret")
        .serve_http_on(listener)
        .await
        .expect_err("a listener on 0.0.0.0 is refused");
    assert_eq!(refused.kind(), std::io::ErrorKind::PermissionDenied);
    let blank = example_commands()
        .bearer_token(" ")
        .serve_http("127.0.0.1:0")
        .await
        .expect_err("a blank token is refused");
    assert_eq!(blank.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        blank.to_string().contains("bearer token is empty"),
        "{blank}"
    );
    // A token read from a file with its line break would never match.
    let unsendable = example_commands()
        .bearer_token("s3cret\n")
        .serve_http("127.0.0.1:0")
        .await
        .expect_err("a token a header cannot carry is refused");
    assert_eq!(unsendable.kind(), std::io::ErrorKind::InvalidInput);
    assert!(unsendable.to_string().contains("trim it"), "{unsendable}");
    // Allowed, with a token, it serves: a request is answered.
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let serving = tokio::spawn(
        example_commands()
            .allow_remote(true)
            .bearer_token("s3cret")
            .serve_http_on(listener),
    );
    let address: SocketAddr = ([127, 0, 0, 1], port).into();
    let answer = tokio::task::spawn_blocking(move || {
        initialize(address, "Authorization: Bearer s3cret\r\n")
    })
    .await
    .unwrap();
    serving.abort();
    assert_served(&answer);
}

#[test]
fn a_loopback_page_is_served_and_a_page_or_host_from_elsewhere_refused() {
    let (_runtime, address) = serve(example_commands().bearer_token("s3cret"));
    let (_remote_runtime, remote) =
        serve(example_commands().allow_remote(true).bearer_token("s3cret"));
    let token = "Authorization: Bearer s3cret\r\n";
    for server in [address, remote] {
        // A browser page served from this machine, any port or none.
        for origin in [
            "http://localhost:5173",
            "http://localhost",
            "http://127.0.0.1:8080",
            "https://[::1]:8443",
        ] {
            let answer = initialize(server, &format!("{token}Origin: {origin}\r\n"));
            assert_served(&answer);
        }
        // One from elsewhere, a name that merely starts like loopback's, or
        // an opaque origin (a sandboxed frame's): refused, even with the token.
        for origin in [
            "http://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil.example:8080",
            "null",
        ] {
            let answer = initialize(server, &format!("{token}Origin: {origin}\r\n"));
            assert!(answer.starts_with("HTTP/1.1 403 "), "{origin}: {answer}");
            assert!(answer.contains("Origin header is not allowed"), "{answer}");
        }
    }
    // A request naming a host other than loopback (DNS rebinding from a
    // page that sends no `Origin`) is refused on loopback, and served once
    // remote clients are allowed.
    for host in ["evil.example", "evil.example:80"] {
        let answer = send(address, "/mcp", host, token, INITIALIZE);
        assert!(answer.starts_with("HTTP/1.1 403 "), "{host}: {answer}");
        assert!(answer.contains("Host header is not allowed"), "{answer}");
        assert_served(&send(remote, "/mcp", host, token, INITIALIZE));
    }
    assert_served(&send(address, "/mcp", "localhost", token, INITIALIZE));
}

#[test]
#[ignore = "needs node with the TypeScript MCP SDK"]
fn each_http_session_has_its_own_calls_cancels_and_end() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let (_runtime, address) = serve(
        example_commands()
            .bearer_token("s3cret")
            .audit(gangway::ipc::AuditLog::jsonl(&audit).unwrap()),
    );
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/peers/node/mcp_sessions.mjs"
    );
    let (seen, _) = expected::drive(
        "node",
        script,
        &[
            "--cancel-witness".into(),
            audit.clone().into(),
            r#""outcome":"cancelled""#.into(),
            "--url".into(),
            format!("http://{address}/mcp").into(),
            "--token".into(),
            "s3cret".into(),
        ],
    );
    // Each cancel stopped one handler, in its own session; the other
    // session's call ran on through both, and its session still served.
    assert_eq!(
        seen,
        serde_json::json!({
            "distinct_sessions": true,
            "same_request_id": true,
            "cancelled_after_a_cancel": 1,
            "a_delete_status": 202,
            "cancelled_after_a_closed": 2,
            "b_greets": "hello b",
            "cancelled_in_the_end": 3,
        })
    );
}
