//! What a link call costs the host, without the exec: each call on a fresh
//! connection (connect, the hello and the call in one write as the lean
//! client sends them, the welcome and the answer read back, close), beside
//! its floor, a bare Unix listener whose thread accepts, reads one frame,
//! writes one back and closes. The two take turns round by round, and the
//! median ratio is printed (a bench binary, not a timed test).
//!
//! Run with `cargo bench -p gangway-cli --bench connect`.

use std::io::Write;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::time::Duration;

use gangway::ipc::{Endpoint, IpcRouter, protocol};

mod common;

use common::{EchoArgs, median, time_per};

/// Calls per sample.
const CALLS: u32 = 5_000;
/// Samples of each, taken turn about.
const ROUNDS: usize = 7;

fn main() {
    let runtime = common::runtime();
    let router = IpcRouter::new().register(EchoArgs { words: vec![] });
    let scripts = common::wrappers(&router, false);
    let server = common::serve(&runtime, router, scripts.path());
    let Endpoint::Unix(socket) = server.endpoint().clone() else {
        panic!("the bench host listens on a Unix socket");
    };
    let first_write = hello_and_call(server.token());

    let floor_dir = tempfile::tempdir().unwrap();
    let floor_socket = floor_dir.path().join("floor.sock");
    let listener = UnixListener::bind(&floor_socket).unwrap();
    std::thread::spawn(move || bare_echo(&listener));

    let (mut calls, mut floors, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let call = time_per(CALLS, || fresh_call(&socket, &first_write, 2));
        let floor = time_per(CALLS, || fresh_call(&floor_socket, &first_write, 1));
        ratios.push(call.as_secs_f64() / floor.as_secs_f64());
        calls.push(call);
        floors.push(floor);
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "call on a fresh connection:           {:>10.1?}",
        median(calls)
    );
    println!(
        "floor (accept, echo a frame, close):  {:>10.1?}",
        median(floors)
    );
    println!(
        "ratio: {:.2}x the floor (median of {ROUNDS} rounds taken turn about)",
        ratios[ROUNDS / 2]
    );
    let _ = std::io::stdout().flush();
    runtime.block_on(server.shutdown(Duration::from_secs(1)));
}

/// The lean client's first write: its hello and its call, two frames.
fn hello_and_call(token: &str) -> Vec<u8> {
    let hello = protocol::encode(&protocol::Hello {
        v: protocol::VERSION,
        token: token.to_owned(),
    });
    let params = rmp_serde::to_vec_named(&EchoArgs {
        words: vec!["x".into()],
    })
    .unwrap();
    let call = protocol::encode(&protocol::ClientFrame::Call(protocol::Request {
        id: 1,
        method: "echoargs".into(),
        params: Some(serde_bytes::ByteBuf::from(params)),
        argv: None,
        json: None,
        stdin: None,
        stdin_ready: false,
    }));
    let mut bytes = Vec::new();
    protocol::write_frame(&mut bytes, &hello).unwrap();
    protocol::write_frame(&mut bytes, &call).unwrap();
    bytes
}

/// Connects to `socket`, writes `first_write`, reads `frames` frames back
/// and hangs up.
fn fresh_call(socket: &Path, first_write: &[u8], frames: usize) {
    let mut stream = UnixStream::connect(socket).unwrap();
    stream.write_all(first_write).unwrap();
    for _ in 0..frames {
        protocol::read_frame(&mut stream, 1 << 20)
            .unwrap()
            .expect("a frame back");
    }
}

/// The floor's server: per connection, one frame read, one written back.
fn bare_echo(listener: &UnixListener) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { return };
        if let Ok(Some(body)) = protocol::read_frame(&mut stream, 1 << 20) {
            let _ = protocol::write_frame(&mut stream, &body);
        }
    }
}
