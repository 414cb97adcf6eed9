//! The `gangway` command.
//!
//! - `gangway call <command> [--stdin <arg>] -- <args...>`: the in-sandbox
//!   client every wrapper script runs; [`gangway::caller`] is the whole of it
//!   (how responses print, when stdin is read, the exit codes), so a host
//!   binary with the runtime's `client` feature can be its own client.
//! - `gangway list [--json]`: inside a sandbox, the host commands it may
//!   call (its scope's), as the host answers for its token.
//! - `gangway mcp`: inside a sandbox, an MCP server on standard input and
//!   output whose tools are the host commands the sandbox may call; each
//!   tool call is forwarded to the host (what an agent's configuration
//!   names: `{"command": "gangway", "args": ["mcp"]}`).
//! - `gangway wrappers (--manifest <file> | --src <dir>) --out <dir> [--style
//!   scripts|links] [--client <file>] [--check]`: a shell script per command
//!   (the default), or the client program and a link per command to it (one
//!   process start per call; the client is `--client`, else `GANGWAY_BIN`,
//!   else `gangway-client-static` (see `scripts/build-static-client`),
//!   `gangway-client` or `gangway` beside this program or on `PATH`)
//! - `gangway manifest --src <dir>`
//! - `gangway reference (--manifest <file> | --src <dir>)`
//! - `gangway policy check <rules> [--manifest <file>]` and `gangway policy
//!   explain <rules> --manifest <file> [--scope <id>] -- <command>
//!   <words...>`: a rules file checked, and what it decides of a call (see
//!   the `policy` module).
//!
//! The library's [`run`] is the whole command.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use gangway::ipc::exit;
use gangway::tool::Manifest;
use gangway_codegen::WrapperStyle;

mod policy;

/// Expose host commands to sandboxed shells.
#[derive(Debug, Parser)]
#[command(name = "gangway", version, about, disable_help_subcommand = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Call a host command (what wrapper scripts run).
    Call(Call),
    /// Inside a sandbox: list the host commands it may call.
    List(List),
    /// Inside a sandbox: serve the host commands it may call as MCP tools
    /// on standard input and output, for an agent.
    #[command(after_help = MCP_AFTER_HELP)]
    Mcp,
    /// Write (or check) a wrapper script per command.
    Wrappers(Wrappers),
    /// Print the manifest of a crate's commands, read from its source.
    Manifest(SourceOnly),
    /// Print a Markdown reference of the commands, for an agent's prompt.
    Reference(Source),
    /// Check a policy rules file, or explain what it decides of a call.
    #[command(subcommand)]
    Policy(policy::PolicyCommand),
}

/// What `gangway mcp --help` adds.
const MCP_AFTER_HELP: &str = "\
Run inside a sandbox (it reads GANGWAY_ENDPOINT and GANGWAY_TOKEN): the tools
are the commands the sandbox's scope allows, asked of the host at every
`tools/list`, and each call runs on the host, which binds its arguments and
applies its guard, audit log and timeouts. A cancelled tool call cancels the
host's call. An agent's MCP configuration:

  {\"command\": \"gangway\", \"args\": [\"mcp\"]}";

/// `gangway list`'s arguments, for `--help`: the client parses them.
#[allow(dead_code)]
#[derive(Debug, Args)]
struct List {
    /// Print the manifest (every command's schema) as JSON.
    #[arg(long)]
    json: bool,
}

// Parsed by `gangway::caller`; described here for `gangway --help`.
#[allow(dead_code)]
#[derive(Debug, Args)]
#[command(after_help = gangway::caller::EXIT_CODES)]
struct Call {
    /// The command.
    command: String,
    /// Send piped standard input as this argument.
    #[arg(long, value_name = "ARG")]
    stdin: Option<String>,
    /// The command's arguments, sent untouched.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    args: Vec<OsString>,
}

#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
struct Source {
    /// A manifest JSON file, as `IpcRouter::manifest()` writes it.
    #[arg(long, value_name = "FILE")]
    manifest: Option<PathBuf>,
    /// A crate directory whose sources declare the commands.
    #[arg(long, value_name = "DIR")]
    src: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct SourceOnly {
    /// A crate directory whose sources declare the commands.
    #[arg(long, value_name = "DIR")]
    src: PathBuf,
}

#[derive(Debug, Args)]
struct Wrappers {
    #[command(flatten)]
    source: Source,
    /// The directory of wrapper scripts.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// How the wrappers call the host.
    #[arg(long, value_enum, default_value_t = Style::Scripts)]
    style: Style,
    /// With `--style links`: the client program to place in the directory
    /// (default: `GANGWAY_BIN`, else the static `gangway-client-static`,
    /// `gangway-client` or `gangway` beside this program or on `PATH`).
    #[arg(long, value_name = "FILE")]
    client: Option<PathBuf>,
    /// Write nothing; exit 1 with a diff when the directory is out of date.
    #[arg(long)]
    check: bool,
}

/// The wrapper styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Style {
    /// A shell script per command, running `$GANGWAY_BIN call <command>`.
    Scripts,
    /// The client program as `gangway` and a symbolic link per command to
    /// it: one process start per call.
    Links,
}

/// Runs the `gangway` command with these arguments (the first is the
/// program name) and returns the exit code.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let all: Vec<OsString> = args.into_iter().map(Into::into).collect();
    // The in-sandbox call path is the runtime's client, with no clap on it.
    if let Some(code) = gangway::caller::run_if_call(all.iter().cloned()) {
        return code;
    }
    let cli = match Cli::try_parse_from(&all) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return error.exit_code();
        }
    };
    match cli.command {
        // Handed to the client before clap parses anything (above); clap
        // knows `call` only to list it in `gangway --help`.
        Command::Call(_) | Command::List(_) => gangway::caller::run(all),
        Command::Mcp => run_mcp(),
        Command::Wrappers(wrappers) => run_wrappers(wrappers),
        Command::Manifest(source) => match scan(&source.src) {
            Ok(manifest) => print_json(&manifest),
            Err(message) => fail(&message),
        },
        Command::Reference(source) => match load(&source) {
            Ok(manifest) => match gangway_codegen::render::Renderer::new().reference(&manifest) {
                Ok(text) => gangway::caller::write_stdout(text.as_bytes()),
                Err(error) => fail(&error),
            },
            Err(message) => fail(&message),
        },
        Command::Policy(command) => policy::run(command),
    }
}

/// `gangway mcp`: connects to the host, then serves MCP on stdio until the
/// agent closes it.
fn run_mcp() -> i32 {
    // One thread: an MCP session is one client's requests, and the work
    // happens on the host.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            gangway::caller::say(format!("gangway mcp: cannot start: {error}"));
            return exit::FAILURE;
        }
    };
    let code = runtime.block_on(async {
        let client = match gangway::ipc::AsyncIpcClient::from_env().await {
            Ok(client) => client,
            Err(error) => {
                gangway::caller::say(format!("gangway mcp: {error}"));
                return error.exit_code();
            }
        };
        match gangway::mcp::McpServer::forwarding(client)
            .serve_stdio()
            .await
        {
            Ok(()) => exit::OK,
            Err(error) => {
                gangway::caller::say(format!("gangway mcp: {error}"));
                // The host went away: as for a call that cannot reach it.
                if error.kind() == std::io::ErrorKind::ConnectionAborted {
                    exit::UNAVAILABLE
                } else {
                    exit::FAILURE
                }
            }
        }
    });
    // The read of standard input may still be blocked in its thread (the
    // session failed rather than reached the end of input): do not wait
    // for it.
    runtime.shutdown_background();
    code
}

fn fail(error: &dyn std::fmt::Display) -> i32 {
    eprintln!("gangway: {error}");
    exit::FAILURE
}

fn print_json(value: &impl serde::Serialize) -> i32 {
    match serde_json::to_string_pretty(value) {
        Ok(text) => gangway::caller::write_stdout(format!("{text}\n").as_bytes()),
        Err(error) => fail(&error),
    }
}

fn load(source: &Source) -> Result<Manifest, String> {
    match (&source.manifest, &source.src) {
        (Some(file), _) => {
            let text =
                std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
            serde_json::from_str(&text)
                .map_err(|e| format!("{}: not a gangway manifest: {e}", file.display()))
        }
        (None, Some(dir)) => scan(dir),
        (None, None) => Err("give `--manifest <file>` or `--src <dir>`".to_owned()),
    }
}

/// Scans a crate's sources, printing what was skipped to stderr.
fn scan(dir: &std::path::Path) -> Result<Manifest, String> {
    let report = gangway_codegen::scan::scan_dir(dir).map_err(|e| e.to_string())?;
    for warning in &report.warnings {
        eprintln!("gangway: warning: {warning}");
    }
    Ok(report.manifest)
}

fn run_wrappers(wrappers: Wrappers) -> i32 {
    let manifest = match load(&wrappers.source) {
        Ok(manifest) => manifest,
        Err(message) => return fail(&message),
    };
    let style = match (wrappers.style, wrappers.client) {
        (Style::Scripts, None) => WrapperStyle::Scripts,
        (Style::Scripts, Some(_)) => {
            return fail(
                &"`--client` places a program for `--style links`; add `--style links` or drop `--client`",
            );
        }
        (Style::Links, Some(client)) => WrapperStyle::Links { client },
        (Style::Links, None) => match gangway::ipc::locate_client_bin() {
            Some(client) => WrapperStyle::Links { client },
            None => {
                return fail(
                    &"link wrappers need the client program: no `gangway-client-static`, `gangway-client` or `gangway` \
                     was found beside this program or on PATH; give `--client <file>`",
                );
            }
        },
    };
    if wrappers.check {
        return match gangway_codegen::check_wrappers_with(&manifest, &wrappers.out, &style) {
            Ok(()) => exit::OK,
            Err(gangway_codegen::wrappers::WrapperError::OutOfDate { diff }) => {
                let _ = gangway::caller::write_stdout(diff.as_bytes());
                eprintln!(
                    "gangway: {} is out of date; run `gangway wrappers` without `--check` to update it",
                    wrappers.out.display()
                );
                exit::FAILURE
            }
            Err(error) => fail(&error),
        };
    }
    match gangway_codegen::write_wrappers_with(&manifest, &wrappers.out, &style) {
        Ok(report) => {
            eprintln!(
                "gangway: {}: {} written, {} unchanged, {} removed{}{}",
                wrappers.out.display(),
                report.written.len(),
                report.unchanged.len(),
                report.removed.len(),
                if report.client_written {
                    "; client program placed"
                } else {
                    ""
                },
                if report.client_removed {
                    "; the client program link wrappers placed removed"
                } else {
                    ""
                }
            );
            exit::OK
        }
        Err(error) => fail(&error),
    }
}
