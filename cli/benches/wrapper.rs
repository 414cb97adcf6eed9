//! Two measurements, each beside its floor in one run (a bench binary, not
//! a timed test):
//!
//! 1. A wrapper call from a shell loop (`echoargs x`, repeated) against a
//!    script of the wrapper's own shape that execs `gangway --version`: the
//!    same two execs, no IPC. The ratio is what connecting, the hello, the
//!    call, binding and the handler add to the process starts every call
//!    pays anyway.
//! 2. In-process `IpcClient` round trips on the Unix socket against a bare
//!    frame echo over a Unix socket pair: the protocol, auth and dispatch
//!    beside the socket's own cost.
//!
//! Run with `cargo bench -p gangway-cli --bench wrapper`.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::{Duration, Instant};

use gangway::IpcCommand;
use gangway::ipc::{IpcClient, IpcRouter, IpcServer, protocol};
use serde::Serialize;

const GANGWAY: &str = env!("CARGO_BIN_EXE_gangway");

/// Every word it was given.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "echoargs", response = Vec<String>)]
struct EchoArgs {
    #[ipc(positional)]
    words: Vec<String>,
}

impl EchoArgs {
    async fn handle(&mut self) -> Vec<String> {
        std::mem::take(&mut self.words)
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is expected.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let router = IpcRouter::new().register(EchoArgs { words: vec![] });
    let wrappers = tempfile::tempdir().unwrap();
    gangway_codegen::write_wrappers(&router.manifest(), wrappers.path()).unwrap();
    let floor = wrappers.path().join("floor");
    std::fs::write(
        &floor,
        "#!/bin/sh\nexec \"${GANGWAY_BIN:-gangway}\" --version\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&floor, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let server = runtime
        .block_on(
            IpcServer::builder()
                .client_bin(GANGWAY)
                .wrapper_dir(wrappers.path())
                .start(router),
        )
        .unwrap();
    let env = server.sandbox_env();

    // 1. Wrapper calls from a shell loop.
    const CALLS: u32 = 200;
    let shell_loop = |command: &str| {
        let script = format!(
            "i=0; while [ $i -lt {CALLS} ]; do {command} x >/dev/null || exit 1; i=$((i+1)); done"
        );
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(script);
        env.apply(&mut sh);
        let started = Instant::now();
        let status = sh.status().unwrap();
        assert!(status.success(), "`{command}` failed in the loop");
        started.elapsed() / CALLS
    };
    shell_loop("echoargs");
    shell_loop("floor");
    let (mut wrapper, mut exec_floor) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        wrapper.push(shell_loop("echoargs"));
        exec_floor.push(shell_loop("floor"));
    }
    let (wrapper, exec_floor) = (median(wrapper), median(exec_floor));
    println!("wrapper call (echoargs x):            {wrapper:>10.1?} per call");
    println!("floor (same shape, gangway --version): {exec_floor:>10.1?} per call");
    println!(
        "ratio: {:.2}x (target at most 1.3x)",
        wrapper.as_secs_f64() / exec_floor.as_secs_f64()
    );

    // 2. In-process round trips on the Unix socket.
    const ROUND_TRIPS: u32 = 20_000;
    let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    let params = rmp_serde::to_vec_named(&EchoArgs {
        words: vec!["x".into()],
    })
    .unwrap();
    let mut ipc = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        for _ in 0..ROUND_TRIPS {
            client.call_raw("echoargs", &params).unwrap();
        }
        ipc.push(started.elapsed() / ROUND_TRIPS);
    }
    let ipc = median(ipc);

    let (mut near, mut far) = UnixStream::pair().unwrap();
    let echo = std::thread::spawn(move || {
        while let Ok(Some(body)) = protocol::read_frame(&mut far, 1 << 20) {
            if protocol::write_frame(&mut far, &body).is_err() {
                break;
            }
        }
    });
    let request = protocol::encode(&protocol::Request {
        id: 1,
        method: "echoargs".into(),
        params: Some(serde_bytes::ByteBuf::from(params.clone())),
        argv: None,
        stdin: None,
        stdin_ready: false,
    });
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

    let _ = std::io::stdout().flush();
    runtime.block_on(server.shutdown(Duration::from_secs(1)));
}
