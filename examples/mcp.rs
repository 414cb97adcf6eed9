//! The README's commands served to an agent over the Model Context
//! Protocol, on standard input and output, or over Streamable HTTP.
//!
//! Run with `cargo run --example mcp` (as an MCP client starts it) from
//! an MCP client (its configuration is in the README: `{"command":
//! "<path>/mcp"}`), or `MCP_TOKEN=<secret> cargo run --example mcp --
//! --http 127.0.0.1:8080` and point the client at the URL it prints, with
//! the token (`{"url": "http://127.0.0.1:8080/mcp", "headers":
//! {"Authorization": "Bearer <secret>"}}`; port 0 picks a free one). Besides
//! `greet` and `count_words`, it serves `fail` (a handler error the model
//! reads), `countdown` (progress, and cancellation it honours) and `stats`
//! (a typed result: an output schema and structured content), so every
//! part of a tool call can be tried.

#[path = "mcp/commands.rs"]
mod commands;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let server = gangway::mcp::McpServer::new(commands::router())
        .with_server_info("gangway-example", env!("CARGO_PKG_VERSION"));
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => server.serve_stdio().await,
        [flag, address] if flag == "--http" => {
            // Every request must carry it: any process on this machine
            // could call every command otherwise.
            let token = std::env::var("MCP_TOKEN").map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "set MCP_TOKEN to the bearer token clients send \
                     (`Authorization: Bearer <token>`)",
                )
            })?;
            let listener = tokio::net::TcpListener::bind(address).await?;
            // The bound address, for a client (and for port 0).
            let url = format!(
                "http://{}{}",
                listener.local_addr()?,
                gangway::mcp::MCP_PATH
            );
            eprintln!("mcp example: serving MCP on {url}");
            server.bearer_token(token).serve_http_on(listener).await
        }
        _ => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "usage: mcp [--http <address>] (no argument: MCP on stdio)",
        )),
    }
}
