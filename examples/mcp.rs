//! The README's commands served to an agent over the Model Context
//! Protocol, on standard input and output.
//!
//! Run with `cargo run --example mcp` (as an MCP client starts it) from
//! an MCP client (its configuration is in the README: `{"command":
//! "<path>/mcp"}`). Besides `greet` and `count_words`, it serves `fail`
//! (a handler error the model reads), `countdown` (progress, and
//! cancellation it honours) and `stats` (a typed result: an output schema
//! and structured content), so every part of a tool call can be tried.

#[path = "mcp/commands.rs"]
mod commands;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    gangway::mcp::McpServer::new(commands::router())
        .with_server_info("gangway-example", env!("CARGO_PKG_VERSION"))
        .serve_stdio()
        .await
}
