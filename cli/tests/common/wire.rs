//! Connections to a test host at the wire level, for the tests of its
//! defences: its socket, a client and a ping, a hello sent by hand, the
//! refusal the host answers with, and a client once a slot is free.

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use gangway::ipc::{Endpoint, IpcClient, protocol};

use super::Host;

/// The path of the host's Unix socket.
pub fn socket_path(host: &Host) -> PathBuf {
    match host.env().endpoint() {
        Endpoint::Unix(path) => path.clone(),
        other => panic!("not a Unix socket: {other}"),
    }
}

/// A client of the host with its full-access token.
pub fn client(host: &Host) -> IpcClient {
    let env = host.env();
    IpcClient::connect_to(env.endpoint(), env.token()).unwrap()
}

/// Calls `ping` and gives its answer.
pub fn ping(client: &mut IpcClient) -> String {
    let reply = client.call_raw("ping", &[]).unwrap();
    rmp_serde::from_slice(&reply).unwrap()
}

/// Sends a hello with `token` on a raw connection and returns the answer.
pub fn raw_hello(raw: &mut UnixStream, token: &str) -> Vec<u8> {
    let hello = protocol::Hello {
        v: protocol::VERSION,
        token: token.to_owned(),
    };
    protocol::write_frame(raw, &protocol::encode(&hello)).unwrap();
    protocol::read_frame(raw, 1 << 20).unwrap().unwrap()
}

/// The error the host answered with (a bare answer to a hello, an
/// `answer` frame after it), checking the connection then closes.
pub fn refusal(raw: &mut UnixStream, body: &[u8]) -> protocol::WireError {
    let response = match protocol::decode::<protocol::HostFrame>(body) {
        Ok(protocol::HostFrame::Answer(response)) => response,
        _ => protocol::decode::<protocol::Response>(body).unwrap(),
    };
    assert!(!response.ok);
    let mut rest = Vec::new();
    raw.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "closed after refusing");
    response.error.unwrap()
}

/// A client, once the host has a free slot within `seconds`.
pub fn connect_within(host: &Host, seconds: u64) -> IpcClient {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        match IpcClient::connect_to(host.env().endpoint(), host.env().token()) {
            Ok(client) => return client,
            Err(err) => {
                assert!(
                    Instant::now() < deadline,
                    "no slot freed in {seconds}s: {err}"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}
