//! The server's lifecycle and limits: shutdown with calls in flight, the
//! per-call timeout, the connection limit, and the environment a child gets.

mod common;

use std::time::{Duration, Instant};

use common::Host;
use gangway::ipc::{Endpoint, IpcClient, IpcServer};

fn sleep_params(ms: u64) -> Vec<u8> {
    rmp_serde::to_vec_named(&common::Sleep { ms }).unwrap()
}

#[test]
fn shutdown_lets_calls_in_flight_finish_then_removes_the_socket() {
    let mut host = Host::start();
    let env = host.env();
    let Endpoint::Unix(socket) = env.endpoint().clone() else {
        panic!()
    };
    let caller = {
        let env = env.clone();
        std::thread::spawn(move || {
            let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
            client.call_raw("sleep", &sleep_params(400))
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    let server = host.server.take().unwrap();
    let started = Instant::now();
    let report = host
        .runtime
        .block_on(server.shutdown(Duration::from_secs(5)));
    assert_eq!(report.abandoned_calls, 0);
    let reply = caller
        .join()
        .unwrap()
        .expect("the call in flight is answered");
    assert_eq!(rmp_serde::from_slice::<u64>(&reply).unwrap(), 400);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "it did not wait for the deadline"
    );
    assert!(!socket.exists() && !socket.parent().unwrap().exists());
    assert!(
        IpcClient::connect_to(env.endpoint(), env.token()).is_err(),
        "no longer listening"
    );
}

#[test]
fn shutdown_gives_up_on_calls_at_the_deadline() {
    let mut host = Host::start();
    let env = host.env();
    let _caller = std::thread::spawn(move || {
        let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
        let _ = client.call_raw("sleep", &sleep_params(10_000));
    });
    std::thread::sleep(Duration::from_millis(100));
    let server = host.server.take().unwrap();
    let started = Instant::now();
    let report = host
        .runtime
        .block_on(server.shutdown(Duration::from_millis(200)));
    assert_eq!(report.abandoned_calls, 1);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_call_over_the_timeout_is_answered_with_a_timeout() {
    let host =
        Host::start_with(IpcServer::builder().call_timeout(Some(Duration::from_millis(100))));
    let env = host.env();
    let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    let err = client.call_raw("sleep", &sleep_params(5_000)).unwrap_err();
    let remote = err.remote().expect("the host answers");
    assert_eq!((remote.kind.as_str(), remote.exit), ("timeout", 1));
    assert!(
        remote
            .message
            .starts_with("sleep: the call did not finish within"),
        "{}",
        remote.message
    );
    let reply = client.call_raw("sleep", &sleep_params(1)).unwrap();
    assert_eq!(
        rmp_serde::from_slice::<u64>(&reply).unwrap(),
        1,
        "the connection still serves"
    );
}

#[test]
fn connections_past_the_limit_are_turned_away_busy() {
    let host = Host::start_with(IpcServer::builder().max_connections(1));
    let env = host.env();
    let mut first = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    first.call_raw("ping", &[]).unwrap();
    let mut second = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    let err = second.call_raw("ping", &[]).unwrap_err();
    assert_eq!(
        err.remote().map(|r| (r.kind.as_str(), r.exit)),
        Some(("busy", 69)),
        "{err}"
    );
    drop(first);
    // The slot frees when the first connection closes.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut third = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
        if third.call_raw("ping", &[]).is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "the freed slot is never reused");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_tokio_child_gets_the_endpoint_token_client_and_path() {
    let host = Host::start();
    let env = host.env();
    let output = host.runtime.block_on(async {
        let mut child = tokio::process::Command::new("sh");
        child.arg("-c").arg("echo \"$GANGWAY_ENDPOINT|$GANGWAY_TOKEN|$GANGWAY_BIN\"; echo \"$PATH\" | cut -d: -f1; command -v search");
        child.env("PATH", "/usr/bin:/bin");
        env.apply(&mut child);
        child.output().await.unwrap()
    });
    let stdout = common::text(&output.stdout);
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!("{}|{}|{}", env.endpoint(), env.token(), common::GANGWAY)
    );
    assert_eq!(
        lines.next().unwrap(),
        host.wrappers.path().to_str().unwrap(),
        "wrappers first on PATH"
    );
    assert_eq!(
        lines.next().unwrap(),
        host.wrapper("search").to_str().unwrap()
    );
}
