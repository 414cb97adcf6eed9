//! What a sandbox's walls cost at its start, each case beside the profile
//! `Bwrap` wrote before it dropped capabilities, locked user namespaces,
//! masked `/etc`'s credentials, bound gangway's paths read-only and loaded
//! a seccomp filter: rounds of sandbox starts (`bwrap ... -- true`, started
//! and waited for), interleaved round by round so every case sees the same
//! machine, then a call through a link wrapper from inside each sandbox.
//!
//! Run with `cargo bench -p gangway-cli --bench sandbox` (needs `bwrap`).

use std::ffi::OsString;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gangway::ipc::{Bwrap, Endpoint, IpcRouter, SandboxEnv};

mod common;

use common::{EchoArgs, median};

/// The command line `Bwrap` wrote before this profile, for `env`: the
/// system directories read-only, the socket directory read-write, nothing
/// dropped, no filter.
fn profile_before(env: &SandboxEnv, script: &str) -> Command {
    let mut command = Command::new("bwrap");
    for dir in ["/usr", "/etc"] {
        command.args(["--ro-bind", dir, dir]);
    }
    for dir in ["/bin", "/sbin", "/lib", "/lib32", "/lib64"] {
        match std::fs::symlink_metadata(dir) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(dir).unwrap();
                command.arg("--symlink").arg(target).arg(dir);
            }
            Ok(meta) if meta.is_dir() => {
                command.args(["--ro-bind", dir, dir]);
            }
            _ => {}
        }
    }
    command.args([
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--unshare-all",
        "--die-with-parent",
        "--chdir",
        "/",
    ]);
    if let Endpoint::Unix(socket) = env.endpoint() {
        let dir = socket.parent().unwrap();
        command.arg("--bind").arg(dir).arg(dir);
    }
    for path in [env.wrapper_dir().unwrap(), env.client_bin().unwrap()] {
        command.arg("--ro-bind").arg(path).arg(path);
    }
    command.args(["--new-session", "--", "sh", "-c", script]);
    command.env_clear();
    env.apply(&mut command);
    command
}

/// The command an argv prefix makes, as a runner would start it.
fn from_prefix(prefix: Vec<OsString>, script: &str) -> Command {
    let mut command = Command::new(&prefix[0]);
    command.args(&prefix[1..]).args(["sh", "-c", script]);
    command.env_clear();
    command
}

/// The mean time of `runs` runs of what `make` makes, each to its end.
fn time(runs: u32, make: &dyn Fn() -> Command) -> Duration {
    let started = Instant::now();
    for _ in 0..runs {
        let mut command = make();
        command.stdin(Stdio::null()).stdout(Stdio::null());
        let status = command.status().unwrap();
        assert!(status.success(), "{command:?} failed");
    }
    started.elapsed() / runs
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is expected.
    let runtime = common::runtime();
    let router = IpcRouter::new().register(EchoArgs { words: vec![] });
    let links = common::wrappers(&router, true);
    let server = common::serve(&runtime, router, links.path());
    let env = server.sandbox_env();
    let bwrap = Bwrap::new(&env);

    type Case<'a> = (&'a str, Box<dyn Fn(&str) -> Command + 'a>);
    let cases: [Case; 4] = [
        (
            "profile before",
            Box::new(|script| profile_before(&env, script)),
        ),
        (
            "Bwrap::command",
            Box::new(|script| bwrap.command("sh", ["-c", script]).unwrap()),
        ),
        (
            "Bwrap::prefix (sh opens the filter)",
            Box::new(|script| from_prefix(bwrap.prefix().unwrap(), script)),
        ),
        (
            "Bwrap::command, seccomp(false)",
            Box::new(|script| {
                bwrap
                    .clone()
                    .seccomp(false)
                    .command("sh", ["-c", script])
                    .unwrap()
            }),
        ),
    ];
    for (what, script, runs) in [
        ("start: sh -c true", "true", 40),
        ("start and one link wrapper call", "echoargs x", 40),
    ] {
        let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
        for (_, make) in &cases {
            time(3, &|| make(script));
        }
        for _ in 0..11 {
            for (i, (_, make)) in cases.iter().enumerate() {
                samples[i].push(time(runs, &|| make(script)));
            }
        }
        let medians: Vec<Duration> = samples.into_iter().map(median).collect();
        println!("{what} (median of 11 rounds of {runs}):");
        for ((name, _), median) in cases.iter().zip(&medians) {
            println!(
                "  {name:<38} {median:>10.2?}  {:.3}x the profile before",
                median.as_secs_f64() / medians[0].as_secs_f64()
            );
        }
    }
    runtime.block_on(server.shutdown(Duration::from_secs(1)));
}
