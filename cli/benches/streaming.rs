//! Streamed calls beside their floor, in one run (a bench binary, not a
//! timed test), rounds interleaved so each figure sees the same machine
//! (absolute throughput on a shared machine swings by 5x within minutes;
//! the median of the ratios taken pair by pair does not):
//!
//! 1. Output: written by a handler (`ctx.stdout`) through a link wrapper
//!    into `/dev/null`, against the same writes made over a bare Unix
//!    socket pair from one thread to another: 256 MiB in 256 KiB writes,
//!    256 MiB in 64 KiB writes, and 200,000 writes of 100 bytes.
//! 2. Input: 256 MiB piped into a link wrapper whose stdin argument is an
//!    `InputStream` (`head -c 256M /dev/zero | count`), against the same
//!    floor with the same `head` feeding it through a pipe.
//!
//! The targets: at least half the floor's throughput; 0.6x for 64 KiB
//! writes. Run with `cargo bench -p gangway-cli --bench streaming`.

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

/// Write `bytes` bytes, `size` at a time.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "generate", response = ())]
struct Generate {
    #[ipc(positional)]
    bytes: u64,
    #[ipc(positional)]
    size: usize,
    #[ipc(context)]
    #[serde(skip)]
    ctx: CallContext,
}

impl Generate {
    async fn handle(&mut self) {
        let chunk = vec![b'x'; self.size.max(1)];
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

/// The floor: `bytes` written into one end of a socket pair `size` at a
/// time and read from the other (into `/dev/null`), `source` (if any)
/// feeding the writer through a pipe as `head` feeds the wrapper.
fn socket_pair_copy(source: Option<&str>, bytes: u64, size: usize) -> Duration {
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
        let mut chunk = vec![b'x'; size];
        let mut left = bytes as usize;
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
    while got < bytes {
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

/// One output case: `bytes` in writes of `size`.
struct OutputCase {
    name: &'static str,
    bytes: u64,
    size: usize,
    target: f64,
}

const OUTPUT_CASES: [OutputCase; 3] = [
    OutputCase {
        name: "output, 256 KiB writes",
        bytes: BYTES,
        size: 256 * 1024,
        target: 0.5,
    },
    OutputCase {
        name: "output, 64 KiB writes",
        bytes: BYTES,
        size: 64 * 1024,
        target: 0.6,
    },
    OutputCase {
        name: "output, 100-byte writes",
        bytes: 200_000 * 100,
        size: 100,
        target: 0.5,
    },
];

fn main() {
    let runtime = common::runtime();
    let router = IpcRouter::new()
        .register(Generate {
            bytes: 0,
            size: 0,
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
    let input = format!("{head} | count >/dev/null");
    const ROUNDS: usize = 7;
    // Per case, the ratio of the floor's time to the call's (its share of
    // the floor's throughput), pair by pair, and both times.
    let cases = OUTPUT_CASES.len() + 1;
    let mut ratios = vec![Vec::new(); cases];
    let mut times = vec![(Vec::new(), Vec::new()); cases];
    for round in 0..=ROUNDS {
        let mut pairs = Vec::new();
        for case in &OUTPUT_CASES {
            let output = format!("generate {} {} >/dev/null", case.bytes, case.size);
            pairs.push((
                through_wrapper(&output),
                socket_pair_copy(None, case.bytes, case.size),
            ));
        }
        pairs.push((
            through_wrapper(&input),
            socket_pair_copy(Some(&head), BYTES, 256 * 1024),
        ));
        // The first round warms up.
        if round > 0 {
            for (i, (call, floor)) in pairs.into_iter().enumerate() {
                ratios[i].push(floor.as_secs_f64() / call.as_secs_f64());
                times[i].0.push(call);
                times[i].1.push(floor);
            }
        }
    }
    let rate = |bytes: u64, d: Duration| bytes as f64 / d.as_secs_f64() / (1024.0 * 1024.0);
    let names = OUTPUT_CASES
        .iter()
        .map(|case| (case.name, case.bytes, case.target))
        .chain([("input (head | wrapper -> InputStream)", BYTES, 0.5)]);
    for (i, (name, bytes, target)) in names.enumerate() {
        let mut ratio = ratios[i].clone();
        ratio.sort_by(f64::total_cmp);
        let (call, floor) = (median(times[i].0.clone()), median(times[i].1.clone()));
        println!(
            "{name:<40} {:>7.0} MiB/s, floor {:>7.0} MiB/s: {:.2}x the floor's throughput \
             (median of {} pairs; target at least {target}x)",
            rate(bytes, call),
            rate(bytes, floor),
            ratio[ratio.len() / 2],
            ratio.len(),
        );
    }
    runtime.block_on(server.shutdown(Duration::from_secs(1)));
}
