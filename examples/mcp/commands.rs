//! The commands `examples/mcp.rs` serves, in a module of their own so the
//! tests can host the same ones (`tests/mcp.rs` over MCP in-process,
//! `cli/tests/mcp.rs` behind `gangway mcp` in a sandbox).

use std::time::Duration;

use gangway::IpcCommand;
use gangway::ipc::{CallContext, CommandError, CommandResult, IpcRouter};
use serde::{Deserialize, Serialize};

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

/// Count the bytes piped in, and add them up.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "count_bytes", response = String)]
struct CountBytes {
    /// The bytes: text, or `{"base64": "..."}` for any bytes.
    #[ipc(stdin)]
    data: Vec<u8>,
}

impl CountBytes {
    async fn handle(&mut self) -> String {
        let sum: u64 = self.data.iter().map(|&byte| u64::from(byte)).sum();
        format!("{} bytes, sum {sum}", self.data.len())
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

/// Count the words and lines of a text, and find its longest word.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "stats", response = Stats, read_only, output_schema)]
struct TextStats {
    /// The text to look at.
    #[ipc(positional)]
    text: String,
}

/// A text's counts.
// A typed result (`#[ipc(output_schema)]`): the tool has an `outputSchema`
// (this type's JSON Schema) and each result `structuredContent`.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Stats {
    /// How many words.
    words: usize,
    /// How many lines.
    lines: usize,
    /// The longest word (the first of several as long); none in a text
    /// without words.
    longest: Option<String>,
}

impl TextStats {
    async fn handle(&mut self) -> Stats {
        let mut longest: Option<&str> = None;
        for word in self.text.split_whitespace() {
            if longest.is_none_or(|l| word.chars().count() > l.chars().count()) {
                longest = Some(word);
            }
        }
        Stats {
            words: self.text.split_whitespace().count(),
            lines: self.text.lines().count(),
            longest: longest.map(str::to_owned),
        }
    }
}

/// A router with every command of this module.
pub fn router() -> IpcRouter {
    IpcRouter::new()
        .register(Greet {
            name: String::new(),
            loud: false,
        })
        .register(CountWords {
            text: String::new(),
        })
        .register(CountBytes { data: Vec::new() })
        .register(Fail { why: String::new() })
        .register(TextStats {
            text: String::new(),
        })
        .register(Countdown {
            from: 0,
            step_ms: 0,
            ctx: CallContext::detached(),
        })
}
