//! A host exposing three commands through gangway's router.
//!
//! Run with `cargo run --example sandbox`. The host registers the commands,
//! prints the schema the wrappers will be generated from, and serves calls
//! in-process as a sandboxed shell's wrappers will (the IPC server and the
//! shell session come with the sandbox work).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use gangway::IpcCommand;
use gangway::ipc::{CommandError, CommandResult, IpcRouter};
use serde::{Deserialize, Serialize};

/// Search the notes and print the matching lines.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "search", response = Vec<String>)]
struct Search {
    /// What to look for.
    #[ipc(positional)]
    query: String,
    /// How many lines to print at most.
    #[ipc(short = 'n', default = 5)]
    limit: u32,
    /// The notes, shared by every call.
    #[ipc(state)]
    #[serde(skip)]
    notes: Arc<Vec<String>>,
}

impl Search {
    async fn handle(&mut self) -> Vec<String> {
        self.notes
            .iter()
            .filter(|line| line.contains(&self.query))
            .take(self.limit as usize)
            .cloned()
            .collect()
    }
}

/// Count the words of the text piped in.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "wc", response = CommandResult<usize>)]
struct WordCount {
    /// The text to count.
    #[ipc(stdin)]
    text: Vec<u8>,
}

impl WordCount {
    async fn handle(&mut self) -> CommandResult<usize> {
        let text = std::str::from_utf8(&self.text)
            .map_err(|_| CommandError::new("the input is not UTF-8 text"))?;
        Ok(text.split_whitespace().count())
    }
}

/// Report what the host has served so far.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "stats", response = Stats)]
struct StatsCommand {
    #[ipc(state)]
    #[serde(skip)]
    served: Arc<AtomicUsize>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Stats {
    calls: usize,
    host: String,
}

impl StatsCommand {
    async fn handle(&mut self) -> Stats {
        Stats {
            calls: self.served.load(Ordering::SeqCst),
            host: "example".to_owned(),
        }
    }
}

fn params(json: serde_json::Value) -> Vec<u8> {
    rmp_serde::to_vec_named(&json).expect("JSON values encode")
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let notes = Arc::new(
        [
            "rust: ownership without a garbage collector",
            "sandbox: bubblewrap with --unshare-net",
            "rust: async runtimes poll futures",
            "shell: quote every expansion",
        ]
        .map(str::to_owned)
        .to_vec(),
    );
    let served = Arc::new(AtomicUsize::new(0));
    let router = IpcRouter::new()
        .register(Search {
            query: String::new(),
            limit: 0,
            notes,
        })
        .register(WordCount { text: Vec::new() })
        .register(StatsCommand {
            served: served.clone(),
        });

    println!("commands the sandbox will see:");
    for command in router.commands() {
        let args: Vec<String> = command
            .schema
            .params
            .iter()
            .map(|p| match (p.positional, p.stdin) {
                (Some(_), _) => format!("<{}>", p.name),
                (None, true) => format!("[stdin: {}]", p.name),
                (None, false) => format!("[--{}]", p.long),
            })
            .collect();
        println!(
            "  {} {}  # {}",
            command.name,
            args.join(" "),
            command.schema.description
        );
    }

    let calls = [
        ("search", params(serde_json::json!({"query": "rust"}))),
        (
            "search",
            params(serde_json::json!({"query": "s", "limit": 1})),
        ),
        ("wc", params(serde_json::json!({"text": "one two three\n"}))),
        (
            "wc",
            rmp_serde::to_vec_named(&WordCount {
                text: vec![0xff, 0xfe],
            })
            .unwrap(),
        ),
        ("serch", params(serde_json::json!({"query": "rust"}))),
        ("search", params(serde_json::json!({"qurey": "rust"}))),
        ("stats", Vec::new()),
    ];
    println!();
    for (method, params) in calls {
        served.fetch_add(1, Ordering::SeqCst);
        match router.dispatch(method, &params).await {
            Ok(reply) => {
                let value: serde_json::Value =
                    rmp_serde::from_slice(&reply).expect("responses are MessagePack");
                println!("$ {method}\n{value}");
            }
            Err(error) => println!("$ {method}\nerror ({}): {error}", error.kind()),
        }
    }
}
