//! The walls of a sandbox, tried as an attacker would: a shell inside
//! `Bwrap::command` and inside `Bwrap::prefix` (through `LaunchSpec` and a
//! controller) tries to win back capabilities, remount what it was given
//! read-only, make namespaces of its own, call what the seccomp filter
//! refuses, reach another scope's socket and take over its own; the host's
//! files, sockets and other sandboxes are then checked unchanged and
//! served. Run as root (as CI and most agent containers run) and, through
//! `setpriv`, as an unprivileged user.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::authority::{Scoped, scoped};
use common::{Host, require, text};
use gangway::controller::{
    Controller, LaunchSpec, OutputEvent, ShellController, SubprocessController,
};
use gangway::ipc::{Bwrap, Endpoint, IpcServer, SandboxEnv, Scope};

const ATTACK: &str = include_str!("data/attack.sh");

/// The system calls the attack script tries, by the names it uses.
const SYSCALLS: &[(&str, libc::c_long)] = &[
    ("keyctl", libc::SYS_keyctl),
    ("add_key", libc::SYS_add_key),
    ("request_key", libc::SYS_request_key),
    ("bpf", libc::SYS_bpf),
    ("perf_event_open", libc::SYS_perf_event_open),
    ("userfaultfd", libc::SYS_userfaultfd),
    ("kexec_load", libc::SYS_kexec_load),
    ("open_by_handle_at", libc::SYS_open_by_handle_at),
    ("unshare", libc::SYS_unshare),
    ("clone", libc::SYS_clone),
    ("setns", libc::SYS_setns),
    ("mount", libc::SYS_mount),
    ("umount2", libc::SYS_umount2),
    ("pivot_root", libc::SYS_pivot_root),
    ("fsopen", libc::SYS_fsopen),
    ("open_tree", libc::SYS_open_tree),
    ("fspick", libc::SYS_fspick),
    ("clone3", libc::SYS_clone3),
    ("io_uring_setup", libc::SYS_io_uring_setup),
    ("ptrace", libc::SYS_ptrace),
];

/// What every attempt must come to: the walls held.
fn expected() -> BTreeMap<String, String> {
    let eperm = libc::EPERM.to_string();
    let enosys = libc::ENOSYS.to_string();
    let mut expected: BTreeMap<String, String> = [
        ("caps", "0000000000000000"),
        ("seccomp", "2"),
        ("served", "hello walls"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    for held in [
        "remount-client",
        "write-client",
        "remount-wrappers",
        "plant-wrapper",
        "mount-tmpfs",
        "read-secrets",
        "nested-userns",
        "nested-mountns",
        "see-other-socket",
        "plant-socket-dir",
        "link-socket-dir",
        "bind-socket",
        "move-socket",
    ] {
        expected.insert(held.to_owned(), "held".to_owned());
    }
    for refused in [
        "keyctl",
        "add_key",
        "request_key",
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "kexec_load",
        "open_by_handle_at",
        "unshare-user",
        "unshare-mount",
        "clone-newuser",
        "setns",
        "mount",
        "umount2",
        "pivot_root",
        "fsopen",
        "open_tree",
        "fspick",
        "tiocsti",
        "tioclinux",
    ] {
        expected.insert(refused.to_owned(), eperm.clone());
    }
    // Refused as absent, so that programs fall back (glibc's threads to
    // `clone`, io_uring users to plain reads and writes).
    expected.insert("clone3".to_owned(), enosys.clone());
    expected.insert("io_uring_setup".to_owned(), enosys);
    // The host's processes are not in the sandbox's pid namespace.
    expected.insert("ptrace-host".to_owned(), libc::ESRCH.to_string());
    expected
}

/// A host with two scopes, and a copy of the client binary of its own
/// (an attack that succeeds must not break the other tests' client).
struct Arena {
    host: Host,
    client: PathBuf,
    attacker: Scoped,
    bystander: Scoped,
    _dir: tempfile::TempDir,
}

impl Arena {
    fn new() -> Arena {
        let dir = tempfile::tempdir().unwrap();
        let client = dir.path().join("gangway-client");
        std::fs::copy(common::GANGWAY_CLIENT, &client).unwrap();
        let host = Host::start_with_client(IpcServer::builder(), &client);
        let attacker = scoped(&host, Scope::new("attacker"));
        let bystander = scoped(&host, Scope::new("bystander"));
        Arena {
            host,
            client,
            attacker,
            bystander,
            _dir: dir,
        }
    }

    /// The attack script's arguments.
    fn attack_args(&self) -> Vec<String> {
        let mut args = vec![
            "attack".to_owned(),
            self.client.display().to_string(),
            self.attacker
                .env
                .wrapper_dir()
                .unwrap()
                .display()
                .to_string(),
            socket_of(&self.bystander.env).display().to_string(),
            std::process::id().to_string(),
            host_secrets().join("\n"),
        ];
        args.extend(SYSCALLS.iter().map(|(name, nr)| format!("{name}={nr}")));
        args
    }

    /// What the host keeps that a sandbox must not change: the client
    /// binary's bytes, and every file in the wrapper and socket directories.
    fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        files.insert(self.client.clone(), std::fs::read(&self.client).unwrap());
        let mut dirs = vec![self.host.wrappers.path().to_path_buf()];
        for env in [&self.attacker.env, &self.bystander.env] {
            dirs.push(env.wrapper_dir().unwrap().to_path_buf());
            dirs.push(socket_of(env).parent().unwrap().to_path_buf());
        }
        dirs.push(socket_of(&self.host.env()).parent().unwrap().to_path_buf());
        for dir in dirs {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let content = if path.is_file() {
                    std::fs::read(&path).unwrap()
                } else {
                    Vec::new()
                };
                files.insert(path, content);
            }
        }
        files
    }

    /// Both scopes answer a call from the host's side.
    fn both_served(&self) {
        self.both_served_but("");
    }

    /// Both scopes but `lapsed` answer a call from the host's side.
    fn both_served_but(&self, lapsed: &str) {
        for (env, who) in [
            (&self.attacker.env, "attacker"),
            (&self.bystander.env, "bystander"),
        ] {
            if who != lapsed {
                let (code, stderr) = common::authority::call(env, &["call", "greet", "--", who]);
                assert_eq!(code, Some(0), "{who}'s scope is still served: {stderr}");
            }
        }
    }
}

/// The files under `/etc` no other user of this host may read: without
/// read permission for others, or under a directory others may not enter
/// (found with `find`, apart from how the profile finds them).
fn host_secrets() -> Vec<String> {
    let find = |args: &[&str]| -> Vec<String> {
        let out = std::process::Command::new("find")
            .args(args)
            .output()
            .unwrap();
        text(&out.stdout).lines().map(str::to_owned).collect()
    };
    let mut files = find(&["/etc", "-type", "f", "!", "-perm", "-o=r"]);
    for dir in find(&["/etc", "-type", "d", "!", "-perm", "-o=x"]) {
        files.extend(find(&[&dir, "-type", "f"]));
    }
    files.sort();
    files.dedup();
    // /etc/shadow at least: else the attack would read nothing.
    assert!(files.iter().any(|f| f == "/etc/shadow"), "{files:?}");
    files
}

/// The Unix socket a sandbox environment names.
fn socket_of(env: &SandboxEnv) -> PathBuf {
    match env.endpoint() {
        Endpoint::Unix(path) => path.clone(),
        Endpoint::Tcp(addr) => panic!("a Unix socket, not {addr}"),
    }
}

/// The `name:outcome` lines the attack printed, checked against what
/// holding walls give; a test fails listing every wall that leaked.
fn check_outcomes(how: &str, stdout: &str, stderr: &str) {
    let seen: BTreeMap<String, String> = stdout
        .lines()
        .filter_map(|line| line.split_once(':'))
        .map(|(name, outcome)| (name.to_owned(), outcome.to_owned()))
        .collect();
    let leaks: Vec<String> = expected()
        .into_iter()
        .filter(|(name, want)| seen.get(name) != Some(want))
        .map(|(name, want)| format!("  {name}: {:?}, not {want:?}", seen.get(&name)))
        .collect();
    assert!(
        leaks.is_empty(),
        "{how} (uid {}): the walls leaked:\n{}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        unsafe_free_uid(),
        leaks.join("\n")
    );
}

/// This process's real uid, read from `/proc`.
fn unsafe_free_uid() -> String {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().next())
        .unwrap_or("?")
        .to_owned()
}

#[test]
#[ignore = "needs bubblewrap"]
fn a_shell_in_bwrap_command_cannot_escape_or_reach_another_scope() {
    require(&["bwrap", "perl"]);
    let arena = Arena::new();
    let before = arena.snapshot();
    let mut command = Bwrap::new(&arena.attacker.env)
        .command("sh", ["-c", ATTACK])
        .unwrap();
    command.args(&arena.attack_args()[..]);
    let out = common::run(command, None);
    check_outcomes("Bwrap::command", &text(&out.stdout), &text(&out.stderr));
    assert!(
        out.status.success(),
        "the attack ran to its end: {}",
        text(&out.stderr)
    );
    assert_eq!(arena.snapshot(), before, "the host's files are unchanged");
    arena.both_served();
}

#[test]
#[ignore = "needs bubblewrap"]
fn a_shell_under_a_bwrap_prefix_cannot_escape_or_reach_another_scope() {
    require(&["bwrap", "perl"]);
    let arena = Arena::new();
    let before = arena.snapshot();
    let env = &arena.attacker.env;
    let spec = LaunchSpec::new("sh")
        .arg("-c")
        .arg(ATTACK)
        .args(arena.attack_args())
        .prefix(Bwrap::new(env).prefix().unwrap())
        .sandbox_env(env);
    let (stdout, stderr, code) = run_controlled(&arena.host, spec);
    check_outcomes("Bwrap::prefix through LaunchSpec", &stdout, &stderr);
    assert_eq!(code, Some(0), "the attack ran to its end: {stderr}");
    assert_eq!(arena.snapshot(), before, "the host's files are unchanged");
    arena.both_served();
}

/// Runs `spec` under a `SubprocessController` to its end: its stdout,
/// stderr and exit code.
fn run_controlled(host: &Host, spec: LaunchSpec) -> (String, String, Option<i32>) {
    host.runtime.block_on(async {
        let process = SubprocessController::new("attacker", spec);
        let mut events = process.subscribe();
        process.start(Default::default(), None, false).unwrap();
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        loop {
            let event = tokio::time::timeout(Duration::from_secs(120), events.recv())
                .await
                .expect("the sandbox ends")
                .expect("the hub is open");
            match event {
                OutputEvent::Output { stream, data } => match stream {
                    gangway::controller::OutputSource::Stderr => stderr.extend(data),
                    _ => stdout.extend(data),
                },
                OutputEvent::Exit(exit) => return (text(&stdout), text(&stderr), exit.code),
            }
        }
    })
}

#[test]
#[ignore = "needs bubblewrap"]
fn a_bind_of_the_users_cannot_show_again_what_etc_hides() {
    require(&["bwrap"]);
    let arena = Arena::new();
    let secrets = host_secrets();
    // /etc at another place, and a part of it at its own.
    let bwrap =
        Bwrap::new(&arena.attacker.env)
            .ro_bind("/etc/ssl")
            .args(["--ro-bind", "/etc", "/mnt/etc"]);
    let script = "for file in \"$@\"; do \
                  for place in \"$file\" \"/mnt$file\"; do \
                  if /usr/bin/head -c 1 \"$place\" >/dev/null 2>&1; then echo \"read $place\"; fi; \
                  done; done; echo checked";
    let mut command = bwrap.command("sh", ["-c", script, "sh"]).unwrap();
    command.args(&secrets);
    let out = common::run(command, None);
    assert_eq!(
        text(&out.stdout),
        "checked\n",
        "what no other user may read was read ({} files tried): {}",
        secrets.len(),
        text(&out.stderr)
    );
}

#[test]
#[ignore = "needs bubblewrap"]
fn a_descriptor_the_host_leaked_does_not_reach_the_sandbox() {
    use std::os::fd::AsRawFd;
    require(&["bwrap"]);
    let arena = Arena::new();
    let env = &arena.attacker.env;
    // Open without close-on-exec, as a careless host (or whatever started
    // it) leaves a descriptor.
    let file = std::fs::File::open(&arena.client).unwrap();
    // SAFETY: `dup` of a descriptor this test owns; closed below.
    let leaked = unsafe { libc::dup(file.as_raw_fd()) };
    assert!(leaked > 2);
    // What `ls` holds itself: the standard three and the directory it reads.
    let script = "ls /proc/self/fd | sort -n | tr '\\n' ' '";
    let command = Bwrap::new(env).command("sh", ["-c", script]).unwrap();
    let out = common::run(command, None);
    let by_command = text(&out.stdout);
    let spec = LaunchSpec::new("sh")
        .args(["-c", script])
        .prefix(Bwrap::new(env).prefix().unwrap());
    let (by_prefix, stderr, _) = run_controlled(&arena.host, spec);
    // SAFETY: the descriptor `dup` gave, closed once.
    unsafe { libc::close(leaked) };
    assert_eq!(by_command, "0 1 2 3 ", "{}", text(&out.stderr));
    assert_eq!(by_prefix, "0 1 2 3 ", "{stderr}");
}

/// Runs `spec` on a terminal under a `ShellController` to its end: what
/// the terminal showed.
fn run_on_terminal(host: &Host, spec: LaunchSpec) -> String {
    host.runtime.block_on(async {
        let shell = ShellController::new("attacker", spec);
        let mut events = shell.subscribe();
        shell.start(Default::default(), None, false).unwrap();
        let mut shown = Vec::new();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(120), events.recv())
                .await
                .expect("the sandbox ends")
                .expect("the hub is open");
            match event {
                OutputEvent::Output { data, .. } => shown.extend(data),
                OutputEvent::Exit(_) => break,
            }
        }
        text(&shown)
    })
}

/// The errno a probe printed as `name:errno` on a terminal (where what a
/// probe injected is echoed before it, on the same line).
fn probed(shown: &str, name: &str) -> Option<String> {
    let label = format!("{name}:");
    shown
        .lines()
        .find_map(|line| Some(line.trim_end_matches('\r').split_once(&label)?.1))
        .map(str::to_owned)
}

#[test]
#[ignore = "needs bubblewrap"]
fn the_filter_is_what_refuses_the_keyrings_and_terminal_injection() {
    require(&["bwrap", "perl"]);
    let arena = Arena::new();
    let env = &arena.attacker.env;
    let keyctl = SYSCALLS
        .iter()
        .find(|(name, _)| *name == "keyctl")
        .unwrap()
        .1;
    let script = format!(
        "perl -e 'print \"keyctl:\", syscall({keyctl}, 0, -3, 0, 0, 0) == -1 ? $! + 0 : 0, \"\\n\"'; \
         perl -e 'my $c = \"\"; print \"tiocsti:\", defined(ioctl(STDIN, 0x5412, $c)) ? 0 : $! + 0, \"\\n\"'"
    );
    let on_terminal = |bwrap: Bwrap| {
        let spec = LaunchSpec::new("sh")
            .args(["-c", &script])
            .prefix(bwrap.prefix().unwrap());
        run_on_terminal(&arena.host, spec)
    };
    // Filtered, on the sandbox's own terminal: refused.
    let shown = on_terminal(Bwrap::new(env));
    assert_eq!(probed(&shown, "keyctl"), Some("1".into()), "{shown}");
    assert_eq!(probed(&shown, "tiocsti"), Some("1".into()), "{shown}");
    // Unfiltered, the same probes get through: the filter is the wall.
    let shown = on_terminal(Bwrap::new(env).seccomp(false));
    assert_eq!(probed(&shown, "keyctl"), Some("0".into()), "{shown}");
    let legacy_tiocsti = std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti")
        .map_or(true, |value| value.trim() == "1");
    if legacy_tiocsti {
        assert_eq!(probed(&shown, "tiocsti"), Some("0".into()), "{shown}");
    }
}

#[test]
#[ignore = "needs bubblewrap"]
fn a_prefixed_sandbox_gets_none_of_the_hosts_environment_and_no_token_in_argv() {
    require(&["bwrap"]);
    let arena = Arena::new();
    let env = &arena.attacker.env;
    let spec = LaunchSpec::new("sh")
        .args(["-c", "env | cut -d= -f1 | sort; greet env"])
        .prefix(Bwrap::new(env).prefix().unwrap())
        .sandbox_env(env);
    let argv: Vec<String> = spec
        .argv()
        .iter()
        .map(|a| text(a.as_encoded_bytes()))
        .collect();
    assert!(
        !argv.iter().any(|arg| arg.contains(env.token())),
        "the token is in the argv: {argv:?}"
    );
    let (stdout, stderr, _) = run_controlled(&arena.host, spec);
    assert!(stdout.ends_with("hello env\n"), "{stdout}{stderr}");
    let leaked: Vec<&str> = stdout
        .lines()
        .filter(|name| *name != "hello env" && !common::SANDBOX_VARIABLES.contains(name))
        .collect();
    assert!(
        leaked.is_empty(),
        "the host's {leaked:?} reached the sandbox"
    );
    // Nor in the argv of any process while a sandbox runs.
    let mut command = Bwrap::new(env)
        .command("sh", ["-c", "greet running; read line"])
        .unwrap();
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
        &mut first,
    )
    .unwrap();
    assert_eq!(first, "hello running\n");
    let holders = processes_whose_argv_holds(env.token());
    drop(child.stdin.take());
    child.wait().unwrap();
    assert!(
        holders.is_empty(),
        "the token is in the argv of {holders:?}"
    );
}

/// Every process on the host whose command line holds `secret`.
fn processes_whose_argv_holds(secret: &str) -> Vec<String> {
    let mut holders = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if text(&cmdline).contains(secret) {
            holders.push(text(&cmdline).replace('\0', " "));
        }
    }
    holders
}

#[test]
#[ignore = "needs bubblewrap"]
fn a_user_bind_cannot_reopen_the_client_binary_read_write() {
    require(&["bwrap"]);
    let arena = Arena::new();
    let before = std::fs::read(&arena.client).unwrap();
    let client_dir = arena.client.parent().unwrap();
    let env = &arena.attacker.env;
    // Read-write over the client's directory: no sandbox, and the error
    // names both paths.
    let refused = Bwrap::new(env).bind(client_dir);
    for error in [
        refused.prefix().unwrap_err(),
        refused.command("true", [] as [&str; 0]).unwrap_err(),
    ] {
        let message = error.to_string();
        assert!(
            message.contains(&client_dir.display().to_string())
                && message.contains(&arena.client.display().to_string()),
            "{message}"
        );
    }
    // Read-only, it is served, and the client stays read-only inside.
    let command = Bwrap::new(env)
        .ro_bind(client_dir)
        .command("sh", ["-c", "greet ro; printf evil > \"$GANGWAY_BIN\""])
        .unwrap();
    let out = common::run(command, None);
    assert_eq!(text(&out.stdout), "hello ro\n", "{}", text(&out.stderr));
    assert!(!out.status.success(), "the sandbox wrote to the client");
    assert_eq!(std::fs::read(&arena.client).unwrap(), before);
}

#[test]
fn a_lapsed_scopes_socket_and_token_file_are_gone() {
    let arena = Arena::new();
    let server = arena.host.server.as_ref().unwrap();
    let expiring = server.scope(Scope::new("expiring").expires_in(Duration::from_millis(300)));
    for (env, lapse) in [(&arena.attacker.env, "revoked"), (&expiring, "expired")] {
        let socket = socket_of(env);
        let token_file = env.token_file().unwrap().to_path_buf();
        assert_eq!(std::fs::read_to_string(&token_file).unwrap(), env.token());
        assert!(std::os::unix::net::UnixStream::connect(&socket).is_ok());
        if lapse == "revoked" {
            assert!(server.revoke("attacker"));
        }
        common::wait_until(&format!("the {lapse} scope's socket is closed"), || {
            std::os::unix::net::UnixStream::connect(&socket).is_err()
        });
        assert!(!socket.exists(), "{} is unlinked", socket.display());
        assert!(!token_file.exists(), "{} is removed", token_file.display());
    }
    arena.both_served_but("attacker");
}

#[test]
fn a_token_is_accepted_only_on_its_own_scopes_socket() {
    let arena = Arena::new();
    let attacker = &arena.attacker.env;
    let bystander = &arena.bystander.env;
    assert_ne!(socket_of(attacker), socket_of(bystander));
    assert_ne!(socket_of(attacker), socket_of(&arena.host.env()));
    let on = |socket: &Path, token: &str| {
        let env = SandboxEnv::new(Endpoint::Unix(socket.to_path_buf()), token.to_owned());
        common::authority::call(&env, &["call", "greet", "--", "x"])
    };
    let (code, stderr) = on(&socket_of(bystander), attacker.token());
    assert_eq!(code, Some(69), "{stderr}");
    let (code, stderr) = on(&socket_of(&arena.host.env()), attacker.token());
    assert_eq!(code, Some(69), "{stderr}");
    let (code, stderr) = on(&socket_of(attacker), attacker.token());
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
#[ignore = "needs bubblewrap"]
fn the_attacks_also_fail_for_an_unprivileged_host() {
    require(&["bwrap", "perl", "setpriv"]);
    if std::env::var_os("GANGWAY_ESCAPE_UNPRIVILEGED").is_some() {
        return; // this is the unprivileged run itself
    }
    if unsafe_free_uid() != "0" {
        return; // already unprivileged: the other tests are this one
    }
    let tests = [
        "a_shell_in_bwrap_command_cannot_escape_or_reach_another_scope",
        "a_shell_under_a_bwrap_prefix_cannot_escape_or_reach_another_scope",
        "a_prefixed_sandbox_gets_none_of_the_hosts_environment_and_no_token_in_argv",
        "a_user_bind_cannot_reopen_the_client_binary_read_write",
        "the_filter_is_what_refuses_the_keyrings_and_terminal_injection",
        "a_descriptor_the_host_leaked_does_not_reach_the_sandbox",
        "a_bind_of_the_users_cannot_show_again_what_etc_hides",
    ];
    let out = common::run(
        {
            let mut command = std::process::Command::new("setpriv");
            command
                .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
                .arg(std::env::current_exe().unwrap())
                .args(["--include-ignored", "--exact", "--test-threads=1"])
                .args(tests)
                .env("GANGWAY_ESCAPE_UNPRIVILEGED", "1")
                .env("TMPDIR", "/tmp")
                .env_remove("XDG_RUNTIME_DIR");
            command
        },
        None,
    );
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "as uid 65534:\n{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("test result: ok. {} passed", tests.len())),
        "{stdout}"
    );
}
