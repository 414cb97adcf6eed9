//! A live host for the end-to-end tests: commands, a server, wrappers, and
//! a way to run a shell session against them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use gangway::ipc::{IpcRouter, IpcServer, SandboxEnv};

pub mod authority;
mod commands;
pub mod process;
pub mod streaming;
pub mod wire;

// The test commands, reachable as `common::X`; not every test binary uses
// each of them.
#[allow(unused_imports)]
pub use commands::{
    Bytes, Cat, Counter, EchoArgs, Fail, Greet, Hang, Login, Note, Order, Ping, Repeat, Report,
    ReportCommand, Search, Sleep, Upper, Wait, Waiter,
};

/// The `gangway` binary under test.
pub const GANGWAY: &str = env!("CARGO_BIN_EXE_gangway");

/// The lean in-sandbox client under test: what the wrappers run.
pub const GANGWAY_CLIENT: &str = env!("CARGO_BIN_EXE_gangway-client");

/// The wrapper styles, each end-to-end test runs against both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A shell script per command.
    Scripts,
    /// The client program and a link per command.
    Links,
}

/// Runs `test` once per wrapper style, saying which on stderr (shown when
/// it fails).
pub fn each_style(mut test: impl FnMut(Style)) {
    for style in Style::ALL {
        eprintln!("-- {style:?} wrappers");
        test(style);
    }
}

impl Style {
    pub const ALL: [Style; 2] = [Style::Scripts, Style::Links];

    pub fn wrapper_style(self) -> gangway_codegen::WrapperStyle {
        match self {
            Style::Scripts => gangway_codegen::WrapperStyle::Scripts,
            Style::Links => gangway_codegen::WrapperStyle::Links {
                client: GANGWAY_CLIENT.into(),
            },
        }
    }
}

/// What the test commands keep across calls.
#[derive(Clone, Default)]
pub struct Tally {
    /// The `counter` command's total.
    pub counter: Arc<AtomicU64>,
    /// Sleeps begun.
    pub sleeps_started: Arc<AtomicU64>,
    /// Sleeps that ran to the end.
    pub sleeps_finished: Arc<AtomicU64>,
    /// `hang` calls begun.
    pub hangs_started: Arc<AtomicU64>,
    /// `hang` calls that saw their timeout as a cancellation.
    pub hangs_timed_out: Arc<AtomicU64>,
    /// `linger` calls begun.
    pub waits_started: Arc<AtomicU64>,
    /// `linger` calls that saw their caller leave.
    pub waits_caller_gone: Arc<AtomicU64>,
    /// `hang --stubborn` handlers dropped before they finished.
    pub hangs_abandoned: Arc<AtomicU64>,
    /// `linger` calls that saw their caller interrupted.
    pub waits_interrupted: Arc<AtomicU64>,
    /// `linger --stubborn` handlers dropped before they finished.
    pub waits_abandoned: Arc<AtomicU64>,
    /// `linger` calls that saw their scope revoked.
    pub waits_revoked: Arc<AtomicU64>,
    /// `linger` calls that saw their scope expire.
    pub waits_expired: Arc<AtomicU64>,
    /// What `lines --hold` and `work --hold` wait on.
    pub barrier: streaming::Gate,
    /// `generate` calls that stopped because their output was not read.
    pub generate_ended_early: Arc<AtomicU64>,
    /// The chunks `sum` read, and the largest.
    pub sum_chunks: Arc<AtomicU64>,
    pub sum_largest_chunk: Arc<AtomicU64>,
}

/// The router every end-to-end test serves.
pub fn router(tally: &Tally) -> IpcRouter {
    IpcRouter::new()
        .register(EchoArgs { words: vec![] })
        .register(Search {
            query: String::new(),
            limit: 0,
            verbose: false,
            tag: vec![],
            ratio: None,
            order: Order::Oldest,
        })
        .register(Counter {
            total: tally.counter.clone(),
        })
        .register(Cat { data: vec![] })
        .register(Upper {
            text: String::new(),
        })
        .register(Fail { why: String::new() })
        .register(Ping {})
        .register(Hang {
            stubborn: false,
            ctx: gangway::ipc::CallContext::detached(),
            waiter: Waiter {
                started: tally.hangs_started.clone(),
                abandoned: tally.hangs_abandoned.clone(),
            },
            timed_out: tally.hangs_timed_out.clone(),
        })
        .register(Wait {
            ctx: gangway::ipc::CallContext::detached(),
            waiter: Waiter {
                started: tally.waits_started.clone(),
                abandoned: tally.waits_abandoned.clone(),
            },
            caller_gone: tally.waits_caller_gone.clone(),
            interrupted: tally.waits_interrupted.clone(),
            stubborn: false,
            revoked: tally.waits_revoked.clone(),
            expired: tally.waits_expired.clone(),
        })
        .register(Sleep {
            ms: 0,
            started: tally.sleeps_started.clone(),
            finished: tally.sleeps_finished.clone(),
        })
        .register(Repeat {
            word: String::new(),
            times: 0,
        })
        .register(Greet {
            name: String::new(),
        })
        .register(Note { note: None })
        .register(Bytes { data: vec![] })
        .register(ReportCommand {})
        .register(Login {
            user: String::new(),
            key: String::new(),
            pin: None,
        })
        .register(streaming::Lines {
            count: 0,
            hold: false,
            ctx: gangway::ipc::CallContext::detached(),
            barrier: tally.barrier.clone(),
        })
        .register(streaming::Generate {
            bytes: 0,
            ctx: gangway::ipc::CallContext::detached(),
            ended_early: tally.generate_ended_early.clone(),
        })
        .register(streaming::Sum {
            input: gangway::ipc::InputStream::new(),
            largest_chunk: tally.sum_largest_chunk.clone(),
            chunks: tally.sum_chunks.clone(),
        })
        .register(streaming::Work {
            steps: 0,
            hold: false,
            ctx: gangway::ipc::CallContext::detached(),
            barrier: tally.barrier.clone(),
        })
}

/// The variables a shell in a `Bwrap` sandbox may see: the sandbox's
/// (the token as its file) and those the shell sets itself.
pub const SANDBOX_VARIABLES: &[&str] = &[
    "GANGWAY_BIN",
    "GANGWAY_ENDPOINT",
    "GANGWAY_TOKEN_FILE",
    "HOME",
    "LANG",
    "LC_ALL",
    "OLDPWD",
    "PATH",
    "PWD",
    "SHLVL",
    "TERM",
    "TZ",
    "_",
];

/// The cancel grace of a test host: short, so tests of handlers that
/// ignore cancellation stay fast.
const SHORT_GRACE: std::time::Duration = std::time::Duration::from_millis(300);

/// A running host: a runtime, the server, and its wrappers.
pub struct Host {
    pub runtime: tokio::runtime::Runtime,
    pub server: Option<IpcServer>,
    pub wrappers: tempfile::TempDir,
    pub tally: Tally,
    pub style: Style,
}

impl Host {
    /// A host with script wrappers.
    pub fn start() -> Host {
        Host::start_with(IpcServer::builder())
    }

    /// A host with wrappers of `style`.
    pub fn start_styled(style: Style) -> Host {
        Host::start_with_styled(IpcServer::builder(), style)
    }

    pub fn start_with(builder: gangway::ipc::IpcServerBuilder) -> Host {
        Host::start_with_styled(builder, Style::Scripts)
    }

    pub fn start_with_styled(builder: gangway::ipc::IpcServerBuilder, style: Style) -> Host {
        Host::start_full(builder, style, SHORT_GRACE, Path::new(GANGWAY_CLIENT))
    }

    /// A host with script wrappers whose client binary is `client`.
    pub fn start_with_client(builder: gangway::ipc::IpcServerBuilder, client: &Path) -> Host {
        Host::start_full(builder, Style::Scripts, SHORT_GRACE, client)
    }

    /// A host with script wrappers whose cancel grace is `grace`.
    pub fn start_with_grace(grace: std::time::Duration) -> Host {
        Host::start_full(
            IpcServer::builder(),
            Style::Scripts,
            grace,
            Path::new(GANGWAY_CLIENT),
        )
    }

    fn start_full(
        builder: gangway::ipc::IpcServerBuilder,
        style: Style,
        grace: std::time::Duration,
        client: &Path,
    ) -> Host {
        let tally = Tally::default();
        let router = router(&tally);
        Host::start_router(builder.client_bin(client), router, tally, style, grace)
    }

    /// A host serving `router`, whose commands keep their counts in
    /// `tally`, with wrappers of `style` and a cancel grace of `grace`.
    fn start_router(
        builder: gangway::ipc::IpcServerBuilder,
        router: IpcRouter,
        tally: Tally,
        style: Style,
        grace: std::time::Duration,
    ) -> Host {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let wrappers = tempfile::tempdir().unwrap();
        gangway_codegen::write_wrappers_with(
            &router.manifest(),
            wrappers.path(),
            &style.wrapper_style(),
        )
        .unwrap();
        let server = runtime
            .block_on(
                builder
                    .cancel_grace(grace)
                    .wrapper_dir(wrappers.path())
                    .start(router),
            )
            .unwrap();
        Host {
            runtime,
            server: Some(server),
            wrappers,
            tally,
            style,
        }
    }

    pub fn env(&self) -> SandboxEnv {
        self.server.as_ref().unwrap().sandbox_env()
    }

    /// A `bwrap` argv prefix (through `--`) for a sandbox that reaches this
    /// host, from the runtime's own helper: a read-only root, a private
    /// /tmp, every namespace unshared, and the socket directory, wrappers
    /// and client binary bound in.
    pub fn bwrap_prefix(&self) -> Vec<String> {
        gangway::ipc::Bwrap::new(&self.env())
            .prefix()
            .unwrap()
            .into_iter()
            .map(|arg| arg.into_string().unwrap())
            .collect()
    }

    pub fn wrapper(&self, name: &str) -> PathBuf {
        self.wrappers.path().join(name)
    }

    /// Runs `script` with `shell` (an argv prefix such as `["busybox", "sh"]`)
    /// in the sandbox environment, passing `args` as `$1...`.
    pub fn shell(
        &self,
        shell: &[&str],
        script: &str,
        args: &[&str],
        stdin: Option<&[u8]>,
    ) -> Output {
        run(self.shell_command(shell, script, args), stdin)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            self.runtime
                .block_on(server.shutdown(std::time::Duration::from_secs(2)));
        }
    }
}

/// Runs a command to completion, feeding `stdin` (or nothing, closed).
pub fn run(mut command: Command, stdin: Option<&[u8]>) -> Output {
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    command.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let mut child = command.spawn().expect("the shell starts");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = pipe.write_all(&bytes);
        });
    }
    wait_output(child, std::time::Duration::from_secs(120))
}

/// Waits for `child` and takes its output. A hung wrapper fails the test
/// instead of hanging the suite: the output is read on a thread, and the
/// child killed past `limit`.
pub fn wait_output(child: std::process::Child, limit: std::time::Duration) -> Output {
    let pid = child.id();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match finished.recv_timeout(limit) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            // What the process was doing, for the failure's report.
            let state = process_report(pid);
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("the command did not finish within {limit:?}:\n{state}");
        }
    }
}

/// A process's state, signals, threads and children, read from `/proc`.
fn process_report(pid: u32) -> String {
    let mut report = String::new();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    for line in status.lines().filter(|line| {
        [
            "Name", "State", "Threads", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt",
        ]
        .iter()
        .any(|key| line.starts_with(&format!("{key}:")))
    }) {
        report.push_str(&format!("  {pid} {line}\n"));
    }
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten();
    for task in tasks.flatten() {
        let task = task.path();
        let read = |name: &str| std::fs::read_to_string(task.join(name)).unwrap_or_default();
        report.push_str(&format!(
            "  task {}: wchan {} syscall {}",
            task.display(),
            read("wchan"),
            read("syscall")
        ));
        for child in read("children").split_whitespace() {
            if let Ok(child) = child.parse() {
                report.push_str(&process_report(child));
            }
        }
    }
    report
}

/// The shells a wrapper must work under, as argv prefixes; those not
/// installed are left out.
pub fn shells() -> Vec<Vec<&'static str>> {
    // bash and zsh also as they run when they are /bin/sh (POSIX mode, sh
    // emulation), as on systems whose /bin/sh is one of them.
    let all: [&[&str]; 6] = [
        &["dash"],
        &["bash"],
        &["bash", "--posix"],
        &["busybox", "sh"],
        &["zsh"],
        &["zsh", "--emulate", "sh"],
    ];
    all.iter()
        .filter(|shell| which(shell[0]).is_some())
        .map(|shell| shell.to_vec())
        .collect()
}

pub fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

pub fn require(programs: &[&str]) {
    for program in programs {
        assert!(
            which(program).is_some(),
            "`{program}` is not installed; scripts/test installs it (apt-get)"
        );
    }
}

/// A call as the frame a raw connection sends.
pub fn call_frame(request: gangway::ipc::protocol::Request) -> Vec<u8> {
    gangway::ipc::protocol::encode(&gangway::ipc::protocol::ClientFrame::Call(request))
}

/// How long a test waits for something the host does before failing.
pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

/// Polls `done` until it holds, or fails after [`PATIENCE`].
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + PATIENCE;
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: not within {PATIENCE:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn exists(path: &Path) -> bool {
    path.exists()
}

impl Host {
    /// A command that runs the wrapper file `name` as `shell`'s own script
    /// (`SHELL WRAPPER args...`, so `shell` and not the wrapper's
    /// `#!/bin/sh` interprets it), in the sandbox environment, not yet run.
    pub fn wrapper_command(&self, shell: &[&str], name: &str, args: &[&str]) -> Command {
        let mut command = Command::new(shell[0]);
        command.args(&shell[1..]).arg(self.wrapper(name)).args(args);
        self.env().apply(&mut command);
        command
    }

    /// A command that runs `script` with `shell` in the sandbox environment,
    /// `args` as `$1...`, not yet run: [`Host::shell`] for callers that
    /// feed standard input themselves.
    pub fn shell_command(&self, shell: &[&str], script: &str, args: &[&str]) -> Command {
        let mut command = Command::new(shell[0]);
        command
            .args(&shell[1..])
            .arg("-c")
            .arg(script)
            .arg("gangway-test")
            .args(args);
        self.env().apply(&mut command);
        command
    }

    /// Wrapper `name` with `args` run both ways under `shell`, each with a
    /// description for failure messages: found on `PATH` by a `shell -c`
    /// script, and directly: a script wrapper as `shell`'s own script (not
    /// its `#!/bin/sh`), a link wrapper by its path (`argv[0]` a path).
    pub fn both_ways(&self, shell: &[&str], name: &str, args: &[&str]) -> [(String, Command); 2] {
        let style = self.style;
        let direct = match style {
            Style::Scripts => (
                format!("{name} {args:?} as the script of {shell:?} ({style:?})"),
                self.wrapper_command(shell, name, args),
            ),
            Style::Links => {
                let mut command = Command::new(self.wrapper(name));
                command.args(args);
                self.env().apply(&mut command);
                (
                    format!("{name} {args:?} run by its path ({style:?})"),
                    command,
                )
            }
        };
        [
            (
                format!("{name} {args:?} from PATH under {shell:?} -c ({style:?})"),
                self.shell_command(shell, &format!("{name} \"$@\""), args),
            ),
            direct,
        ]
    }
}
