//! The stdio transport beside its floor, in one run (a bench binary, not a
//! timed test), against the Rust echo peer (`tests/peers/stdio_peer.rs`):
//!
//! 1. Pipelined throughput: 20,000 `echo` calls with up to 256 in flight
//!    through `StdioTransport`, against a bare loop that writes the same
//!    20,000 request lines from one thread while another reads the answers.
//! 2. Round-trip latency: one call at a time, against a bare loop that
//!    writes a line and reads a line.
//!
//! Run with `cargo bench --bench stdio`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gangway::stdio::StdioTransport;
use serde_json::json;

const PEER: &str = env!("CARGO_BIN_EXE_stdio-peer");
const PIPELINED: usize = 20_000;
const IN_FLIGHT: usize = 256;
const SEQUENTIAL: usize = 5_000;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn request_line(id: usize) -> String {
    format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": id, "method": "echo", "params": {"n": id}})
    )
}

/// The floor, pipelined: all requests written by one thread, all answers
/// read by another.
fn bare_pipelined() -> Duration {
    let mut child = Command::new(PEER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = std::io::BufWriter::new(child.stdin.take().unwrap());
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let started = Instant::now();
    let writer = std::thread::spawn(move || {
        for id in 1..=PIPELINED {
            stdin.write_all(request_line(id).as_bytes()).unwrap();
        }
        stdin.flush().unwrap();
        stdin
    });
    let mut lines = stdout.lines();
    for _ in 0..PIPELINED {
        let line = lines.next().unwrap().unwrap();
        // Parse, as any client must, to find the id.
        let _: serde_json::Value = serde_json::from_str(&line).unwrap();
    }
    let elapsed = started.elapsed();
    drop(writer.join().unwrap());
    child.wait().unwrap();
    elapsed
}

/// The floor, one at a time: write a line, read a line.
fn bare_sequential() -> Duration {
    let mut child = Command::new(PEER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let started = Instant::now();
    for id in 1..=SEQUENTIAL {
        stdin.write_all(request_line(id).as_bytes()).unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
        let _: serde_json::Value = serde_json::from_str(&line).unwrap();
    }
    let elapsed = started.elapsed() / SEQUENTIAL as u32;
    drop(stdin);
    child.wait().unwrap();
    elapsed
}

fn transport() -> Arc<StdioTransport> {
    Arc::new(StdioTransport::spawn(tokio::process::Command::new(PEER)).unwrap())
}

async fn transport_pipelined() -> Duration {
    let peer = transport();
    let started = Instant::now();
    // IN_FLIGHT callers, each making its share of the calls in turn.
    let callers: Vec<_> = (0..IN_FLIGHT)
        .map(|caller| {
            let peer = peer.clone();
            tokio::spawn(async move {
                for n in (caller..PIPELINED).step_by(IN_FLIGHT) {
                    peer.call("echo", json!({"n": n})).await.unwrap();
                }
            })
        })
        .collect();
    for caller in callers {
        caller.await.unwrap();
    }
    let elapsed = started.elapsed();
    peer.shutdown(Duration::from_secs(5)).await;
    elapsed
}

async fn transport_sequential() -> Duration {
    let peer = transport();
    let started = Instant::now();
    for n in 1..=SEQUENTIAL {
        peer.call("echo", json!({"n": n})).await.unwrap();
    }
    let elapsed = started.elapsed() / SEQUENTIAL as u32;
    peer.shutdown(Duration::from_secs(5)).await;
    elapsed
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (mut ours, mut floor) = (Vec::new(), Vec::new());
    let (mut ours_rtt, mut floor_rtt) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        ours.push(runtime.block_on(transport_pipelined()));
        floor.push(bare_pipelined());
        ours_rtt.push(runtime.block_on(transport_sequential()));
        floor_rtt.push(bare_sequential());
    }
    let per_second = |d: Duration| PIPELINED as f64 / d.as_secs_f64();
    let (ours, floor) = (median(ours), median(floor));
    let (ours_rtt, floor_rtt) = (median(ours_rtt), median(floor_rtt));
    println!(
        "pipelined, StdioTransport ({IN_FLIGHT} in flight): {:>9.0} calls/s",
        per_second(ours)
    );
    println!(
        "pipelined, bare write/read threads:        {:>9.0} calls/s",
        per_second(floor)
    );
    println!(
        "throughput ratio: {:.2}x the floor (target at least 0.8x)",
        per_second(ours) / per_second(floor)
    );
    println!("round trip, StdioTransport:  {ours_rtt:>9.1?}");
    println!("round trip, bare line loop:  {floor_rtt:>9.1?}");
    println!(
        "latency ratio: {:.2}x the floor's time",
        ours_rtt.as_secs_f64() / floor_rtt.as_secs_f64()
    );
}
