//! Streamed calls beside their floor, in one run (a bench binary, not a
//! timed test), rounds interleaved so each figure sees the same machine:
//!
//! 1. Output: 256 MiB written by a handler (`ctx.stdout`, 256 KiB at a
//!    time) through a link wrapper into `/dev/null`, against the same bytes
//!    copied over a bare Unix socket pair from one thread to another.
//! 2. Input: 256 MiB piped into a link wrapper whose stdin argument is an
//!    `InputStream` (`head -c 256M /dev/zero | count`), against the same
//!    floor with the same `head` feeding it through a pipe.
//!
//! The target is at least half the floor's throughput. Run with
//! `cargo bench -p gangway-cli --bench streaming`.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gangway::IpcCommand;
use gangway::ipc::{CallContext, CommandResult, InputStream, IpcRouter};
use serde::{Deserialize, Serialize};

mod common;

use common::median;

/// How many bytes each round moves.
const BYTES: u64 = 256 * 1024 * 1024;

/// Write `bytes` bytes.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "generate", response = ())]
struct Generate {
    #[ipc(positional)]
    bytes: u64,
    #[ipc(context)]
    #[serde(skip)]
    ctx: CallContext,
}

impl Generate {
    async fn handle(&mut self) {
        let chunk = vec![b'x'; 256 * 1024];
        let mut left = self.bytes;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            if self.ctx.stdout(&chunk[..n]).await.is_err() {
                return;
            }
            left -= n as u64;
        }
    }
}

/// Count the bytes piped in.
#[derive(Clone, Serialize, Deserialize, IpcCommand)]
#[ipc(name = "count", response = CommandResult<u64>)]
struct Count {
    #[ipc(stdin)]
    input: InputStream,
}

impl Count {
    async fn handle(&mut self) -> CommandResult<u64> {
        let mut total = 0;
        while let Some(chunk) = self.input.next_chunk().await? {
            total += chunk.len() as u64;
        }
        Ok(total)
    }
}

/// The floor: `BYTES` written into one end of a socket pair in 256 KiB
/// writes and read from the other, `source` (if any) feeding the writer
/// through a pipe as `head` feeds the wrapper.
fn socket_pair_copy(source: Option<&str>) -> Duration {
    let started = Instant::now();
    let (mut near, mut far) = UnixStream::pair().unwrap();
    let mut feed = source.map(|script| {
        Command::new("sh")
            .args(["-c", script])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    });
    let mut input = feed.as_mut().map(|child| child.stdout.take().unwrap());
    let writer = std::thread::spawn(move || {
        let mut chunk = vec![b'x'; 256 * 1024];
        let mut left = BYTES as usize;
        while left > 0 {
            let n = left.min(chunk.len());
            let n = match &mut input {
                Some(pipe) => pipe.read(&mut chunk[..n]).unwrap(),
                None => n,
            };
            near.write_all(&chunk[..n]).unwrap();
            left -= n;
        }
    });
    let mut sink = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .unwrap();
    let mut buffer = vec![0u8; 256 * 1024];
    let mut got = 0u64;
    while got < BYTES {
        let n = far.read(&mut buffer).unwrap();
        sink.write_all(&buffer[..n]).unwrap();
        got += n as u64;
    }
    writer.join().unwrap();
    if let Some(mut child) = feed {
        child.wait().unwrap();
    }
    started.elapsed()
}

fn main() {
    let runtime = common::runtime();
    let router = IpcRouter::new()
        .register(Generate {
            bytes: 0,
            ctx: CallContext::detached(),
        })
        .register(Count {
            input: InputStream::new(),
        });
    let links = common::wrappers(&router, true);
    let server = common::serve(&runtime, router, links.path());
    let env = server.sandbox_env();
    let through_wrapper = |script: &str| {
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(script).stdout(Stdio::null());
        env.apply(&mut sh);
        let started = Instant::now();
        let status = sh.status().unwrap();
        assert!(status.success(), "`{script}` failed");
        started.elapsed()
    };
    let head = format!("head -c {BYTES} /dev/zero");
    let output = format!("generate {BYTES} >/dev/null");
    let input = format!("{head} | count >/dev/null");
    const ROUNDS: usize = 7;
    let mut samples = [const { Vec::new() }; 4];
    for round in 0..=ROUNDS {
        let figures = [
            through_wrapper(&output),
            socket_pair_copy(None),
            through_wrapper(&input),
            socket_pair_copy(Some(&head)),
        ];
        // The first round warms up.
        if round > 0 {
            for (sample, figure) in samples.iter_mut().zip(figures) {
                sample.push(figure);
            }
        }
    }
    let [output, output_floor, input, input_floor] = samples.map(median);
    let rate = |d: Duration| BYTES as f64 / d.as_secs_f64() / (1024.0 * 1024.0);
    for (name, call, floor) in [
        (
            "output (ctx.stdout -> wrapper -> /dev/null)",
            output,
            output_floor,
        ),
        ("input (head | wrapper -> InputStream)", input, input_floor),
    ] {
        println!(
            "{name:<46} {:>7.0} MiB/s, floor {:>7.0} MiB/s: {:.2}x the floor's throughput (target at least 0.5x)",
            rate(call),
            rate(floor),
            rate(call) / rate(floor)
        );
    }
    runtime.block_on(server.shutdown(Duration::from_secs(1)));
}
