//! The runtime's bubblewrap helper: a session built from `Bwrap` and the
//! paths `SandboxEnv` lists reaches every command, and nothing else.

mod common;

use common::{Host, each_style, require, text};

#[test]
#[ignore = "needs bubblewrap"]
fn a_bwrap_session_from_the_helper_calls_every_command() {
    require(&["bwrap"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        let manifest = common::router(&common::Tally::default()).manifest();
        // Every command answers its help inside the sandbox...
        let mut script = String::new();
        for command in &manifest.commands {
            let name = &command.name;
            script.push_str(&format!(
                "{name} --help >/dev/null || echo \"{name} failed: $?\"\n"
            ));
        }
        // ...and real calls work, with no network but loopback.
        script.push_str("greet sandboxed; echo piped | upper; note; grep -c ':' /proc/net/dev\n");
        let out = common::run(
            gangway::ipc::Bwrap::new(&host.env())
                .command("sh", ["-c", &script])
                .unwrap(),
            None,
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(
            text(&out.stdout),
            "hello sandboxed\nPIPED\nno note\n1\n",
            "stderr: {}",
            text(&out.stderr)
        );
        assert!(manifest.commands.len() >= 10, "{}", manifest.commands.len());
    });
}

#[test]
#[ignore = "needs bubblewrap"]
fn the_listed_paths_are_all_a_session_needs() {
    require(&["bwrap"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        // A sandbox that sees only the system directories and the listed
        // paths (no host root, an empty /tmp): calls still work.
        let mut command = std::process::Command::new("bwrap");
        for dir in ["/usr", "/bin", "/lib", "/lib64", "/etc"] {
            if std::path::Path::new(dir).exists() {
                command.args(["--ro-bind", dir, dir]);
            }
        }
        command
            .args(["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"])
            .args(["--unshare-all", "--die-with-parent"])
            .args(host.env().bwrap_args())
            .args(["--", "sh", "-c", "greet listed"]);
        host.env().apply(&mut command);
        let out = common::run(command, None);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "hello listed\n");
    });
}

#[test]
#[ignore = "needs bubblewrap"]
fn the_helpers_sandbox_keeps_the_hosts_sockets_and_environment_out() {
    require(&["bwrap"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        // A socket of the host's outside the listed paths (as a session bus or
        // a container engine's would be): not even visible inside.
        let outside = tempfile::Builder::new()
            .prefix("gangway-outside-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let socket = outside.path().join("bus");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let script = format!(
            "if [ -e '{}' ]; then echo visible; else echo hidden; fi; env | cut -d= -f1 | sort",
            socket.display()
        );
        let mut command = gangway::ipc::Bwrap::new(&host.env())
            .command("sh", ["-c", &script])
            .unwrap();
        command.env("GANGWAY_TEST_EXTRA", "added on purpose");
        let out = common::run(command, None);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        let mut lines = stdout.lines();
        assert_eq!(lines.next(), Some("hidden"));
        // `Bwrap::command` also passes the token itself, in the
        // environment (never the argv), and what the caller added.
        let extra = ["GANGWAY_TOKEN", "GANGWAY_TEST_EXTRA"];
        let allowed: Vec<&str> = common::SANDBOX_VARIABLES
            .iter()
            .chain(&extra)
            .copied()
            .collect();
        for name in lines {
            assert!(
                allowed.contains(&name),
                "`{name}` leaked into the sandbox:\n{stdout}"
            );
        }
        assert!(stdout.contains("GANGWAY_TEST_EXTRA"), "{stdout}");
    });
}
