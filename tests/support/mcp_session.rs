//! An MCP client's end of a session with an [`McpServer`] over an
//! in-memory stream, speaking JSON-RPC by the line: what the in-process MCP
//! tests drive servers with, without an SDK.

#![allow(dead_code)]

use std::time::Duration;

use gangway::mcp::McpServer;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};

/// How long a step may take before the test fails: only a failure waits
/// this long.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// The client's end of an MCP session, speaking JSON-RPC by the line.
pub struct Session {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    /// Notifications read while waiting for answers.
    pub notifications: Vec<Value>,
}

impl Session {
    /// Starts `server` on an in-memory stream and initializes the session.
    pub async fn start(
        server: McpServer,
    ) -> (Session, tokio::task::JoinHandle<std::io::Result<()>>) {
        let (client, server_end) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_end);
        let serving = tokio::spawn(server.serve_io(server_read, server_write));
        let (read, write) = tokio::io::split(client);
        let mut session = Session {
            write,
            lines: BufReader::new(read).lines(),
            notifications: Vec::new(),
        };
        session
            .send(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}}),
            )
            .await;
        session.answer(0).await;
        session
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        (session, serving)
    }

    pub async fn send(&mut self, message: Value) {
        self.write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }

    /// The next message, within the test's patience.
    pub async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(PATIENCE, self.lines.next_line())
            .await
            .expect("the server answers")
            .unwrap()
            .expect("the session is open");
        serde_json::from_str(&line).unwrap()
    }

    /// The answer to request `id`, keeping the notifications before it.
    pub async fn answer(&mut self, id: u64) -> Value {
        loop {
            let message = self.next().await;
            if message["id"] == id {
                return message;
            }
            self.notifications.push(message);
        }
    }

    /// Calls a tool and gives its result.
    pub async fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}))
            .await;
        self.answer(id).await["result"].clone()
    }
}

/// A result's text and whether it is an error.
pub fn text(result: &Value) -> (bool, &str) {
    (
        result["isError"].as_bool().unwrap_or(false),
        result["content"][0]["text"].as_str().unwrap_or_default(),
    )
}
