//! The command lines `Bwrap` writes: what comes in which order, what is
//! never in them. (What they do to a real sandbox is `cli/tests/escape.rs`'s
//! to show.)

use super::*;

fn env() -> SandboxEnv {
    SandboxEnv::new(
        Endpoint::Unix("/run/gw-x/3/s".into()),
        "0123456789abcdef0123".into(),
    )
    .with_token_file(Some("/run/gw-x/3/token".into()))
    .with_server_dir(Some("/run/gw-x".into()))
    .with_wrapper_dir(Some("/opt/wrappers".into()))
    .with_client_bin(Some("/tmp/build/host".into()))
}

/// A `Bwrap` running a program every machine has in bwrap's place, so that
/// these tests need no bubblewrap.
fn stand_in(env: &SandboxEnv) -> Bwrap {
    Bwrap::new(env).program(STAND_IN)
}

const STAND_IN: &str = "/bin/true";

fn text(args: &[OsString]) -> Vec<&str> {
    args.iter().map(|a| a.to_str().unwrap()).collect()
}

fn position(argv: &[&str], word: &str) -> usize {
    argv.iter()
        .position(|a| *a == word)
        .unwrap_or_else(|| panic!("{word} in {argv:?}"))
}

#[test]
fn gangways_binds_come_last_after_every_bind_of_the_users() {
    let prefix = stand_in(&env())
        .seccomp(false)
        .ro_bind("/work")
        .args(["--tmpfs", "/opt"])
        .prefix()
        .unwrap();
    let prefix = text(&prefix);
    assert_eq!(prefix.first(), Some(&STAND_IN));
    assert_eq!(prefix.last(), Some(&"--"));
    // Never the host's whole root: its sockets would be reachable.
    assert!(
        !prefix.windows(3).any(|w| w == ["--ro-bind", "/", "/"]),
        "{prefix:?}"
    );
    assert!(
        prefix
            .windows(3)
            .any(|w| w == ["--ro-bind", "/usr", "/usr"])
    );
    assert_eq!(
        &prefix[prefix.len() - 10..],
        [
            "--ro-bind",
            "/run/gw-x/3",
            "/run/gw-x/3",
            "--ro-bind",
            "/opt/wrappers",
            "/opt/wrappers",
            "--ro-bind",
            "/tmp/build/host",
            "/tmp/build/host",
            "--"
        ]
    );
    // The user's tmpfs over /opt comes before the wrappers' bind, so it
    // cannot hide them.
    assert!(position(&prefix, "/work") < position(&prefix, "/opt"));
    assert!(position(&prefix, "/tmp") < position(&prefix, "/tmp/build/host"));
    assert!(prefix.windows(2).any(|w| w == ["--cap-drop", "ALL"]));
    assert!(prefix.contains(&"--unshare-all"));
    assert!(!prefix.contains(&"--share-net"));

    let tcp = SandboxEnv::new(Endpoint::Tcp("127.0.0.1:9".parse().unwrap()), "t".into())
        .with_token_file(Some("/run/gw-x/4/token".into()));
    let prefix = stand_in(&tcp).seccomp(false).prefix().unwrap();
    assert!(text(&prefix).contains(&"--share-net"));
}

#[test]
fn a_prefix_starts_from_an_empty_environment_and_never_holds_the_token() {
    let prefix = stand_in(&env())
        .seccomp(false)
        .setenv("PS1", "sandbox$ ")
        .prefix()
        .unwrap();
    let prefix = text(&prefix);
    let clear = position(&prefix, "--clearenv");
    let set: Vec<(&str, &str)> = prefix
        .windows(3)
        .enumerate()
        .filter(|(_, w)| w[0] == "--setenv")
        .map(|(at, w)| {
            assert!(at > clear, "{prefix:?}");
            (w[1], w[2])
        })
        .collect();
    let names: Vec<&str> = set.iter().map(|(name, _)| *name).collect();
    for name in [
        "HOME",
        "PATH",
        "GANGWAY_ENDPOINT",
        "GANGWAY_TOKEN_FILE",
        "GANGWAY_BIN",
        "PS1",
    ] {
        assert!(names.contains(&name), "{name} in {set:?}");
    }
    assert!(!names.contains(&"GANGWAY_TOKEN"), "{set:?}");
    assert!(
        set.contains(&(
            "PATH",
            "/opt/wrappers:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
        )),
        "{set:?}"
    );
    assert!(set.contains(&("GANGWAY_TOKEN_FILE", "/run/gw-x/3/token")));
    assert!(
        !prefix
            .iter()
            .any(|word| word.contains("0123456789abcdef0123")),
        "the token is in the argv: {prefix:?}"
    );
}

#[test]
fn a_prefix_needs_a_token_file_and_a_command_does_not() {
    let bare = SandboxEnv::new(
        Endpoint::Unix("/run/gw-x/3/s".into()),
        "0123456789abcdef0123".into(),
    );
    let refusal = stand_in(&bare).seccomp(false).prefix().unwrap_err();
    assert_eq!(refusal, BwrapError::NoTokenFile);
    assert!(refusal.to_string().contains("with_token_file"), "{refusal}");
    let command = stand_in(&bare)
        .seccomp(false)
        .command("true", [] as [&str; 0])
        .unwrap();
    let token = command
        .get_envs()
        .find(|(key, _)| *key == "GANGWAY_TOKEN")
        .and_then(|(_, value)| value);
    assert_eq!(token, Some(OsStr::new("0123456789abcdef0123")));
    assert!(
        !command
            .get_args()
            .any(|arg| arg.to_string_lossy().contains("0123456789abcdef0123"))
    );
}

#[test]
fn the_filter_is_opened_by_a_shell_that_becomes_bwrap() {
    let Ok(prefix) = stand_in(&env()).prefix() else {
        // No filter for this architecture: nothing to check here.
        assert!(seccomp::program().is_err());
        return;
    };
    let prefix = text(&prefix);
    assert_eq!(
        &prefix[..4],
        ["/bin/sh", "-c", FILTER_SHIM, "gangway-sandbox"]
    );
    assert_eq!(prefix[5], STAND_IN);
    assert_eq!(
        std::fs::read(prefix[4]).unwrap(),
        seccomp::program().unwrap()
    );
    assert!(prefix.windows(2).any(|w| w == ["--add-seccomp-fd", "8"]));
}

#[test]
fn a_bind_over_gangways_paths_makes_no_sandbox() {
    let refusal = stand_in(&env())
        .seccomp(false)
        .bind("/tmp/build")
        .command("sh", [] as [&str; 0])
        .unwrap_err();
    assert!(
        matches!(&refusal, BwrapError::BindCovers { covered, .. } if covered.ends_with("host")),
        "{refusal:?}"
    );
    assert!(
        stand_in(&env())
            .seccomp(false)
            .args(["--ro-bind", "/run", "/run"])
            .prefix()
            .is_err()
    );
}

#[test]
fn a_filter_file_gone_makes_no_sandbox_and_says_why() {
    let out = Command::new("/bin/sh")
        .args(["-c", FILTER_SHIM, "gangway-sandbox"])
        .args(["/nonexistent/seccomp.bpf", "echo", "ran"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(126));
    assert!(out.stdout.is_empty(), "the program did not run");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("/nonexistent/seccomp.bpf") && said.contains("Bwrap::prefix"),
        "{said}"
    );
    // With the file there, the program runs with it as descriptor 8.
    let dir = tempfile::tempdir().unwrap();
    let filter = dir.path().join("f");
    std::fs::write(&filter, b"the filter").unwrap();
    let out = Command::new("/bin/sh")
        .args(["-c", FILTER_SHIM, "gangway-sandbox"])
        .arg(&filter)
        .args(["sh", "-c", "cat <&8"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "the filter");
}

#[test]
fn the_bwrap_program_is_found_on_the_hosts_path_not_the_sandboxes() {
    let missing = Bwrap::new(&env())
        .program("gangway-no-such-bwrap")
        .seccomp(false)
        .prefix()
        .unwrap_err();
    assert!(
        matches!(&missing, BwrapError::NotInstalled { .. })
            && missing.to_string().contains("apt-get install bubblewrap"),
        "{missing}"
    );
    // Named by a path, it is that file, made absolute.
    let sh = Bwrap::new(&env())
        .program("/bin/sh")
        .seccomp(false)
        .prefix()
        .unwrap();
    assert_eq!(sh[0], "/bin/sh");
}

#[test]
fn a_command_hands_bwrap_the_filter_by_its_descriptor_without_a_shell() {
    use std::os::unix::fs::PermissionsExt;
    let Ok(program) = seccomp::program() else {
        return; // no filter for this architecture
    };
    // A stand-in for bwrap that shows what it was handed as the filter.
    let dir = tempfile::tempdir().unwrap();
    let shows = dir.path().join("shows-the-filter");
    let script = "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  \
                  if [ \"$1\" = --add-seccomp-fd ]; then exec cat <&\"$2\"; fi\n  shift\ndone\n\
                  exit 9\n";
    std::fs::write(&shows, script).unwrap();
    std::fs::set_permissions(&shows, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut command = Bwrap::new(&env())
        .program(&shows)
        .command("true", [] as [&str; 0])
        .unwrap();
    assert_eq!(command.get_program(), shows.as_os_str());
    // Twice: each run reads the filter from its start.
    for _ in 0..2 {
        let out = command.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, program);
    }
    // A bwrap gone by the time the command runs is an error of the spawn
    // (never a child that starts and aborts).
    std::fs::remove_file(&shows).unwrap();
    let error = command.spawn().unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound, "{error}");
}

#[test]
fn bwrap_named_without_a_path_is_found_on_this_processs_path() {
    let prefix = Bwrap::new(&env())
        .program("true")
        .seccomp(false)
        .prefix()
        .unwrap();
    let found = std::path::Path::new(&prefix[0]);
    assert!(found.is_absolute() && found.ends_with("true"), "{found:?}");
}
