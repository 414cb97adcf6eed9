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
//!    call, and compared with the plain ones.
//! 2. In-process `IpcClient` round trips on the Unix socket against a bare
//!    frame echo over a Unix socket pair: the protocol, auth and dispatch
//!    beside the socket's own cost.
//!
//! Run with `cargo bench -p gangway-cli --bench wrapper`.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::{Duration, Instant};

use gangway::ipc::{
    AuditLog, CallInfo, Decision, IpcClient, IpcRouter, IpcServer, SandboxEnv, protocol,
};

mod common;

use common::{CLIENT, EchoArgs, median};

fn main() {
    // `cargo bench` passes `--bench`; nothing else is expected.
    let runtime = common::runtime();
    let router = IpcRouter::new().register(EchoArgs { words: vec![] });
    let scripts = common::wrappers(&router, false);
    let links = common::wrappers(&router, true);
    let router_for_links = router.clone();
    let server = common::serve(&runtime, router.clone(), scripts.path());
    let env = server.sandbox_env();
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

    let static_client = common::static_client();
    let static_links = static_client
        .as_deref()
        .map(|client| common::wrappers_with_client(&router_for_links, client));
    let static_link_env = static_links
        .as_ref()
        .map(|dir| env.clone().with_wrapper_dir(Some(dir.path().to_path_buf())));
    let envs = LoopEnvs {
        scripts: &env,
        links: &link_env,
        audited_scripts: &audited_env,
        audited_links: &audited_link_env,
        static_links: static_link_env.as_ref(),
    };
    shell_loops(&envs, static_client.as_deref());
    round_trips(&env, &audited_env);

    let _ = std::io::stdout().flush();
    runtime.block_on(server.shutdown(Duration::from_secs(1)));
    runtime.block_on(audited.shutdown(Duration::from_secs(1)));
    let records = std::fs::read_to_string(audit_dir.path().join("audit.jsonl")).unwrap();
    println!("audit records written: {}", records.lines().count());
}

/// The environments the shell loops call through.
struct LoopEnvs<'a> {
    scripts: &'a SandboxEnv,
    links: &'a SandboxEnv,
    audited_scripts: &'a SandboxEnv,
    audited_links: &'a SandboxEnv,
    /// Links to the statically linked client, when it was built.
    static_links: Option<&'a SandboxEnv>,
}

/// 1. Calls from a shell loop, per call, each case beside `/bin/true`.
fn shell_loops(envs: &LoopEnvs<'_>, static_client: Option<&str>) {
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
    ];
    if let (Some(client), Some(static_links)) = (static_client, envs.static_links) {
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
    }
    let medians = interleaved_loops(&cases);
    let floor = medians[0].as_secs_f64();
    for ((name, .., target), time) in cases.iter().zip(&medians) {
        println!(
            "{name:<24} {time:>10.1?} per call  {:.2}x /bin/true  {target}",
            time.as_secs_f64() / floor
        );
    }
    if static_client.is_none() {
        println!("static client: not built (scripts/build-static-client); its cases are left out");
    }
    println!(
        "link wrapper, token from its file: {:.3}x the call with GANGWAY_TOKEN",
        medians[4].as_secs_f64() / medians[3].as_secs_f64()
    );
    for (style, plain, authority) in [("script", 2, 5), ("link", 3, 6)] {
        println!(
            "{style} wrapper with audit + guard: {:.3}x the plain call",
            medians[authority].as_secs_f64() / medians[plain].as_secs_f64()
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
    const ROUND_TRIPS: u32 = 20_000;
    let params = rmp_serde::to_vec_named(&EchoArgs {
        words: vec!["x".into()],
    })
    .unwrap();
    let round_trip = |env: &SandboxEnv| {
        let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
        let started = Instant::now();
        for _ in 0..ROUND_TRIPS {
            client.call_raw("echoargs", &params).unwrap();
        }
        started.elapsed() / ROUND_TRIPS
    };
    // Plain and audited, turn about.
    let (mut ipc, mut ipc_audited) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        ipc.push(round_trip(env));
        ipc_audited.push(round_trip(audited_env));
    }
    let (ipc, ipc_audited) = (median(ipc), median(ipc_audited));

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
    let mut bare = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        for _ in 0..ROUND_TRIPS {
            protocol::write_frame(&mut near, &request).unwrap();
            protocol::read_frame(&mut near, 1 << 20).unwrap().unwrap();
        }
        bare.push(started.elapsed() / ROUND_TRIPS);
    }
    let bare = median(bare);
    drop(near);
    let _ = echo.join();
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
        "ratio: {:.2}x the floor's time per round trip",
        ipc.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "IpcClient round trip, audit + guard:  {ipc_audited:>10.1?} ({:.2}x the plain round trip)",
        ipc_audited.as_secs_f64() / ipc.as_secs_f64()
    );
}
