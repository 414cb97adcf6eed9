//! The README's commands served to an agent over the Model Context
//! Protocol, on standard input and output.
//!
//! Run with `cargo run --example mcp` (as an MCP client starts it) from
//! an MCP client (its configuration is in the README: `{"command":
//! "<path>/mcp"}`). Besides `greet` and `count_words`, it serves `fail`
//! (a handler error the model reads) and `countdown` (progress, and
//! cancellation it honours), so every part of a tool call can be tried.

use std::time::Duration;

use gangway::IpcCommand;
use gangway::ipc::{CallContext, CommandError, CommandResult, IpcRouter};
use serde::Serialize;

/// Greet someone.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = String, read_only, idempotent)]
struct Greet {
    /// Who to greet.
    #[ipc(positional)]
    name: String,
    /// Shout it.
    #[ipc(short = 'l')]
    loud: bool,
}

impl Greet {
    async fn handle(&mut self) -> String {
        let greeting = format!("hello {}", self.name);
        if self.loud {
            greeting.to_uppercase()
        } else {
            greeting
        }
    }
}

/// Count the words piped in.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "count_words", response = usize)]
struct CountWords {
    /// The text to count.
    #[ipc(stdin)]
    text: String,
}

impl CountWords {
    async fn handle(&mut self) -> usize {
        self.text.split_whitespace().count()
    }
}

/// Fail with the reason given.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = CommandResult<String>)]
struct Fail {
    /// Why.
    #[ipc(positional)]
    why: String,
}

impl Fail {
    async fn handle(&mut self) -> CommandResult<String> {
        Err(CommandError::new(format!("failed: {}", self.why)))
    }
}

/// Count down from `from`, one step every `step_ms` milliseconds,
/// reporting progress; stops early when cancelled.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = String)]
struct Countdown {
    /// Where to start.
    #[ipc(positional)]
    from: u64,
    /// Milliseconds per step.
    #[ipc(default = 100)]
    step_ms: u64,
    #[ipc(context)]
    #[serde(skip)]
    ctx: CallContext,
}

impl Countdown {
    async fn handle(&mut self) -> String {
        for done in 0..self.from {
            self.ctx.progress(done, Some(self.from), "counting down");
            let _ = self.ctx.stdout(format!("{}\n", self.from - done)).await;
            tokio::select! {
                () = self.ctx.cancelled() => {
                    // Where a test (or a curious person) sees it.
                    eprintln!("countdown: cancelled after {done} steps");
                    return format!("cancelled after {done} steps");
                }
                () = tokio::time::sleep(Duration::from_millis(self.step_ms)) => {}
            }
        }
        self.ctx.progress(self.from, Some(self.from), "done");
        "liftoff".to_owned()
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let router = IpcRouter::new()
        .register(Greet {
            name: String::new(),
            loud: false,
        })
        .register(CountWords {
            text: String::new(),
        })
        .register(Fail { why: String::new() })
        .register(Countdown {
            from: 0,
            step_ms: 0,
            ctx: CallContext::detached(),
        });
    gangway::mcp::McpServer::new(router)
        .with_server_info("gangway-example", env!("CARGO_PKG_VERSION"))
        .serve_stdio()
        .await
}
