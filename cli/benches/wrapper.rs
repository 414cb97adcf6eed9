//! Two measurements, each beside its floor in one run (a bench binary, not
//! a timed test):
//!
//! 1. Calls from a shell loop, interleaved round by round so that every
//!    figure sees the same machine: `/bin/true` (the floor: one exec of a
//!    minimal program), the lean client's `--version` (its start), a call
//!    through a script wrapper (two execs: the shell, then the client) and
//!    a call through a link wrapper (one exec), and the same with the token
//!    read from its file (as a `Bwrap::prefix` sandbox reads it). Ratios are
//!    to `/bin/true`;
//!    the two wrapper calls are made again against a host that writes a
//!    JSON-lines audit log and asks a guard (which allows) about every
//!    call, and against one whose guard is a policy of 200 rules (which
//!    allows these calls after testing the rules on `echoargs`), each
//!    compared with the plain ones.
//! 2. In-process `IpcClient` round trips on the Unix socket against a bare
//!    frame echo over a Unix socket pair: the protocol, auth and dispatch
//!    beside the socket's own cost.
//!
//! Run with `cargo bench -p gangway-cli --bench wrapper`.
//!
//! # A peer beside gangway's calls
//!
//! `GANGWAY_BENCH_PEER=LABEL=COMMAND` adds one case to the shell loops:
//! COMMAND, a shell command making one call (another toolkit's wrapper, its
//! host already serving), timed in the same rounds as gangway's cases, and
//! the script wrapper call given as a ratio to it. LABEL names the case in
//! the output; it is everything before the first `=`, so it holds none, and
//! COMMAND may (`VAR=value cmd` works). COMMAND runs as the script case's
//! commands do: in `sh -c`, with that case's environment (gangway's
//! variables, and its wrappers first on `PATH`, so name the peer's wrapper by
//! its path or set `PATH` in COMMAND), its output discarded. It is run once
//! before the loops; a failure there, or a value of another form, ends the
//! bench with what to fix. Unset or empty: no peer. For example, against a
//! heel host serving its own `echoargs` (a script wrapper, as gangway's):
//!
//! ```text
//! GANGWAY_BENCH_PEER='heel script=HEEL_IPC_ENDPOINT=/tmp/heel-…/socket/s /tmp/heel-…/.heel/bin/echoargs x' \
//!     cargo bench -p gangway-cli --bench wrapper
//! ```

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use gangway::ipc::{
    AuditLog, CallInfo, Decision, IpcClient, IpcRouter, IpcServer, SandboxEnv, protocol,
};

mod common;

use common::{CLIENT, EchoArgs, median, time_per};

fn main() -> ExitCode {
    // `cargo bench` passes `--bench`; nothing else is expected.
    let peer = match Peer::from_env() {
        Ok(peer) => peer,
        Err(why) => {
            eprintln!("{why}");
            return ExitCode::from(2);
        }
    };
    let runtime = common::runtime();
    let router = IpcRouter::new().register(EchoArgs { words: vec![] });
    let scripts = common::wrappers(&router, false);
    let links = common::wrappers(&router, true);
    let router_for_links = router.clone();
    let server = common::serve(&runtime, router.clone(), scripts.path());
    let env = server.sandbox_env();
    if let Some(Err(why)) = peer.as_ref().map(|peer| peer.check(&env)) {
        eprintln!("{why}");
        runtime.block_on(server.shutdown(Duration::from_secs(1)));
        return ExitCode::from(2);
    }
    let link_env = env
        .clone()
        .with_wrapper_dir(Some(links.path().to_path_buf()));
    // The same commands behind the authority model: every call audited to
    // a file and put to a guard.
    let audit_dir = tempfile::tempdir().unwrap();
    let guarded = IpcServer::builder()
        .guard(|_: &CallInfo| std::future::ready(Decision::Allow))
        .audit(AuditLog::jsonl(audit_dir.path().join("audit.jsonl")).unwrap());
    let audited = common::serve_with(&runtime, guarded, router, scripts.path());
    let audited_env = audited.sandbox_env();
    let audited_link_env = audited_env
        .clone()
        .with_wrapper_dir(Some(links.path().to_path_buf()));
    // The same again, the guard a policy of 200 rules.
    let ruled_dir = tempfile::tempdir().unwrap();
    let ruled = IpcServer::builder()
        .guard(two_hundred_rules())
        .audit(AuditLog::jsonl(ruled_dir.path().join("audit.jsonl")).unwrap());
    let ruled = common::serve_with(&runtime, ruled, router_for_links.clone(), scripts.path());
    let ruled_env = ruled.sandbox_env();
    let ruled_link_env = ruled_env
        .clone()
        .with_wrapper_dir(Some(links.path().to_path_buf()));

    let static_client = common::static_client();
    let static_links = static_client
        .as_deref()
        .map(|client| common::wrappers_with_client(&router_for_links, client));
    let static_link_env = static_links
        .as_ref()
        .map(|dir| env.clone().with_wrapper_dir(Some(dir.path().to_path_buf())));
    let static_script_env = static_client
        .as_deref()
        .map(|client| env.clone().with_client_bin(Some(client.into())));
    let envs = LoopEnvs {
        scripts: &env,
        links: &link_env,
        audited_scripts: &audited_env,
        audited_links: &audited_link_env,
        ruled_scripts: &ruled_env,
        ruled_links: &ruled_link_env,
        static_links: static_link_env.as_ref(),
        static_scripts: static_script_env.as_ref(),
    };
    shell_loops(&envs, static_client.as_deref(), peer.as_ref());
    round_trips(&env, &audited_env);

    let _ = std::io::stdout().flush();
    runtime.block_on(server.shutdown(Duration::from_secs(1)));
    runtime.block_on(audited.shutdown(Duration::from_secs(1)));
    runtime.block_on(ruled.shutdown(Duration::from_secs(1)));
    let records = std::fs::read_to_string(audit_dir.path().join("audit.jsonl")).unwrap();
    println!("audit records written: {}", records.lines().count());
    ExitCode::SUCCESS
}

/// A policy of 200 rules, as a host might write: 150 on other commands by
/// name, 40 on command globs, and 10 on `echoargs` whose conditions (a
/// regex, globs, values) are tested on every call and match none of the
/// bench's, so the default allows it.
fn two_hundred_rules() -> gangway::policy::Policy {
    use std::fmt::Write as _;
    let mut text = String::from("default = \"allow\"\n");
    for n in 0..150 {
        let _ = write!(
            text,
            "[[rule]]\nid = \"other-{n}\"\ncommand = \"tool-{n}\"\n\
             when = {{ path = {{ not_under = \"/workspace/{n}\" }} }}\ndecision = \"deny\"\n"
        );
    }
    for n in 0..40 {
        let _ = write!(
            text,
            "[[rule]]\nid = \"family-{n}\"\ncommand = \"family-{n}-*\"\ndecision = \"ask\"\n"
        );
    }
    let echo_tests = [
        r#"{ regex = "(?i).*(password|secret|token)[0-9]*" }"#,
        r#"{ glob = "secret-*" }"#,
        r#"{ equals = "--force" }"#,
        r#"{ one_of = ["rm", "shutdown", "reboot"] }"#,
        r#"{ glob = "*.pem" }"#,
    ];
    for n in 0..10 {
        let test = echo_tests[n % echo_tests.len()];
        let _ = write!(
            text,
            "[[rule]]\nid = \"echo-{n}\"\ncommand = \"echoargs\"\nwhen = {{ words = {test} }}\ndecision = \"deny\"\n"
        );
    }
    let policy = gangway::policy::Policy::from_toml_str(&text).expect("the bench's rules load");
    assert_eq!(policy.rule_count(), 200);
    policy
}

/// The variable naming a peer case for the shell loops.
const PEER_VAR: &str = "GANGWAY_BENCH_PEER";

/// A case from outside gangway (`GANGWAY_BENCH_PEER`), timed in the same
/// rounds as gangway's.
struct Peer {
    label: String,
    command: String,
}

impl Peer {
    /// The peer `GANGWAY_BENCH_PEER` names: none when it is unset or empty;
    /// a value not of the form `LABEL=COMMAND` is an error saying so.
    fn from_env() -> Result<Option<Peer>, String> {
        let Some(value) = std::env::var_os(PEER_VAR).filter(|value| !value.is_empty()) else {
            return Ok(None);
        };
        let fix = format!(
            "set {PEER_VAR}=LABEL=COMMAND, e.g. {PEER_VAR}='other script=/path/to/echoargs x' \
             (LABEL names the case; COMMAND, a shell command, makes one call), or unset it"
        );
        let value = value
            .to_str()
            .ok_or_else(|| format!("{PEER_VAR} is not UTF-8: {fix}"))?;
        let Some((label, command)) = value.split_once('=') else {
            return Err(format!(
                "{PEER_VAR}={value:?} has no `=` after a label: {fix}"
            ));
        };
        let (label, command) = (label.trim(), command.trim());
        for (part, missing) in [(label, "label"), (command, "command")] {
            if part.is_empty() {
                return Err(format!("{PEER_VAR}={value:?} has no {missing}: {fix}"));
            }
        }
        Ok(Some(Peer {
            label: label.into(),
            command: command.into(),
        }))
    }

    /// One call, made as the loops make it, so that a peer whose host is not
    /// serving is reported before any timing rather than as a failed loop.
    fn check(&self, env: &SandboxEnv) -> Result<(), String> {
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(&self.command);
        env.apply(&mut sh);
        let output = sh
            .output()
            .map_err(|error| format!("{PEER_VAR}: cannot start sh: {error}"))?;
        if output.status.success() {
            return Ok(());
        }
        Err(format!(
            "{PEER_VAR}: the case {:?} (the label is what comes before the first `=`) ran \
             `{}` once before the loops, and it failed ({}); start its host, or fix the \
             command, or unset {PEER_VAR}\n{}",
            self.label,
            self.command,
            output.status,
            String::from_utf8_lossy(&output.stderr).trim_end()
        ))
    }
}

/// The environments the shell loops call through.
struct LoopEnvs<'a> {
    scripts: &'a SandboxEnv,
    links: &'a SandboxEnv,
    audited_scripts: &'a SandboxEnv,
    audited_links: &'a SandboxEnv,
    /// Audited, the guard a policy of 200 rules.
    ruled_scripts: &'a SandboxEnv,
    ruled_links: &'a SandboxEnv,
    /// Links to the statically linked client, when it was built.
    static_links: Option<&'a SandboxEnv>,
    /// Scripts running the statically linked client, when it was built.
    static_scripts: Option<&'a SandboxEnv>,
}

/// 1. Calls from a shell loop, per call, each case beside `/bin/true` (the
///    peer's, if there is one, last).
fn shell_loops(envs: &LoopEnvs<'_>, static_client: Option<&str>, peer: Option<&Peer>) {
    let version = format!("{CLIENT} --version");
    // (name, environment, command, target)
    let mut cases: Vec<(&str, &SandboxEnv, String, &str)> = vec![
        ("/bin/true (floor)", envs.scripts, "/bin/true x".into(), ""),
        (
            "lean client --version",
            envs.scripts,
            version,
            "at most 1.2x",
        ),
        (
            "script wrapper call",
            envs.scripts,
            "echoargs x".into(),
            "at most 2.6x",
        ),
        (
            "link wrapper call",
            envs.links,
            "echoargs x".into(),
            "at most 1.6x",
        ),
        // As in a `Bwrap::prefix` sandbox: the token read from its file.
        (
            "link, token from file",
            envs.links,
            "GANGWAY_TOKEN= echoargs x".into(),
            "within 5% of the link call",
        ),
        (
            "script, audit + guard",
            envs.audited_scripts,
            "echoargs x".into(),
            "within 10% of the plain call",
        ),
        (
            "link, audit + guard",
            envs.audited_links,
            "echoargs x".into(),
            "within 10% of the plain call",
        ),
        (
            "script, 200-rule policy",
            envs.ruled_scripts,
            "echoargs x".into(),
            "within 10% of audit + guard",
        ),
        (
            "link, 200-rule policy",
            envs.ruled_links,
            "echoargs x".into(),
            "within 10% of audit + guard",
        ),
    ];
    if let (Some(client), Some(static_links), Some(static_scripts)) =
        (static_client, envs.static_links, envs.static_scripts)
    {
        cases.push((
            "static client --version",
            envs.scripts,
            format!("{client} --version"),
            "at most 1.1x",
        ));
        cases.push((
            "link call, static client",
            static_links,
            "echoargs x".into(),
            "at most 1.6x",
        ));
        cases.push((
            "script, static client",
            static_scripts,
            "echoargs x".into(),
            "",
        ));
    }
    if let Some(peer) = peer {
        let command = peer.command.clone();
        cases.push((
            &peer.label,
            envs.scripts,
            command,
            "peer (GANGWAY_BENCH_PEER)",
        ));
    }
    let medians = interleaved_loops(&cases);
    print_loops(&cases, &medians, static_client.is_some(), peer);
}

/// The shell loops' figures: each case beside `/bin/true`, then the ratios
/// between cases.
fn print_loops(
    cases: &[(&str, &SandboxEnv, String, &str)],
    medians: &[Duration],
    static_client: bool,
    peer: Option<&Peer>,
) {
    let floor = medians[0].as_secs_f64();
    for ((name, .., target), time) in cases.iter().zip(medians) {
        println!(
            "{name:<24} {time:>10.1?} per call  {:.2}x /bin/true  {target}",
            time.as_secs_f64() / floor
        );
    }
    if !static_client {
        println!("static client: not built (scripts/build-static-client); its cases are left out");
    }
    println!(
        "link wrapper, token from its file: {:.3}x the call with GANGWAY_TOKEN",
        medians[4].as_secs_f64() / medians[3].as_secs_f64()
    );
    for (style, plain, authority, ruled) in [("script", 2, 5, 7), ("link", 3, 6, 8)] {
        let ratio = |of: usize, to: usize| medians[of].as_secs_f64() / medians[to].as_secs_f64();
        println!(
            "{style} wrapper with audit + guard: {:.3}x the plain call",
            ratio(authority, plain)
        );
        println!(
            "{style} wrapper with a 200-rule policy (and audit): {:.3}x audit + a guard that allows, {:.3}x the plain call",
            ratio(ruled, authority),
            ratio(ruled, plain)
        );
    }
    let Some((peer, peer_time)) = peer.zip(medians.last()) else {
        return;
    };
    // The script calls: the dynamic client's, and the static one's.
    let scripts = cases
        .iter()
        .zip(medians)
        .filter(|((name, ..), _)| name.starts_with("script") && !name.contains("audit"));
    for ((name, ..), time) in scripts {
        println!(
            "{name}: {:.3}x the time per call of {:?} ({PEER_VAR})",
            time.as_secs_f64() / peer_time.as_secs_f64(),
            peer.label
        );
    }
}

/// Each case's median time per call over 11 rounds, the cases taking turns
/// within each round so that all see the same machine.
fn interleaved_loops(cases: &[(&str, &SandboxEnv, String, &str)]) -> Vec<Duration> {
    const CALLS: u32 = 300;
    let shell_loop = |env: &SandboxEnv, command: &str| {
        let script = format!(
            "i=0; while [ $i -lt {CALLS} ]; do {command} >/dev/null || exit 1; i=$((i+1)); done"
        );
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(script);
        env.apply(&mut sh);
        let started = Instant::now();
        let status = sh.status().unwrap();
        assert!(status.success(), "`{command}` failed in the loop");
        started.elapsed() / CALLS
    };
    for (_, env, command, _) in cases {
        shell_loop(env, command);
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    for _ in 0..11 {
        for (i, (_, env, command, _)) in cases.iter().enumerate() {
            samples[i].push(shell_loop(env, command));
        }
    }
    samples.into_iter().map(median).collect()
}

/// 2. In-process round trips on the Unix socket, beside a bare frame echo.
fn round_trips(env: &SandboxEnv, audited_env: &SandboxEnv) {
    const ROUNDS: usize = 7;
    let params = rmp_serde::to_vec_named(&EchoArgs {
        words: vec!["x".into()],
    })
    .unwrap();
    let (mut near, mut far) = UnixStream::pair().unwrap();
    let echo = std::thread::spawn(move || {
        while let Ok(Some(body)) = protocol::read_frame(&mut far, 1 << 20) {
            if protocol::write_frame(&mut far, &body).is_err() {
                break;
            }
        }
    });
    let request = protocol::encode(&protocol::ClientFrame::Call(protocol::Request {
        id: 1,
        method: "echoargs".into(),
        params: Some(serde_bytes::ByteBuf::from(params.clone())),
        argv: None,
        json: None,
        stdin: None,
        stdin_ready: false,
    }));
    // Plain, audited and the floor, turn about; each round's ratios.
    let (mut ipc, mut ipc_audited, mut bare) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ratios, mut audited_ratios) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let plain = ipc_round_trip(env, &params);
        let audited = ipc_round_trip(audited_env, &params);
        let floor = time_per(ROUND_TRIPS, || {
            protocol::write_frame(&mut near, &request).unwrap();
            protocol::read_frame(&mut near, 1 << 20).unwrap().unwrap();
        });
        ratios.push(plain.as_secs_f64() / floor.as_secs_f64());
        audited_ratios.push(audited.as_secs_f64() / plain.as_secs_f64());
        ipc.push(plain);
        ipc_audited.push(audited);
        bare.push(floor);
    }
    drop(near);
    let _ = echo.join();
    let (ipc, ipc_audited, bare) = (median(ipc), median(ipc_audited), median(bare));
    let middle = |mut ratios: Vec<f64>| {
        ratios.sort_by(f64::total_cmp);
        ratios[ratios.len() / 2]
    };
    let per_second = |d: Duration| 1.0 / d.as_secs_f64();
    println!(
        "IpcClient round trip:                 {ipc:>10.1?} ({:.0}/s)",
        per_second(ipc)
    );
    println!(
        "floor (bare frame echo, socket pair): {bare:>10.1?} ({:.0}/s)",
        per_second(bare)
    );
    println!(
        "ratio: {:.2}x the floor's time per round trip (median of {ROUNDS} rounds taken turn about)",
        middle(ratios)
    );
    println!(
        "IpcClient round trip, audit + guard:  {ipc_audited:>10.1?} ({:.2}x the plain round trip)",
        middle(audited_ratios)
    );
}

/// Round trips in a row per sample.
const ROUND_TRIPS: u32 = 20_000;

/// The time per `IpcClient` call of `echoargs` on one connection to `env`.
fn ipc_round_trip(env: &SandboxEnv, params: &[u8]) -> Duration {
    let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    time_per(ROUND_TRIPS, || {
        client.call_raw("echoargs", params).unwrap();
    })
}
