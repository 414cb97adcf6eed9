//! The `gangway` command.
//!
//! - `gangway call <command> [--stdin <arg>] -- <args...>`: the in-sandbox
//!   client every wrapper script runs. It sends the words untouched to the
//!   host named by `GANGWAY_ENDPOINT` (with `GANGWAY_TOKEN`), and prints the
//!   response and exits 0:
//!   - text ends with a newline (one is added when the command's `String`
//!     lacks it; empty text prints nothing), so calls in a row read line by
//!     line;
//!   - JSON (any structured response) ends with a newline, its keys in the
//!     order the response type serializes them; indented when stdout is a
//!     terminal, one compact line otherwise (as `jq` does);
//!   - bytes (`Vec<u8>`, `serde_bytes`) are written byte for byte, nothing
//!     added; `()` prints nothing.
//!
//!   Standard input: when the wrapper names a stdin argument, stdin is not a
//!   terminal, and the host says the call takes it (not for `--help`, a
//!   usage error, or the argument given explicitly as `--arg value`, which
//!   wins), stdin is read to its end and sent. Empty input is no input: with
//!   stdin on `/dev/null`, closed, or an empty pipe, an `Option` argument
//!   stays `None` and a required `String`/`Vec<u8>` one gets an empty value.
//!   A pipe that never closes is never read by a call that does not take it.
//!
//!   Exit codes: 1 when the handler failed, 2 for a usage error (or input
//!   too large to send), 69 when the host cannot be reached, 74 when
//!   standard input cannot be read.
//! - `gangway wrappers (--manifest <file> | --src <dir>) --out <dir> [--check]`
//! - `gangway manifest --src <dir>`
//! - `gangway reference (--manifest <file> | --src <dir>)`
//!
//! The library's [`run`] is the whole command, so a host binary can act as
//! its own client (a multi-call binary) instead of shipping this one.

use std::ffi::OsString;
use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use gangway::ipc::{ArgvOutcome, ClientError, IpcClient, protocol};
use gangway::tool::Manifest;

/// Exit code: the host could not be reached, or the exchange broke.
const EXIT_UNAVAILABLE: i32 = protocol::EXIT_UNAVAILABLE;
/// Exit code: a usage mistake.
const EXIT_USAGE: i32 = 2;

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
    /// Write (or check) a wrapper script per command.
    Wrappers(Wrappers),
    /// Print the manifest of a crate's commands, read from its source.
    Manifest(SourceOnly),
    /// Print a Markdown reference of the commands, for an agent's prompt.
    Reference(Source),
}

#[derive(Debug, Args)]
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
    /// Write nothing; exit 1 with a diff when the directory is out of date.
    #[arg(long)]
    check: bool,
}

/// Runs the `gangway` command with these arguments (the first is the
/// program name) and returns the exit code.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return error.exit_code();
        }
    };
    match cli.command {
        Command::Call(call) => run_call(call),
        Command::Wrappers(wrappers) => run_wrappers(wrappers),
        Command::Manifest(source) => match scan(&source.src) {
            Ok(manifest) => print_json(&manifest),
            Err(message) => fail(&message),
        },
        Command::Reference(source) => match load(&source) {
            Ok(manifest) => match gangway_codegen::render::Renderer::new().reference(&manifest) {
                Ok(text) => write_out(text.as_bytes()),
                Err(error) => fail(&error),
            },
            Err(message) => fail(&message),
        },
    }
}

fn fail(error: &dyn std::fmt::Display) -> i32 {
    eprintln!("gangway: {error}");
    1
}

fn write_out(bytes: &[u8]) -> i32 {
    let mut stdout = io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => 0,
        // A closed pipe (`cmd | head`) is not the command's failure.
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(error) => fail(&error),
    }
}

fn print_json(value: &impl serde::Serialize) -> i32 {
    match serde_json::to_string_pretty(value) {
        Ok(text) => write_out(format!("{text}\n").as_bytes()),
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
    if wrappers.check {
        return match gangway_codegen::check_wrappers(&manifest, &wrappers.out) {
            Ok(()) => 0,
            Err(gangway_codegen::wrappers::WrapperError::OutOfDate { diff }) => {
                let _ = write_out(diff.as_bytes());
                eprintln!(
                    "gangway: {} is out of date; run `gangway wrappers` without `--check` to update it",
                    wrappers.out.display()
                );
                1
            }
            Err(error) => fail(&error),
        };
    }
    match gangway_codegen::write_wrappers(&manifest, &wrappers.out) {
        Ok(report) => {
            eprintln!(
                "gangway: {}: {} written, {} unchanged, {} removed",
                wrappers.out.display(),
                report.written.len(),
                report.unchanged.len(),
                report.removed.len()
            );
            0
        }
        Err(error) => fail(&error),
    }
}

fn run_call(call: Call) -> i32 {
    let mut words = Vec::with_capacity(call.args.len());
    for (index, arg) in call.args.into_iter().enumerate() {
        match arg.into_string() {
            Ok(word) => words.push(word),
            Err(arg) => {
                eprintln!(
                    "{}: argument {} ({}) is not UTF-8 text, which commands cannot take",
                    call.command,
                    index + 1,
                    arg.to_string_lossy()
                );
                return EXIT_USAGE;
            }
        }
    }
    let mut client = match IpcClient::from_env() {
        Ok(client) => client,
        Err(error) => return report_error(&call.command, &error),
    };
    // The host decides whether stdin is used (not for help, a usage error,
    // or a stdin argument given explicitly); it is read only then, so a pipe
    // that never closes blocks only a command that reads it.
    let piped = call.stdin.is_some() && stdin_is_piped();
    let outcome = if piped {
        client.call_argv_piped(&call.command, &words, read_stdin)
    } else {
        client.call_argv(&call.command, &words, None)
    };
    match outcome {
        Ok(ArgvOutcome::Help(text)) => write_out(text.as_bytes()),
        Ok(ArgvOutcome::Response(payload)) => print_response(&call.command, &payload),
        Ok(_) => 0,
        Err(error) => report_error(&call.command, &error),
    }
}

/// Whether standard input is something to read: not a terminal. (A
/// closed descriptor is reopened on `/dev/null` by Rust's runtime, so it
/// reads as empty input.)
fn stdin_is_piped() -> bool {
    !io::stdin().is_terminal()
}

/// Standard input, whole, or one byte more than `room` when it does not
/// fit (the client refuses that).
fn read_stdin(room: usize) -> Result<Vec<u8>, ClientError> {
    let mut bytes = Vec::new();
    io::stdin()
        .lock()
        .take(room as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(ClientError::Stdin)?;
    Ok(bytes)
}

fn report_error(command: &str, error: &ClientError) -> i32 {
    match error.remote() {
        Some(remote) => {
            eprintln!("{}", remote.message);
            if matches!(remote.kind.as_str(), "usage" | "invalid_params") {
                eprintln!("try `{command} --help` for the arguments it takes");
            }
            remote.exit
        }
        None => {
            eprintln!("{command}: {error}");
            error.exit_code()
        }
    }
}

/// Prints a response: a string as text ending with a newline (one added
/// when missing; empty text prints nothing), `()`/null as nothing, binary
/// byte for byte, anything else as JSON ending with a newline.
fn print_response(command: &str, payload: &[u8]) -> i32 {
    let value = match rmpv::decode::read_value(&mut &payload[..]) {
        Ok(value) => value,
        Err(error) => {
            eprintln!("{command}: the response is not MessagePack: {error}");
            return EXIT_UNAVAILABLE;
        }
    };
    match value {
        rmpv::Value::Nil => 0,
        rmpv::Value::String(text) => write_out(&text_line(text.as_bytes())),
        rmpv::Value::Binary(bytes) => write_out(&bytes),
        other => match json_text(&other, io::stdout().is_terminal()) {
            Ok(text) => write_out(&text),
            Err(error) => {
                eprintln!("{command}: the response cannot be shown as JSON: {error}");
                EXIT_UNAVAILABLE
            }
        },
    }
}

/// Text as a shell prints it: ending with one newline, added when missing,
/// so calls in a row read line by line. Empty text prints nothing.
fn text_line(text: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if text.is_empty() || text.ends_with(b"\n") {
        std::borrow::Cow::Borrowed(text)
    } else {
        let mut line = Vec::with_capacity(text.len() + 1);
        line.extend_from_slice(text);
        line.push(b'\n');
        std::borrow::Cow::Owned(line)
    }
}

/// A MessagePack value written as JSON with its map entries in the order
/// they arrived, which is the order the response type serializes its
/// fields (going through `serde_json::Map` would sort them).
struct InOrder<'a>(&'a rmpv::Value);

impl serde::Serialize for InOrder<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            rmpv::Value::Nil => serializer.serialize_unit(),
            rmpv::Value::Boolean(b) => serializer.serialize_bool(*b),
            rmpv::Value::Integer(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => serializer.serialize_i64(i),
                (None, Some(u)) => serializer.serialize_u64(u),
                _ => serializer.serialize_unit(),
            },
            // JSON has no NaN or infinity: serde_json writes them as null.
            rmpv::Value::F32(x) => serializer.serialize_f64(f64::from(*x)),
            rmpv::Value::F64(x) => serializer.serialize_f64(*x),
            rmpv::Value::String(text) => {
                serializer.serialize_str(&String::from_utf8_lossy(text.as_bytes()))
            }
            rmpv::Value::Binary(bytes) | rmpv::Value::Ext(_, bytes) => {
                let mut seq = serializer.serialize_seq(Some(bytes.len()))?;
                for byte in bytes {
                    seq.serialize_element(byte)?;
                }
                seq.end()
            }
            rmpv::Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&InOrder(item))?;
                }
                seq.end()
            }
            rmpv::Value::Map(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    match key {
                        rmpv::Value::String(text) => map.serialize_entry(
                            &*String::from_utf8_lossy(text.as_bytes()),
                            &InOrder(value),
                        )?,
                        // JSON keys are text: any other key as its JSON.
                        other => {
                            let key = serde_json::to_string(&InOrder(other))
                                .map_err(serde::ser::Error::custom)?;
                            map.serialize_entry(&key, &InOrder(value))?
                        }
                    }
                }
                map.end()
            }
        }
    }
}

/// A structured response as JSON ending with a newline: indented for a
/// person at a terminal, one compact line on a pipe, as `jq` does.
fn json_text(value: &rmpv::Value, pretty: bool) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = if pretty {
        serde_json::to_vec_pretty(&InOrder(value))?
    } else {
        serde_json::to_vec(&InOrder(value))?
    };
    out.push(b'\n');
    Ok(out)
}
