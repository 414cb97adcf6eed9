//! A host exposing four of its five commands to a sandboxed shell.
//!
//! Run with `cargo run --example sandbox`. The host registers the commands,
//! starts the IPC server with an audit log and the rules of
//! `examples/sandbox-rules.toml` deciding each call, issues the sandbox a scope
//! (every command but `restart`), writes a wrapper script per command of
//! the scope, and runs a short shell session inside bubblewrap (`gangway::ipc::Bwrap`: every
//! namespace unshared, no capabilities, a seccomp filter, a read-only
//! system; the scope's own socket directory, the wrapper directory and the
//! client binary bound read-only).
//! Without a working `bwrap` it tries `unshare --user --net` (no install
//! needed where user namespaces are allowed), then a plain `sh`, and says in
//! one line which isolation the session got. It prints what the session
//! printed, then what the audit log recorded, and exits non-zero when any
//! call's exit code is not the one the demo expects.
//!
//! The example binary is also its own in-sandbox client: the wrappers run
//! `$GANGWAY_BIN call ...`, `GANGWAY_BIN` points back at this binary, and
//! `gangway::caller::run_if_call` (the runtime's `client` feature) serves such
//! a call, as the `gangway` binary does.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use gangway::IpcCommand;
use gangway::ipc::{
    AuditLog, Bwrap, CallContext, CommandError, CommandResult, InputStream, IpcRouter, IpcServer,
    SandboxEnv, Scope,
};
use gangway::policy::Policy;
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

/// Print the lines of the input that hold a word, each as soon as it is
/// read: it sits in a pipeline (`tail -f app.log | host-grep ERROR`).
#[derive(Clone, Serialize, Deserialize, IpcCommand)]
#[ipc(name = "host-grep", response = CommandResult<()>, timeout = "1h")]
struct HostGrep {
    /// The word to look for.
    #[ipc(positional)]
    word: String,
    /// The text, streamed in as it arrives.
    #[ipc(stdin)]
    input: InputStream,
    #[ipc(context)]
    #[serde(skip)]
    ctx: CallContext,
}

impl HostGrep {
    async fn handle(&mut self) -> CommandResult<()> {
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(&mut self.input).lines();
        while let Some(line) = lines.next_line().await? {
            if line.contains(&self.word) {
                // Reaches the caller now; fails once the call is cancelled.
                self.ctx.stdout(format!("{line}\n")).await?;
            }
        }
        Ok(())
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

/// Restart the host's services: for the host's own operators, outside the
/// sandbox's scope.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "restart", response = String)]
struct Restart {}

impl Restart {
    async fn handle(&mut self) -> String {
        "restarted".to_owned()
    }
}

/// The shell session the sandbox runs. `check` compares each call's exit
/// code with the one the demo expects, and the session exits 1 if any
/// differs (a wrapper that cannot find its client exits 127, for one).
const SESSION: &str = r##"
exec 2>&1
failed=0
check() {
    code=$?
    if [ "$code" -ne "$1" ]; then
        echo "# unexpected: exit code $code, expected $1"
        failed=1
    fi
}
echo '$ search rust'
search rust; check 0
echo '$ search -n 1 sandbox; search -n 1 shell   # one line each'
search -n 1 sandbox; check 0
search -n 1 shell; check 0
echo '$ printf "one two three" | wc'
printf 'one two three' | wc; check 0
echo '$ wc < /dev/null   # empty input is no input'
wc < /dev/null; check 0
printf '%s\n' "$ printf '%s\\n' ok 'ERROR disk' ok 'ERROR net' | host-grep ERROR   # streamed both ways"
printf '%s\n' ok 'ERROR disk' ok 'ERROR net' | host-grep ERROR; check 0
echo '$ search --limt 3 rust   # a typo'
search --limt 3 rust; check 2
echo '$ stats'
stats; check 0
echo '$ search --help'
search --help; check 0
echo '$ gangway list   # what this sandbox may call (the client is $GANGWAY_BIN)'
"$GANGWAY_BIN" list; check 0
echo '$ gangway call restart   # a host command outside the scope'
"$GANGWAY_BIN" call restart; check 77
echo '$ search password   # a call a rule of sandbox-rules.toml denies'
search password; check 77
exit "$failed"
"##;

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Whether bubblewrap is installed and can make its namespaces here (a
/// locked-down container may refuse them).
fn bwrap_works() -> bool {
    which("bwrap")
        && Command::new("bwrap")
            .args(["--ro-bind", "/", "/", "--unshare-all", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
}

/// Whether this machine lets an unprivileged process make user and network
/// namespaces (`unshare` from util-linux, no install needed).
fn unshare_works() -> bool {
    which("unshare")
        && Command::new("unshare")
            .args(["--user", "--map-root-user", "--net", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
}

fn main() {
    // Called back by a wrapper: act as the client.
    if let Some(code) = gangway::caller::run_if_call(std::env::args_os()) {
        std::process::exit(code);
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let code = runtime.block_on(host());
    std::process::exit(code);
}

async fn host() -> i32 {
    let wrappers = tempfile::tempdir().expect("a directory for the wrappers");
    let audit = tempfile::tempdir().expect("a directory for the audit log");
    let audit_log = audit.path().join("audit.jsonl");
    let me = std::env::current_exe().expect("this program's path");
    // The rules beside this file decide each call (checked against the
    // commands: a rule on an argument no command has fails here).
    let rules = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sandbox-rules.toml");
    let policy = Policy::load(rules)
        .and_then(|policy| policy.check_against(&router().manifest()))
        .unwrap_or_else(|error| panic!("{error}"));
    let server = IpcServer::builder()
        .guard(policy)
        .client_bin(&me)
        .wrapper_dir(wrappers.path())
        .audit(AuditLog::jsonl(&audit_log).expect("the audit log opens"))
        .start(router())
        .await
        .expect("the server starts");
    // The sandbox's own token: every command but `restart`, for an hour;
    // wrappers for those commands only.
    let scope = Scope::new("demo")
        .commands(["search", "wc", "host-grep", "stats"])
        .expires_in(Duration::from_secs(3600));
    let env = server.scope(scope);
    let manifest = server.manifest_for("demo").expect("the scope is live");
    gangway::wrappers::write_wrappers(&manifest, wrappers.path()).expect("wrappers are written");

    let mut session = session_command(&env);
    env.apply(&mut session);
    // Never hand the session this program's stdin: a command that reads
    // stdin would wait on whatever the host's stdin is (an open pipe, a
    // terminal) instead of seeing no input. (`Bwrap::command` does this.)
    session.stdin(Stdio::null());
    let status = tokio::task::spawn_blocking(move || session.status())
        .await
        .expect("the session's thread")
        .expect("the session starts");
    server.shutdown(Duration::from_secs(2)).await;
    print_audit(&audit_log);
    exit_code(status)
}

/// The host's five commands, `search` over a few notes.
fn router() -> IpcRouter {
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
    IpcRouter::new()
        .register(Search {
            query: String::new(),
            limit: 0,
            notes,
        })
        .register(WordCount { text: Vec::new() })
        .register(HostGrep {
            word: String::new(),
            input: InputStream::new(),
            ctx: CallContext::detached(),
        })
        .register(StatsCommand {
            served: Arc::new(AtomicUsize::new(0)),
        })
        .register(Restart {})
}

/// The shell running `SESSION` in the best isolation this machine offers
/// (bubblewrap, else `unshare`, else none), having said which in one line.
fn session_command(env: &SandboxEnv) -> Command {
    if bwrap_works() {
        // The sandbox sees the system directories read-only, a fresh /tmp,
        // no network, and the paths `env.sandbox_paths()` lists: the socket
        // directory, the wrappers and this program (all read-only).
        println!("# isolation: bubblewrap (no network, read-only system, own process ids)");
        Bwrap::new(env)
            .command("sh", ["-c", SESSION])
            .expect("the sandbox profile is made")
    } else if unshare_works() {
        let mut unshare = Command::new("unshare");
        unshare.args([
            "--user",
            "--map-root-user",
            "--net",
            "--",
            "sh",
            "-c",
            SESSION,
        ]);
        println!(
            "# isolation: unshare (no network only; files are shared). \
             For a real sandbox: apt-get install bubblewrap"
        );
        unshare
    } else {
        println!(
            "# isolation: none (plain sh; no bwrap, and user namespaces are not allowed). \
             For a sandbox: apt-get install bubblewrap"
        );
        let mut sh = Command::new("sh");
        sh.args(["-c", SESSION]);
        sh
    }
}

/// The example's exit code: the session's, saying why when it failed.
fn exit_code(status: std::process::ExitStatus) -> i32 {
    match status.code() {
        Some(0) => 0,
        Some(code) => {
            eprintln!("sandbox example: the session failed (exit code {code})");
            code
        }
        None => {
            eprintln!("sandbox example: the session was killed by a signal");
            1
        }
    }
}

/// One line per outcome the audit log recorded, and the record of the
/// refused call.
fn print_audit(path: &std::path::Path) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let records: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let mut outcomes = std::collections::BTreeMap::new();
    for record in &records {
        *outcomes
            .entry(record["outcome"].as_str().unwrap_or("?").to_owned())
            .or_insert(0) += 1;
    }
    let counts: Vec<String> = outcomes.iter().map(|(o, n)| format!("{o} {n}")).collect();
    println!(
        "# audit log: {} calls recorded ({})",
        records.len(),
        counts.join(", ")
    );
    for denied in records.iter().filter(|r| r["outcome"] == "denied") {
        let rule = match denied.get("rule") {
            Some(rule) => format!(" (rule {rule})"),
            None => String::new(),
        };
        println!(
            "# denied: scope {} called {} (pid {}){rule}: {}",
            denied["scope"], denied["command"], denied["pid"], denied["reason"]
        );
    }
}
