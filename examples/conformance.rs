//! A gangway MCP server for the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`): over Streamable HTTP, it serves
//! the tools the suite's `tools-call-*` scenarios call, as ordinary
//! commands. `tests/conformance.rs` runs the suite against it; by hand:
//!
//! ```text
//! cargo run --example conformance -- 127.0.0.1:3001
//! npx --prefix tests/peers/node conformance server --url http://127.0.0.1:3001/mcp --scenario tools-list
//! ```
//!
//! The scenarios on what gangway does not serve (resources, prompts,
//! sampling, elicitation, logging, completion, non-text content) are left
//! out; `tests/conformance.rs` lists them and why.

use std::time::Duration;

use gangway::IpcCommand;
use gangway::ipc::{CallContext, CommandError, CommandResult, IpcRouter};
use serde::Serialize;

/// Answer with a fixed line of text.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "test_simple_text", response = String, read_only)]
struct SimpleText;

impl SimpleText {
    async fn handle(&mut self) -> String {
        "This is a simple text response for testing.".to_owned()
    }
}

/// Always fail, with a message saying so.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "test_error_handling", response = CommandResult<String>)]
struct ErrorHandling;

impl ErrorHandling {
    async fn handle(&mut self) -> CommandResult<String> {
        Err(CommandError::new(
            "This tool intentionally returns an error for testing",
        ))
    }
}

/// Report progress 0, 50 and 100 of 100, 50 ms apart.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "test_tool_with_progress", response = String)]
struct ToolWithProgress {
    #[ipc(context)]
    #[serde(skip)]
    ctx: CallContext,
}

impl ToolWithProgress {
    async fn handle(&mut self) -> String {
        for done in [0, 50, 100] {
            if done > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            self.ctx.progress(done, Some(100), format!("{done} of 100"));
        }
        "Progress reported: 0, 50 and 100 of 100.".to_owned()
    }
}

fn router() -> IpcRouter {
    IpcRouter::new()
        .register(SimpleText)
        .register(ErrorHandling)
        .register(ToolWithProgress {
            ctx: CallContext::detached(),
        })
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let address = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let listener = tokio::net::TcpListener::bind(&address).await?;
    let url = format!(
        "http://{}{}",
        listener.local_addr()?,
        gangway::mcp::MCP_PATH
    );
    eprintln!("conformance example: serving MCP on {url}");
    // The conformance suite sends no bearer token; this server exists for
    // it alone, on loopback, for the length of a test run.
    gangway::mcp::McpServer::new(router())
        .with_server_info("gangway-conformance", env!("CARGO_PKG_VERSION"))
        .allow_unauthenticated()
        .serve_http_on(listener)
        .await
}
