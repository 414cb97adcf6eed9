//! A host exposing three commands to a sandboxed shell.
//!
//! Run with `cargo run --example sandbox`. The host registers the commands,
//! starts the IPC server, writes a wrapper script per command, and runs a
//! short shell session inside bubblewrap (`bwrap` with `--unshare-net` and a
//! read-only root; the socket and wrapper directories bound in). Without
//! `bwrap` it runs the session in a plain `sh`, and says so. It prints what
//! the session printed.
//!
//! The example binary is also its own in-sandbox client: the wrappers run
//! `$GANGWAY_BIN call ...`, and `GANGWAY_BIN` points back at this binary,
//! which hands such a call to `gangway_cli::run`, as the `gangway` binary
//! does.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use gangway::IpcCommand;
use gangway::ipc::{CommandError, CommandResult, IpcRouter, IpcServer};
use serde::{Deserialize, Serialize};

/// Search the notes and print the matching lines.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "search", response = String)]
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
    async fn handle(&mut self) -> String {
        self.notes
            .iter()
            .filter(|line| line.contains(&self.query))
            .take(self.limit as usize)
            .map(|line| format!("{line}\n"))
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
    /// Calls of `stats` so far.
    calls: usize,
    /// The process that answered: the host, not the sandbox.
    host_pid: u32,
}

impl StatsCommand {
    async fn handle(&mut self) -> Stats {
        Stats {
            calls: self.served.fetch_add(1, Ordering::SeqCst) + 1,
            host_pid: std::process::id(),
        }
    }
}

/// The shell session the sandbox runs.
const SESSION: &str = r#"
echo '$ search rust'
search rust
echo '$ search -n 1 sandbox'
search -n 1 sandbox
echo '$ printf "one two three" | wc'
printf 'one two three' | wc
echo '$ search --limt 3 rust   # a typo'
search --limt 3 rust
echo "exit code $?"
echo '$ stats'
stats
echo '$ search --help'
search --help
"#;

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

fn main() {
    // Called back by a wrapper: act as the `gangway` client.
    let args: Vec<_> = std::env::args_os().collect();
    if args.get(1).is_some_and(|arg| arg == "call") {
        std::process::exit(gangway_cli::run(args));
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let code = runtime.block_on(host());
    std::process::exit(code);
}

async fn host() -> i32 {
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
    let router = IpcRouter::new()
        .register(Search {
            query: String::new(),
            limit: 0,
            notes,
        })
        .register(WordCount { text: Vec::new() })
        .register(StatsCommand {
            served: Arc::new(AtomicUsize::new(0)),
        });

    let wrappers = tempfile::tempdir().expect("a directory for the wrappers");
    gangway_codegen::write_wrappers(&router.manifest(), wrappers.path())
        .expect("wrappers are written");
    let me = std::env::current_exe().expect("this program's path");
    let server = IpcServer::builder()
        .client_bin(&me)
        .wrapper_dir(wrappers.path())
        .start(router)
        .await
        .expect("the server starts");

    let socket_dir = server.socket_dir().expect("a Unix socket").to_path_buf();
    let mut session = if which("bwrap") {
        let mut bwrap = Command::new("bwrap");
        let dirs = [socket_dir.as_path(), wrappers.path()];
        bwrap.args([
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
        ]);
        for dir in dirs {
            bwrap.arg("--bind").arg(dir).arg(dir);
        }
        bwrap.args([
            "--unshare-net",
            "--unshare-pid",
            "--die-with-parent",
            "--",
            "sh",
            "-c",
            SESSION,
        ]);
        println!("# a shell session inside bubblewrap (no network, read-only root):");
        bwrap
    } else {
        println!("# bwrap is not installed: running the session in a plain sh, without a sandbox");
        let mut sh = Command::new("sh");
        sh.args(["-c", SESSION]);
        sh
    };
    server.sandbox_env().apply(&mut session);
    session.stdin(Stdio::null());
    let status = tokio::task::spawn_blocking(move || session.status())
        .await
        .expect("the session's thread")
        .expect("the session starts");
    server.shutdown(Duration::from_secs(2)).await;
    status.code().unwrap_or(1)
}
