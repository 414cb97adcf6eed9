//! The in-sandbox client: what a wrapper runs for one call, so a host
//! binary can be its own client (a multi-call binary) without shipping the
//! `gangway` CLI into the sandbox. A script wrapper runs
//! `<client> call <command> [--stdin <arg>] -- <args...>`; a link wrapper
//! (`search -> gangway`) runs the client under the command's name, and the
//! words that follow are the command's.
//!
//! At the top of the host's `main`:
//!
//! ```no_run
//! // Wrappers run `$GANGWAY_BIN call <command> -- <args...>`, with
//! // GANGWAY_BIN naming this program (`IpcServer::builder().client_bin`).
//! if let Some(code) = gangway::caller::run_if_call(std::env::args_os()) {
//!     std::process::exit(code);
//! }
//! // ...the host's own work: the router, the server, the sandbox.
//! ```
//!
//! A call sends the words untouched to the host named by
//! `GANGWAY_ENDPOINT` (with `GANGWAY_TOKEN`), prints the response and exits
//! 0:
//! - text ends with a newline (one is added when the command's `String`
//!   lacks it; empty text prints nothing), so calls in a row read line by
//!   line;
//! - JSON (any structured response) ends with a newline, its keys in the
//!   order the response type serializes them; indented when stdout is a
//!   terminal, one compact line otherwise (as `jq` does);
//! - bytes (`Vec<u8>`, `Box<[u8]>`, `serde_bytes`) are written byte for
//!   byte, nothing added; `()` prints nothing.
//!
//! Standard input: when the wrapper names a stdin argument, stdin is not a
//! terminal, and the host says the call takes it (not for `--help`, a usage
//! error, or the argument given explicitly as `--arg value`, which wins),
//! stdin is read to its end and sent. Empty input is no input: with stdin
//! on `/dev/null`, closed, or an empty pipe, an `Option` argument stays
//! `None` and a required `String`/`Vec<u8>` one gets an empty value. A pipe
//! that never closes is never read by a call that does not take it. A
//! command whose stdin argument is an
//! [`InputStream`](crate::ipc::InputStream) gets the input as it is read,
//! chunk by chunk, with no size limit (`tail -f log | host-grep ERROR`).
//!
//! Output the handler streams (`CallContext::stdout`/`stderr`) is written
//! as it arrives, before the response; a reader that leaves (`cmd | head
//! -1`) ends the call. Progress shows as a self-updating line when stderr
//! is a terminal, as `progress: 40/100 building` lines with
//! `GANGWAY_PROGRESS=lines`, and not at all with `GANGWAY_PROGRESS=off`.
//!
//! SIGINT (Ctrl-C), SIGTERM and SIGHUP cancel the call on the host; the
//! client waits up to the host's cancel grace for it to stop, then exits
//! 128 + the signal's number. A second signal exits at once. (The watch
//! starts once a call has run 10 ms without an answer, or sends output,
//! progress or asks for input: before that a signal ends the client as it
//! ends any program, and the host sees its caller leave.)
//!
//! Exit codes ([`ipc::exit`](crate::ipc::exit)): 1 when the handler
//! failed, 2 for a usage error (or input too large to send), 69 when the
//! host cannot be reached (or speaks another protocol version), 74 when
//! standard input cannot be read, 77 when the call is not allowed (outside
//! the sandbox's scope, refused by the host's guard, access expired or
//! revoked), 124 when the call timed out, 128+n when
//! signal n ended it.

use std::ffi::OsString;
use std::io::{self, IsTerminal, Read, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::ipc::protocol::OutputStream;
use crate::ipc::{ArgvOutcome, CallEvent, ClientError, IpcClient, exit};

mod list;
mod print;
mod progress;
mod say;
mod signals;

use print::print_response;
pub use print::write_stdout;
pub use progress::ENV_PROGRESS;
use progress::ProgressView;
use say::report_error;
pub use say::say;
use signals::SignalWatch;

/// How long a call runs before the client starts watching for Ctrl-C.
const SLOW_CALL: Duration = Duration::from_millis(10);

/// How to call the client, for its usage errors.
const USAGE: &str = "call <command> [--stdin <arg>] [--] <args...>";

/// The exit codes, as `--help` lists them: [`exit::HELP`],
/// made from the one table of them.
pub const EXIT_CODES: &str = crate::exit::HELP;

/// One parsed `call`.
#[derive(Debug, PartialEq)]
struct Call {
    command: String,
    stdin: Stdin,
    args: Vec<OsString>,
}

/// Whether the call may send standard input.
#[derive(Debug, PartialEq)]
enum Stdin {
    /// No stdin argument: never read.
    Unused,
    /// A script wrapper named the argument (`--stdin <arg>`).
    Named(String),
    /// Run through a link: the host knows the command's stdin argument,
    /// and asks for the input only when the call takes it.
    AskHost,
}

/// Runs the client with these arguments (the first is the name it was run
/// as) and returns the exit code. Run through a link wrapper (a symbolic
/// link `search -> gangway`, found by that path or on `PATH`), the rest are
/// that command's words; otherwise the second is the client's subcommand:
/// `call`, or `--version`/`--help`.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let mut args = args.into_iter().map(Into::into);
    let argv0 = args.next().unwrap_or_else(|| OsString::from("gangway"));
    if let Some(command) = link_name(&argv0) {
        return run_call(Call {
            command,
            stdin: Stdin::AskHost,
            args: args.collect(),
        });
    }
    let program = file_name(&argv0).unwrap_or("gangway").to_owned();
    let mut args = args.peekable();
    match args.peek().and_then(|arg| arg.to_str()) {
        Some("--version" | "-V") => {
            return write_stdout(format!("gangway {}\n", env!("CARGO_PKG_VERSION")).as_bytes());
        }
        Some("--help" | "-h") => return print_help(&program),
        Some("list") => {
            let words: Vec<String> = args
                .skip(1)
                .map(|word| word.to_string_lossy().into_owned())
                .collect();
            return list::run_list(&program, &words);
        }
        // The lean client leaves the MCP server out; `gangway` has it.
        Some("mcp") => {
            say(format!(
                "{program} mcp: this client program has no MCP server; run the `gangway` \
                 program as `gangway mcp` (place it in the sandbox with \
                 `gangway wrappers --style links --client <path to gangway>`)"
            ));
            return exit::USAGE;
        }
        _ => {}
    }
    match parse_call(args) {
        Ok(Some(call)) => run_call(call),
        Ok(None) => print_help(&program),
        Err(message) => {
            say(format!("{program}: {message}\nusage: {program} {USAGE}"));
            exit::USAGE
        }
    }
}

/// What a person trying the client by hand asks: how to call it.
fn print_help(program: &str) -> i32 {
    write_stdout(
        format!(
            "Call a host command (what wrappers run).\n\n\
             Usage: {program} {USAGE}\n       \
             {program} {list_usage}  (the commands this sandbox may call)\n       \
             <command> <args...>  (run through a link named after the command)\n\n\
             {EXIT_CODES}",
            list_usage = list::USAGE,
        )
        .as_bytes(),
    )
}

/// If `args` are a client call, runs it and gives its exit code: `<program>
/// call ...` (what a script wrapper runs), `<program> list` inside a sandbox
/// whose client this program is (`GANGWAY_TOKEN` or `GANGWAY_TOKEN_FILE`
/// set, `GANGWAY_BIN` naming
/// it), or a run through a link wrapper
/// (`search -> gangway`). `None` otherwise, for a host binary that is its
/// own client to go on with its own work.
pub fn run_if_call<I, T>(args: I) -> Option<i32>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let through_link = args.first().and_then(link_name).is_some();
    let listing = || {
        (std::env::var_os(crate::ipc::ENV_TOKEN).is_some()
            || std::env::var_os(crate::ipc::ENV_TOKEN_FILE).is_some())
            && is_the_client()
    };
    (through_link
        || args
            .get(1)
            .is_some_and(|arg| arg == "call" || (arg == "list" && listing())))
    .then(|| run(args))
}

/// Whether `GANGWAY_BIN` names this program: a host binary with a `list`
/// of its own keeps it unless it is the sandbox's client.
fn is_the_client() -> bool {
    let bin = std::env::var_os(crate::ipc::ENV_BIN).map(std::path::PathBuf::from);
    let me = std::env::current_exe().ok();
    match (bin, me) {
        (Some(bin), Some(me)) => {
            let canonical = |path: &std::path::Path| std::fs::canonicalize(path).ok();
            canonical(&bin).is_some_and(|bin| Some(bin) == canonical(&me))
        }
        _ => false,
    }
}

/// The last component of a path, when it is UTF-8.
fn file_name(path: &OsString) -> Option<&str> {
    std::path::Path::new(path).file_name()?.to_str()
}

/// The command a link wrapper names: the name the program was run as, when
/// that is a command name and a symbolic link to exactly
/// [`CLIENT_FILE`](gangway_codegen::CLIENT_FILE) (what link wrappers are),
/// looked up as given when it holds a `/`, else on `PATH` as the shell did.
/// Nothing else counts: a host binary started through a symbolic link of
/// its own, or the client through an alias, is not taken for a call.
fn link_name(argv0: &OsString) -> Option<String> {
    let name = file_name(argv0)?;
    let command_like = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !command_like || name == gangway_codegen::CLIENT_FILE {
        return None;
    }
    let path = std::path::Path::new(argv0);
    let found = if argv0.to_string_lossy().contains('/') {
        path.to_path_buf()
    } else {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|dir| dir.join(name))
            .find(|candidate| std::fs::symlink_metadata(candidate).is_ok())?
    };
    let target = std::fs::read_link(found).ok()?;
    (target == std::path::Path::new(gangway_codegen::CLIENT_FILE)).then(|| name.to_owned())
}

/// Reads `call <command> [--stdin <arg>] [--] <args...>`; `Ok(None)` for
/// `call --help`. Options are read only before the command's own words.
fn parse_call(mut args: impl Iterator<Item = OsString>) -> Result<Option<Call>, String> {
    match args.next() {
        Some(word) if word == "call" => {}
        Some(word) => {
            return Err(format!(
                "unknown subcommand `{}`; this client only makes calls",
                word.to_string_lossy()
            ));
        }
        None => return Err("missing the subcommand `call`".to_owned()),
    }
    let mut command = None;
    let mut stdin = Stdin::Unused;
    let mut rest = Vec::new();
    while let Some(word) = args.next() {
        let text = word.to_str();
        match text {
            Some("--") => {
                rest.extend(args.by_ref());
                break;
            }
            Some("--help" | "-h") if command.is_none() => return Ok(None),
            Some("--stdin") => match args.next().map(OsString::into_string) {
                Some(Ok(arg)) => stdin = Stdin::Named(arg),
                Some(Err(_)) => {
                    return Err("`--stdin` names an argument: it must be UTF-8 text".to_owned());
                }
                None => {
                    return Err(
                        "`--stdin` needs the name of an argument, as in `--stdin text`".to_owned(),
                    );
                }
            },
            Some(option) if option.starts_with("--stdin=") => {
                stdin = Stdin::Named(option["--stdin=".len()..].to_owned());
            }
            Some(name) if command.is_none() && !name.starts_with('-') => {
                command = Some(name.to_owned())
            }
            _ if command.is_some() => {
                // The command's own words begin: untouched from here on.
                rest.push(word);
                rest.extend(args.by_ref());
                break;
            }
            _ => {
                return Err(format!(
                    "expected a command name, found `{}`",
                    word.to_string_lossy()
                ));
            }
        }
    }
    let Some(command) = command else {
        return Err("missing the command to call".to_owned());
    };
    Ok(Some(Call {
        command,
        stdin,
        args: rest,
    }))
}

fn run_call(call: Call) -> i32 {
    let mut words = Vec::with_capacity(call.args.len());
    for (index, arg) in call.args.into_iter().enumerate() {
        match arg.into_string() {
            Ok(word) => words.push(word),
            Err(arg) => {
                say(format!(
                    "{}: argument {} ({}) is not UTF-8 text, which commands cannot take",
                    call.command,
                    index + 1,
                    arg.to_string_lossy()
                ));
                return exit::USAGE;
            }
        }
    }
    // The hello leaves with the call: one round trip for most calls.
    let mut client = match IpcClient::from_env_deferred() {
        Ok(client) => client,
        Err(error) => return report_error(&call.command, &error),
    };
    // Ctrl-C, SIGTERM and SIGHUP cancel the call on the host, once it has
    // run for a moment: a call answered at once pays nothing for it (a
    // signal before then ends the client as it would any program, and the
    // host sees its caller leave).
    let signals: Arc<Mutex<Option<SignalWatch>>> = Arc::default();
    let watch = signals.clone();
    let canceller = client.canceller();
    let command = call.command.clone();
    client.on_slow_call(SLOW_CALL, move || {
        let mut watch = watch.lock().unwrap_or_else(PoisonError::into_inner);
        if watch.is_some() {
            return;
        }
        match SignalWatch::start(canceller.clone()) {
            Ok(started) => *watch = Some(started),
            Err(error) => say(format!("{command}: cannot watch for signals: {error}")),
        }
    });
    // The host decides whether stdin is used (not for help, a usage error,
    // or a stdin argument given explicitly); it is read only then, so a pipe
    // that never closes blocks only a command that reads it.
    let piped = call.stdin != Stdin::Unused && stdin_is_piped();
    let stdin: Option<Box<dyn Read + Send>> = piped.then(|| Box::new(io::stdin()) as _);
    let mut progress = ProgressView::from_env();
    // Set when our own reader left (`cmd | head -1`), which is not a
    // failure; a broken connection to the host is.
    let mut reader_left = false;
    let outcome = client.call_argv_streaming(&call.command, &words, stdin, &mut |event| {
        match event {
            CallEvent::Output { stream, data } => {
                progress.suspend(data.ends_with(b"\n"), || match stream {
                    OutputStream::Stdout => {
                        let mut stdout = io::stdout().lock();
                        let written = stdout.write_all(&data).and_then(|()| stdout.flush());
                        reader_left =
                            matches!(&written, Err(e) if e.kind() == io::ErrorKind::BrokenPipe);
                        written
                    }
                    // Standard error is a person's: a failed write is not worth
                    // ending the call for.
                    OutputStream::Stderr => {
                        let _ = io::stderr().lock().write_all(&data);
                        Ok(())
                    }
                })
            }
            CallEvent::Progress {
                done,
                total,
                message,
            } => {
                progress.update(done, total, message);
                Ok(())
            }
        }
    });
    progress.finish();
    // Interrupted: whatever the host answered, exit as the signal says.
    let caught = signals
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .and_then(SignalWatch::caught);
    if let Some(signal) = caught {
        return exit::signal(signal);
    }
    match outcome {
        // Help is the host's text for a person: shown safely, as messages are.
        Ok(ArgvOutcome::Help(text)) => write_stdout(say::shown(&text).as_bytes()),
        Ok(ArgvOutcome::Response(payload)) => print_response(&call.command, &payload),
        // The reader of our output left (`cmd | head -1`): not a failure;
        // closing the connection tells the host to stop.
        Err(ClientError::Io(_)) if reader_left => exit::OK,
        Err(error) => report_error(&call.command, &error),
    }
}

/// Whether standard input is something to read: not a terminal. (A
/// closed descriptor is reopened on `/dev/null` by Rust's runtime, so it
/// reads as empty input.)
fn stdin_is_piped() -> bool {
    !io::stdin().is_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Result<Option<Call>, String> {
        parse_call(words.iter().map(OsString::from))
    }

    fn call(command: &str, stdin: Option<&str>, args: &[&str]) -> Option<Call> {
        Some(Call {
            command: command.to_owned(),
            stdin: stdin.map_or(Stdin::Unused, |name| Stdin::Named(name.to_owned())),
            args: args.iter().map(OsString::from).collect(),
        })
    }

    #[test]
    fn a_wrappers_words_parse_and_the_commands_own_stay_untouched() {
        assert_eq!(
            parse(&[
                "call", "search", "--stdin", "context", "--", "-n", "5", "--", "x"
            ]),
            Ok(call("search", Some("context"), &["-n", "5", "--", "x"]))
        );
        assert_eq!(
            parse(&["call", "search", "--stdin=context", "--"]),
            Ok(call("search", Some("context"), &[]))
        );
        assert_eq!(
            parse(&["call", "search", "rust", "--stdin", "x"]),
            Ok(call("search", None, &["rust", "--stdin", "x"]))
        );
        assert_eq!(
            parse(&["call", "search", "--help"]),
            Ok(call("search", None, &["--help"]))
        );
        assert_eq!(parse(&["call", "--help"]), Ok(None));
    }

    #[test]
    fn mistakes_are_named() {
        assert_eq!(parse(&[]).unwrap_err(), "missing the subcommand `call`");
        assert!(
            parse(&["wrappers"])
                .unwrap_err()
                .contains("unknown subcommand `wrappers`")
        );
        assert_eq!(parse(&["call"]).unwrap_err(), "missing the command to call");
        assert_eq!(
            parse(&["call", "--", "x"]).unwrap_err(),
            "missing the command to call"
        );
        assert!(
            parse(&["call", "x", "--stdin"])
                .unwrap_err()
                .contains("needs the name")
        );
        assert!(
            parse(&["call", "-x"])
                .unwrap_err()
                .contains("expected a command name")
        );
    }

    #[test]
    fn run_if_call_runs_only_a_call() {
        // Run under its own name, as a host binary is.
        let exe = std::env::current_exe().unwrap();
        let host = exe.file_name().unwrap().to_str().unwrap();
        assert_eq!(run_if_call([host, "--verbose"]), None);
        assert_eq!(run_if_call([host]), None);
        // A call with nothing to call is a usage error, not "not a call".
        assert_eq!(run_if_call([host, "call"]), Some(exit::USAGE));
    }

    #[test]
    fn a_link_is_a_symbolic_link_to_the_client_file() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| OsString::from(dir.path().join(name));
        std::fs::write(dir.path().join("gangway"), b"").unwrap();
        for (name, target) in [
            ("search", "gangway"),
            ("call", "gangway"),
            ("web_search", "gangway"),
            ("alias", "/usr/bin/gangway"),
            ("other", "gangway-client"),
            ("9lives", "gangway"),
        ] {
            std::os::unix::fs::symlink(target, dir.path().join(name)).unwrap();
        }
        for command in ["search", "call", "web_search"] {
            assert_eq!(link_name(&at(command)).as_deref(), Some(command));
        }
        for not_a_link in ["alias", "other", "9lives", "gangway", "missing"] {
            assert_eq!(link_name(&at(not_a_link)), None, "{not_a_link}");
        }
        let exe = std::env::current_exe().unwrap();
        assert_eq!(link_name(&exe.into_os_string()), None, "its own name");
    }
}
