//! The server's lifecycle and limits: shutdown with calls in flight, the
//! per-call timeout, the connection limit, and the environment a child gets.
//!
//! The tests wait on what the host shows (a `sleep` call started, ended,
//! finished), never on a sleep of their own; wall-clock bounds are only
//! generous limits for a failure.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::{Host, Tally, wait_until};
use gangway::ipc::{AsyncIpcClient, ClientError, Endpoint, IpcClient, IpcServer};

/// How long a test waits for something before it fails: only a failure
/// takes this long.
const PATIENCE: Duration = Duration::from_secs(30);

/// A `sleep` that only cancellation ends within the test: twice
/// [`PATIENCE`].
const FOREVER_MS: u64 = 60_000;

fn sleep_params(ms: u64) -> Vec<u8> {
    common::Sleep::params(ms)
}

/// The host's `sleep` calls, as the test sees them: begun, finished, and
/// alive. Each call runs on its own clone of the registered command, which
/// holds the tally's counters, and drops it when the call ends, finished or
/// cancelled; so the counters' reference count over its count with no call
/// running is the number of calls alive.
struct Sleeps {
    tally: Tally,
    idle: usize,
}

impl Sleeps {
    /// Watches `host`'s sleeps; none may be running yet.
    fn watch(host: &Host) -> Self {
        let tally = host.tally.clone();
        let idle = Arc::strong_count(&tally.sleeps_finished);
        Sleeps { tally, idle }
    }

    fn started(&self) -> u64 {
        self.tally.sleeps_started.load(Ordering::SeqCst)
    }

    fn finished(&self) -> u64 {
        self.tally.sleeps_finished.load(Ordering::SeqCst)
    }

    /// Calls alive (after a shutdown the registered command goes too, so
    /// the count may fall below `idle`).
    fn alive(&self) -> usize {
        Arc::strong_count(&self.tally.sleeps_finished).saturating_sub(self.idle)
    }

    /// Waits until `count` handlers have begun.
    fn wait_started(&self, count: u64) {
        wait_until(&format!("{count} sleep(s) started"), || {
            self.started() >= count
        });
    }

    /// Waits until no call is alive: each finished or was cancelled.
    fn wait_all_ended(&self) {
        wait_until("every sleep call ended", || self.alive() == 0);
    }

    /// After a shutdown: waits until the registered command and every call
    /// are gone, leaving only the test's own handles on the counters.
    fn wait_all_gone_after_shutdown(&self) {
        wait_until("the command and every call dropped", || {
            Arc::strong_count(&self.tally.sleeps_finished) == self.idle - 1
        });
    }
}

#[test]
fn shutdown_lets_calls_in_flight_finish_then_removes_the_socket() {
    let mut host = Host::start();
    let sleeps = Sleeps::watch(&host);
    let env = host.env();
    let Endpoint::Unix(socket) = env.endpoint().clone() else {
        panic!()
    };
    let caller = {
        let env = env.clone();
        std::thread::spawn(move || {
            let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
            client.set_timeout(Some(PATIENCE)).unwrap();
            client.call_raw("sleep", &sleep_params(400))
        })
    };
    sleeps.wait_started(1);
    let server = host.server.take().unwrap();
    let started = Instant::now();
    let report = host.runtime.block_on(server.shutdown(2 * PATIENCE));
    assert_eq!(report.abandoned_calls, 0);
    assert!(
        started.elapsed() < PATIENCE,
        "it waited for the call, not for the deadline"
    );
    let reply = caller
        .join()
        .unwrap()
        .expect("the call in flight is answered");
    assert_eq!(rmp_serde::from_slice::<u64>(&reply).unwrap(), 400);
    assert_eq!(sleeps.finished(), 1);
    assert!(!socket.exists() && !socket.parent().unwrap().exists());
    assert!(
        IpcClient::connect_to(env.endpoint(), env.token()).is_err(),
        "no longer listening"
    );
}

#[test]
fn shutdown_cancels_the_calls_left_at_the_deadline() {
    let mut host = Host::start();
    let sleeps = Sleeps::watch(&host);
    let env = host.env();
    let caller = std::thread::spawn(move || {
        let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
        client.set_timeout(Some(PATIENCE)).unwrap();
        client.call_raw("sleep", &sleep_params(FOREVER_MS))
    });
    sleeps.wait_started(1);
    assert_eq!(sleeps.alive(), 1, "the running call holds the counters");
    let server = host.server.take().unwrap();
    let started = Instant::now();
    let report = host
        .runtime
        .block_on(server.shutdown(Duration::from_millis(200)));
    assert_eq!(report.abandoned_calls, 1, "the host says it cancelled it");
    assert!(started.elapsed() < PATIENCE);
    let err = caller.join().unwrap().unwrap_err();
    assert!(
        !matches!(&err, ClientError::Io(io) if matches!(io.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)),
        "the caller hears the end, not its own timeout: {err}"
    );
    // The call is gone long before its sleep could end, and never finished.
    sleeps.wait_all_gone_after_shutdown();
    assert_eq!(sleeps.finished(), 0);
}

#[test]
fn a_client_that_hangs_up_cancels_its_calls() {
    let host = Host::start();
    let sleeps = Sleeps::watch(&host);
    let env = host.env();
    let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    client
        .set_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let err = client
        .call_raw("sleep", &sleep_params(FOREVER_MS))
        .unwrap_err();
    assert!(matches!(err, ClientError::Io(_)), "{err}");
    let err = client.call_raw("ping", &[]).unwrap_err();
    assert!(
        err.to_string().contains("connect again"),
        "a timed-out client refuses further calls: {err}"
    );
    // The handler is running when the client hangs up...
    sleeps.wait_started(1);
    assert_eq!(sleeps.alive(), 1, "the running call holds the counters");
    drop(client);
    // ...and the call is gone long before its sleep could end, unfinished.
    sleeps.wait_all_ended();
    assert_eq!(sleeps.finished(), 0);
    // A call whose client stays finishes as usual.
    let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    client.call_raw("sleep", &sleep_params(10)).unwrap();
    assert_eq!((sleeps.started(), sleeps.finished()), (2, 1));
}

#[test]
fn an_async_call_given_up_on_leaves_the_connection_usable() {
    let host = Host::start();
    let sleeps = Sleeps::watch(&host);
    let env = host.env();
    let client = host.runtime.block_on(async {
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
        client
    });
    // The sleep given up on has finished, so its answer is on its way or
    // arrived; it is dropped, not handed to a later call.
    // (Given up on before it was written, it never runs: then there is no
    // late answer to drop, and nothing to wait for.)
    wait_until("the sleep given up on finished", || {
        sleeps.finished() == sleeps.started()
    });
    host.runtime.block_on(async {
        for _ in 0..2 {
            let pong = client.call_raw("ping", &[]).await.unwrap();
            assert_eq!(rmp_serde::from_slice::<String>(&pong).unwrap(), "pong\n");
        }
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
            json: None,
            stdin: None,
            stdin_ready: false,
        };
        protocol::write_frame(&mut raw, &common::call_frame(request)).unwrap();
    }
    raw
}

#[test]
fn shutdown_starts_no_call_still_waiting_to_be_read() {
    let mut host = Host::start_with(IpcServer::builder().max_in_flight(1));
    let sleeps = Sleeps::watch(&host);
    // The first call runs until cancelled; the others wait to be read. At
    // the deadline the running one is abandoned, and none of the waiting
    // ones is read and started meanwhile.
    let raw = raw_sleeps(&host, &[FOREVER_MS, 10, 10, 10, 10, 10]);
    sleeps.wait_started(1);
    let server = host.server.take().unwrap();
    let report = host
        .runtime
        .block_on(server.shutdown(Duration::from_millis(300)));
    assert_eq!(report.abandoned_calls, 1);
    drop(raw);
    sleeps.wait_all_gone_after_shutdown();
    assert_eq!(
        (sleeps.started(), sleeps.finished()),
        (1, 0),
        "the call in flight was cancelled; none of the waiting ones began"
    );
}

#[test]
fn hanging_up_at_the_in_flight_limit_still_cancels_the_calls() {
    let host = Host::start_with(IpcServer::builder().max_in_flight(2));
    let sleeps = Sleeps::watch(&host);
    let raw = raw_sleeps(&host, &[FOREVER_MS, FOREVER_MS, FOREVER_MS]);
    sleeps.wait_started(2);
    assert_eq!(sleeps.alive(), 2, "the running calls hold the counters");
    drop(raw);
    // Both calls are gone long before their sleeps could end.
    sleeps.wait_all_ended();
    assert_eq!(
        (sleeps.started(), sleeps.finished()),
        (2, 0),
        "both running calls were cancelled, the third never began"
    );
}

#[test]
fn a_call_over_the_timeout_is_answered_with_a_timeout() {
    let host =
        Host::start_with(IpcServer::builder().call_timeout(Some(Duration::from_millis(100))));
    let env = host.env();
    let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    let err = client.call_raw("sleep", &sleep_params(5_000)).unwrap_err();
    let remote = err.remote().expect("the host answers");
    assert_eq!((remote.kind.as_str(), remote.exit), ("timeout", 124));
    assert_eq!(remote.message, "command `sleep` timed out after 100ms");
    let reply = client.call_raw("sleep", &sleep_params(1)).unwrap();
    assert_eq!(
        rmp_serde::from_slice::<u64>(&reply).unwrap(),
        1,
        "the connection still serves"
    );
}

#[test]
fn connections_past_the_limit_are_turned_away_busy() {
    // A backstop of one connection, which another scope holds.
    let host = Host::start_with(IpcServer::builder().max_connections(1));
    let server = host.server.as_ref().unwrap();
    let other = server.scope(gangway::ipc::Scope::new("other"));
    let mut holder = IpcClient::connect_to(other.endpoint(), other.token()).unwrap();
    holder.call_raw("ping", &[]).unwrap();
    // Past the backstop a scope still has its guaranteed four, and no more.
    let env = host.env();
    let guaranteed: Vec<IpcClient> = (0..4)
        .map(|_| IpcClient::connect_to(env.endpoint(), env.token()).unwrap())
        .collect();
    let err = IpcClient::connect_to(env.endpoint(), env.token()).unwrap_err();
    assert_eq!(
        err.remote().map(|r| (r.kind.as_str(), r.exit)),
        Some(("busy", 69)),
        "{err}"
    );
    // The backstop's place frees when the other scope's connection closes.
    drop(holder);
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Ok(mut fifth) = IpcClient::connect_to(env.endpoint(), env.token()) {
            fifth.call_raw("ping", &[]).unwrap();
            break;
        }
        assert!(Instant::now() < deadline, "the freed place is never reused");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(guaranteed);
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
        format!(
            "{}|{}|{}",
            env.endpoint(),
            env.token(),
            common::GANGWAY_CLIENT
        )
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

#[test]
fn a_handler_sees_its_caller_leave_through_its_context() {
    use gangway::ipc::protocol;
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    let host = common::Host::start();
    let env = host.env();
    let path = match env.endpoint() {
        gangway::ipc::Endpoint::Unix(path) => path.clone(),
        other => panic!("not a Unix socket: {other}"),
    };
    let mut raw = std::os::unix::net::UnixStream::connect(path).unwrap();
    let hello = protocol::Hello {
        v: protocol::VERSION,
        token: env.token().to_owned(),
    };
    protocol::write_frame(&mut raw, &protocol::encode(&hello)).unwrap();
    protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
    let request = protocol::Request {
        id: 1,
        method: "linger".into(),
        params: None,
        argv: None,
        json: None,
        stdin: None,
        stdin_ready: false,
    };
    protocol::write_frame(&mut raw, &common::call_frame(request)).unwrap();
    let until = |what: &str, done: &dyn Fn() -> bool| {
        let started = Instant::now();
        while !done() {
            assert!(started.elapsed() < Duration::from_secs(30), "{what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    until("the call started", &|| {
        host.tally.waits_started.load(Ordering::SeqCst) == 1
    });
    assert_eq!(host.tally.waits_caller_gone.load(Ordering::SeqCst), 0);
    // The caller leaves, as a process killed mid-call does.
    drop(raw);
    until("the handler saw its caller leave", &|| {
        host.tally.waits_caller_gone.load(Ordering::SeqCst) == 1
    });
}

#[test]
fn calls_waiting_to_start_at_shutdown_are_told_they_did_not_start() {
    let mut host = Host::start_with(IpcServer::builder().max_in_flight(1));
    let env = host.env();
    let client = host
        .runtime
        .block_on(AsyncIpcClient::connect_to(env.endpoint(), env.token()))
        .unwrap();
    let none: &[&str] = &[];
    let running = {
        let client = client.clone();
        host.runtime
            .spawn(async move { client.call_argv("linger", none, None).await })
    };
    wait_until("the first call runs", || {
        host.tally.waits_started.load(Ordering::SeqCst) == 1
    });
    let waiting = host
        .runtime
        .block_on(client.call_argv_streaming("ping", none, None))
        .unwrap();
    // The host answers frames in the order they come: once it answered a
    // list sent after the ping, it has read the ping, which waits to start.
    host.runtime.block_on(client.list()).unwrap();
    let server = host.server.take().unwrap();
    host.runtime
        .block_on(server.shutdown(Duration::from_millis(300)));
    let error = host.runtime.block_on(waiting.finish()).unwrap_err();
    let remote = error.remote().expect("an answer from the host");
    assert_eq!((remote.kind.as_str(), remote.exit), ("busy", 69));
    assert!(
        remote.message.contains("shutting down"),
        "{}",
        remote.message
    );
    // The call that was running was abandoned at the deadline.
    assert!(host.runtime.block_on(running).unwrap().is_err());
}

#[test]
fn a_handler_that_keeps_its_context_sees_shutdown_when_the_server_stops() {
    use common::process::{finish, spawn};
    use gangway::ipc::CancelReason;
    let (mut host, probes) = common::streaming::probed_host(
        IpcServer::builder(),
        common::Style::Scripts,
        Duration::from_millis(300),
    );
    let caller = spawn(host.shell_command(&["sh"], "keep", &[]));
    wait_until("the handler started", || probes.kept.count() == 1);
    let kept = probes.kept.get(0);
    assert_eq!(kept.cancel_reason(), None);
    let server = host.server.take().unwrap();
    let report = host
        .runtime
        .block_on(server.shutdown(Duration::from_millis(100)));
    assert_eq!(report.abandoned_calls, 1);
    // The handler is gone; the context it kept says why.
    wait_until("the kept context cancelled", || kept.is_cancelled());
    assert_eq!(kept.cancel_reason(), Some(CancelReason::Shutdown));
    let (code, stdout, stderr) = finish(caller);
    assert_eq!((code, stdout.as_str()), (Some(69), ""), "{stderr}");
}
