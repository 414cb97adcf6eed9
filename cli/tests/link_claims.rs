//! Link wrappers' claims end to end: a command named like the client
//! (`gangway`) is refused before anything is written, a wrapper or the
//! placed client is replaced by a rename (a reader never sees half a
//! file), and a call costs the client one write for its hello and its
//! call together.

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use common::{GANGWAY_CLIENT, Host, Style, require, text};
use gangway::IpcCommand;
use gangway::ipc::IpcRouter;
use gangway::tool::{ParamSchema, ValueKind};
use gangway_codegen::wrappers::{WrapperError, WrapperStyle, write_wrappers_with};
use serde::Serialize;

/// A command that took the client's name.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "gangway", response = String)]
struct Named {}

impl Named {
    async fn handle(&mut self) -> String {
        String::new()
    }
}

/// Another, with a positional argument (so its schema can change).
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "hello", response = String)]
struct Hello {
    #[ipc(positional)]
    name: String,
}

impl Hello {
    async fn handle(&mut self) -> String {
        format!("hello {}", self.name)
    }
}

fn links(client: &Path) -> WrapperStyle {
    WrapperStyle::Links {
        client: client.to_path_buf(),
    }
}

#[test]
fn a_command_named_like_the_client_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let router = IpcRouter::new()
        .register(Hello {
            name: String::new(),
        })
        .register(Named {});
    let error = write_wrappers_with(
        &router.manifest(),
        dir.path(),
        &links(Path::new(GANGWAY_CLIENT)),
    )
    .unwrap_err();
    assert!(
        matches!(&error, WrapperError::ReservedName(name) if name == "gangway"),
        "{error}"
    );
    assert!(error.to_string().contains("gangway"), "{error}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing written: {left:?}");
    // Scripts have no client file to clash with.
    write_wrappers_with(&router.manifest(), dir.path(), &WrapperStyle::Scripts).unwrap();
    assert!(dir.path().join("gangway").exists());
}

fn inode(path: &Path) -> u64 {
    std::fs::symlink_metadata(path).unwrap().ino()
}

#[test]
fn a_changed_wrapper_and_a_changed_client_are_replaced_by_a_rename() {
    let dir = tempfile::tempdir().unwrap();
    let router = IpcRouter::new().register(Hello {
        name: String::new(),
    });
    write_wrappers_with(&router.manifest(), dir.path(), &WrapperStyle::Scripts).unwrap();
    let script = dir.path().join("hello");
    let first = (inode(&script), std::fs::read(&script).unwrap());
    // `hello` taking standard input changes its script.
    let mut changed = router.manifest();
    changed.commands[0] = changed.commands[0]
        .clone()
        .with_param(ParamSchema::new("input", ValueKind::Bytes).stdin());
    let report = write_wrappers_with(&changed, dir.path(), &WrapperStyle::Scripts).unwrap();
    assert_eq!(report.written, ["hello"]);
    let second = (inode(&script), std::fs::read(&script).unwrap());
    assert_ne!(first.1, second.1, "the script changed");
    assert_ne!(
        first.0, second.0,
        "replaced by a rename, not rewritten in place"
    );

    // Links: the placed client is swapped the same way when it changes.
    let links_dir = tempfile::tempdir().unwrap();
    let clients = tempfile::tempdir().unwrap();
    let client_a = clients.path().join("a");
    let client_b = clients.path().join("b");
    std::fs::copy(GANGWAY_CLIENT, &client_a).unwrap();
    let mut other = std::fs::read(GANGWAY_CLIENT).unwrap();
    other.extend_from_slice(b"\0another build");
    std::fs::write(&client_b, &other).unwrap();
    std::fs::set_permissions(
        &client_b,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    write_wrappers_with(&router.manifest(), links_dir.path(), &links(&client_a)).unwrap();
    let placed = links_dir.path().join("gangway");
    let before = inode(&placed);
    write_wrappers_with(&router.manifest(), links_dir.path(), &links(&client_b)).unwrap();
    assert_eq!(std::fs::read(&placed).unwrap(), other, "the new client");
    assert_ne!(before, inode(&placed), "placed by a rename");
    let names: Vec<_> = std::fs::read_dir(links_dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        names
            .iter()
            .all(|name| ["gangway", "hello", ".gangway-client-placed"].contains(&name.as_str())),
        "no temporary file left: {names:?}"
    );
}

/// The file descriptor an `strace` line's `connect` used, if the line is a
/// connect to the Unix socket at `socket`.
fn connected_fd<'a>(line: &'a str, socket: &str) -> Option<&'a str> {
    let call = line.split_once("connect(")?.1;
    (call.contains("AF_UNIX") && call.contains(socket)).then(|| call.split(',').next().unwrap())
}

#[test]
#[ignore = "needs strace"]
fn a_link_call_sends_its_hello_and_its_call_in_one_write() {
    require(&["strace"]);
    let host = Host::start_styled(Style::Links);
    let trace = tempfile::NamedTempFile::new().unwrap();
    let mut command = Command::new("strace");
    command
        .args(["-f", "-qq", "-s", "4096"])
        .args([
            "-e",
            "trace=connect,write,writev,sendto,sendmsg,read,recvfrom,recvmsg",
        ])
        .arg("-o")
        .arg(trace.path())
        .arg(host.wrapper("ping"));
    host.env().apply(&mut command);
    let out = common::run(command, None);
    assert_eq!(text(&out.stdout), "pong\n", "{}", text(&out.stderr));
    let trace = std::fs::read_to_string(trace.path()).unwrap();
    let gangway::ipc::Endpoint::Unix(socket) = host.env().endpoint().clone() else {
        panic!("a Unix socket")
    };
    let socket = socket.to_string_lossy().into_owned();
    let lines: Vec<&str> = trace.lines().collect();
    let (at, fd) = lines
        .iter()
        .enumerate()
        .find_map(|(at, line)| connected_fd(line, &socket).map(|fd| (at, fd)))
        .unwrap_or_else(|| panic!("no connect: {trace}"));
    // What the client did on the socket until it first read from it.
    let on_socket: Vec<&&str> = lines[at + 1..]
        .iter()
        .filter(|line| line.contains(&format!("({fd},")))
        .take_while(|line| !line.contains("read(") && !line.contains("recv"))
        .collect();
    assert_eq!(
        on_socket.len(),
        1,
        "one write before the first read: {trace}"
    );
    // The hello (with its token) and the call (naming `ping`) together.
    assert!(
        on_socket[0].contains("token") && on_socket[0].contains("ping"),
        "the hello and the call are in it: {}",
        on_socket[0]
    );
}

/// How many threads a link call started, as `strace -f` saw it.
fn threads_started(host: &Host, command: &str, args: &[&str]) -> usize {
    let trace = tempfile::NamedTempFile::new().unwrap();
    let mut strace = Command::new("strace");
    strace
        .args(["-f", "-qq", "-e", "trace=clone,clone3", "-o"])
        .arg(trace.path())
        .arg(host.wrapper(command))
        .args(args);
    host.env().apply(&mut strace);
    let out = common::run(strace, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let trace = std::fs::read_to_string(trace.path()).unwrap();
    trace
        .lines()
        .filter(|line| line.contains("clone(") || line.contains("clone3("))
        .count()
}

#[test]
#[ignore = "needs strace"]
fn a_call_answered_at_once_starts_no_signal_thread() {
    require(&["strace"]);
    let host = Host::start_styled(Style::Links);
    // The client watches for Ctrl-C only once a call has run for a
    // moment; a loaded machine may make any one call that slow, so of 20
    // one must have started no thread at all.
    let counts: Vec<usize> = (0..20)
        .map(|_| threads_started(&host, "ping", &[]))
        .collect();
    assert!(
        counts.contains(&0),
        "every call started a thread: {counts:?}"
    );
    // The watch does start for a call that runs longer.
    assert!(
        threads_started(&host, "sleep", &["300"]) > 0,
        "a slow call started no signal watch"
    );
}
