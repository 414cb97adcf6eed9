//! The server's lifecycle and limits: shutdown with calls in flight, the
//! per-call timeout, the connection limit, and the environment a child gets.

mod common;

use std::time::{Duration, Instant};

use std::sync::atomic::Ordering;

use common::Host;
use gangway::ipc::{AsyncIpcClient, ClientError, Endpoint, IpcClient, IpcServer};

fn sleep_params(ms: u64) -> Vec<u8> {
    common::Sleep::params(ms)
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
    wait_for_sleeps(&host, 1);
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
fn shutdown_cancels_the_calls_left_at_the_deadline() {
    let mut host = Host::start();
    let env = host.env();
    let caller = std::thread::spawn(move || {
        let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
        client.call_raw("sleep", &sleep_params(1_500))
    });
    wait_for_sleeps(&host, 1);
    let server = host.server.take().unwrap();
    let started = Instant::now();
    let report = host
        .runtime
        .block_on(server.shutdown(Duration::from_millis(200)));
    assert_eq!(report.abandoned_calls, 1);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(caller.join().unwrap().is_err(), "the caller hears the end");
    // Well past when the sleep would have ended: it never did.
    std::thread::sleep(Duration::from_millis(2_000));
    assert_eq!(host.tally.sleeps_finished.load(Ordering::SeqCst), 0);
}

#[test]
fn a_client_that_hangs_up_cancels_its_calls() {
    let host = Host::start();
    let env = host.env();
    let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    client
        .set_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let err = client.call_raw("sleep", &sleep_params(1_000)).unwrap_err();
    assert!(matches!(err, ClientError::Io(_)), "{err}");
    let err = client.call_raw("ping", &[]).unwrap_err();
    assert!(
        err.to_string().contains("connect again"),
        "a timed-out client refuses further calls: {err}"
    );
    drop(client);
    std::thread::sleep(Duration::from_millis(2_000));
    assert_eq!(host.tally.sleeps_finished.load(Ordering::SeqCst), 0);
    // A call whose client stays finishes as usual.
    let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    client.call_raw("sleep", &sleep_params(10)).unwrap();
    assert_eq!(host.tally.sleeps_finished.load(Ordering::SeqCst), 1);
}

#[test]
fn an_async_call_given_up_on_leaves_the_connection_usable() {
    let host = Host::start();
    let env = host.env();
    host.runtime.block_on(async {
        let client = AsyncIpcClient::connect_to(env.endpoint(), env.token())
            .await
            .unwrap();
        let slow = tokio::time::timeout(
            Duration::from_millis(50),
            client.call_raw("sleep", &sleep_params(300)),
        )
        .await;
        assert!(slow.is_err(), "timed out");
        // A big frame whose call is dropped at once, perhaps mid-write.
        let big = "y".repeat(4 * 1024 * 1024);
        for wait in [0, 1, 5] {
            let _ = tokio::time::timeout(
                Duration::from_millis(wait),
                client.call_argv("echoargs", &["--", &big], None),
            )
            .await;
            let pong = client.call_raw("ping", &[]).await.unwrap();
            assert_eq!(rmp_serde::from_slice::<String>(&pong).unwrap(), "pong\n");
        }
        // The late answer to the sleep is dropped, not handed to a later
        // call.
        tokio::time::sleep(Duration::from_millis(400)).await;
        let pong = client.call_raw("ping", &[]).await.unwrap();
        assert_eq!(rmp_serde::from_slice::<String>(&pong).unwrap(), "pong\n");
    });
}

/// A raw connection past the hello, with `sleeps` sleep requests sent.
fn raw_sleeps(host: &Host, sleeps: &[u64]) -> std::os::unix::net::UnixStream {
    use gangway::ipc::protocol;
    let Endpoint::Unix(socket) = host.env().endpoint().clone() else {
        panic!()
    };
    let mut raw = std::os::unix::net::UnixStream::connect(socket).unwrap();
    let hello = protocol::Hello {
        v: protocol::VERSION,
        token: host.env().token().to_owned(),
    };
    protocol::write_frame(&mut raw, &protocol::encode(&hello)).unwrap();
    protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
    for (id, ms) in (1..).zip(sleeps) {
        let request = protocol::Request {
            id,
            method: "sleep".into(),
            params: Some(serde_bytes::ByteBuf::from(sleep_params(*ms))),
            argv: None,
            stdin: None,
            stdin_ready: false,
        };
        protocol::write_frame(&mut raw, &protocol::encode(&request)).unwrap();
    }
    raw
}

#[test]
fn shutdown_starts_no_call_still_waiting_to_be_read() {
    let mut host = Host::start_with(IpcServer::builder().max_in_flight(1));
    let raw = raw_sleeps(&host, &[300, 10, 10, 10, 10, 10]);
    wait_for_sleeps(&host, 1);
    let server = host.server.take().unwrap();
    let report = host
        .runtime
        .block_on(server.shutdown(Duration::from_secs(5)));
    assert_eq!(report.abandoned_calls, 0);
    let tally = &host.tally;
    assert_eq!(
        (
            tally.sleeps_started.load(Ordering::SeqCst),
            tally.sleeps_finished.load(Ordering::SeqCst)
        ),
        (1, 1),
        "the call in flight finished; none of the waiting ones began"
    );
    drop(raw);
}

#[test]
fn hanging_up_at_the_in_flight_limit_still_cancels_the_calls() {
    let host = Host::start_with(IpcServer::builder().max_in_flight(2));
    let raw = raw_sleeps(&host, &[1_000, 1_000, 1_000]);
    wait_for_sleeps(&host, 2);
    drop(raw);
    std::thread::sleep(Duration::from_millis(1_500));
    let tally = &host.tally;
    assert_eq!(
        (
            tally.sleeps_started.load(Ordering::SeqCst),
            tally.sleeps_finished.load(Ordering::SeqCst)
        ),
        (2, 0),
        "both running calls were cancelled, the third never began"
    );
}

/// Waits until `sleeps` sleep handlers have begun.
fn wait_for_sleeps(host: &Host, sleeps: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while host.tally.sleeps_started.load(Ordering::SeqCst) < sleeps {
        assert!(Instant::now() < deadline, "the sleep never started");
        std::thread::sleep(Duration::from_millis(5));
    }
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
    let err = IpcClient::connect_to(env.endpoint(), env.token()).unwrap_err();
    assert_eq!(
        err.remote().map(|r| (r.kind.as_str(), r.exit)),
        Some(("busy", 69)),
        "{err}"
    );
    drop(first);
    // The slot frees when the first connection closes.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Ok(mut third) = IpcClient::connect_to(env.endpoint(), env.token()) {
            third.call_raw("ping", &[]).unwrap();
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
