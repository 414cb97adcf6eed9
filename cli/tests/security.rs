//! The server's defences: a private socket, no stray TCP port, tokens,
//! malformed and oversized frames, load, and a real sandbox.

mod common;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::Duration;

use common::{Host, require, text};
use gangway::ipc::{AsyncIpcClient, ClientError, Endpoint, IpcClient, IpcServer, protocol};

fn socket_path(host: &Host) -> std::path::PathBuf {
    match host.env().endpoint() {
        Endpoint::Unix(path) => path.clone(),
        other => panic!("not a Unix socket: {other}"),
    }
}

fn client(host: &Host) -> IpcClient {
    let env = host.env();
    IpcClient::connect_to(env.endpoint(), env.token()).unwrap()
}

fn ping(client: &mut IpcClient) -> String {
    let reply = client.call_raw("ping", &[]).unwrap();
    rmp_serde::from_slice(&reply).unwrap()
}

#[test]
fn the_socket_is_private_and_removed_at_shutdown() {
    let host = Host::start();
    let socket = socket_path(&host);
    let dir = socket.parent().unwrap().to_path_buf();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700, "the directory");
    assert_eq!(mode(&socket), 0o600, "the socket");
    assert!(socket.as_os_str().len() < 108, "fits in sockaddr_un");
    drop(host);
    assert!(
        !dir.exists(),
        "shutdown removes the socket and its directory"
    );
}

/// Inodes of the TCP sockets this process listens on.
fn listening_tcp_inodes() -> Vec<String> {
    let mine: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            target
                .strip_prefix("socket:[")?
                .strip_suffix(']')
                .map(str::to_owned)
        })
        .collect();
    let mut listening = Vec::new();
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // Field 3 is the state (0A: LISTEN), field 9 the inode.
            if fields.get(3) == Some(&"0A")
                && fields
                    .get(9)
                    .is_some_and(|inode| mine.contains(&inode.to_string()))
            {
                listening.push(fields[9].to_owned());
            }
        }
    }
    listening
}

#[test]
fn a_unix_server_opens_no_tcp_port_and_a_tcp_server_needs_the_token() {
    let before = listening_tcp_inodes();
    let host = Host::start();
    assert_eq!(listening_tcp_inodes(), before, "no TCP port in Unix mode");
    drop(host);

    let host = Host::start_with(IpcServer::builder().tcp("127.0.0.1:0".parse().unwrap()));
    assert_eq!(
        listening_tcp_inodes().len(),
        before.len() + 1,
        "the TCP server listens"
    );
    let env = host.env();
    let mut good = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    assert_eq!(ping(&mut good), "pong\n");
    let err = IpcClient::connect_to(env.endpoint(), "wrong").unwrap_err();
    assert_eq!(err.remote().map(|r| r.kind.as_str()), Some("auth"), "{err}");
}

/// Sends a hello with `token` on a raw connection and returns the answer.
fn raw_hello(raw: &mut UnixStream, token: &str) -> Vec<u8> {
    let hello = protocol::Hello {
        v: protocol::VERSION,
        token: token.to_owned(),
    };
    protocol::write_frame(raw, &protocol::encode(&hello)).unwrap();
    protocol::read_frame(raw, 1 << 20).unwrap().unwrap()
}

/// The error the host answered with (a bare answer to a hello, an
/// `answer` frame after it), checking the connection then closes.
fn refusal(raw: &mut UnixStream, body: &[u8]) -> protocol::WireError {
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

#[test]
fn a_wrong_or_missing_token_is_refused_and_the_connection_closed() {
    let host = Host::start();
    let env = host.env();
    let err = IpcClient::connect_to(env.endpoint(), "not-the-token").unwrap_err();
    let remote = err.remote().expect("an auth error from the host");
    assert_eq!((remote.kind.as_str(), remote.exit), ("auth", 69));
    assert!(
        remote.message.contains("GANGWAY_TOKEN"),
        "{}",
        remote.message
    );

    // An empty token, and the token's prefix.
    for token in ["", &env.token()[..8]] {
        let mut raw = UnixStream::connect(socket_path(&host)).unwrap();
        let body = raw_hello(&mut raw, token);
        assert_eq!(refusal(&mut raw, &body).kind, "auth", "{token:?}");
    }

    // A request straight away, without the hello.
    let mut raw = UnixStream::connect(socket_path(&host)).unwrap();
    let request = protocol::Request {
        id: 9,
        method: "ping".into(),
        params: None,
        argv: None,
        json: None,
        stdin: None,
        stdin_ready: false,
    };
    protocol::write_frame(&mut raw, &common::call_frame(request)).unwrap();
    let body = protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
    let error = refusal(&mut raw, &body);
    assert_eq!(error.kind, "protocol");
    assert!(error.message.contains("hello"), "{}", error.message);

    // Another protocol version.
    let mut raw = UnixStream::connect(socket_path(&host)).unwrap();
    let hello = protocol::Hello {
        v: 99,
        token: env.token().to_owned(),
    };
    protocol::write_frame(&mut raw, &protocol::encode(&hello)).unwrap();
    let body = protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
    let error = refusal(&mut raw, &body);
    assert!(
        error.message.contains("version 99")
            && error
                .message
                .contains(&format!("version {}", protocol::VERSION)),
        "{}",
        error.message
    );

    let mut good = client(&host);
    assert_eq!(ping(&mut good), "pong\n", "others are unaffected");
}

#[test]
fn before_the_token_checks_out_nothing_large_is_read() {
    let host = Host::start();
    let mut raw = UnixStream::connect(socket_path(&host)).unwrap();
    raw.write_all(&(64 * 1024 * 1024u32).to_be_bytes()).unwrap();
    let body = protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
    let error = refusal(&mut raw, &body);
    assert_eq!(error.kind, "auth");
    assert!(
        error.message.contains("small hello carrying the token"),
        "{}",
        error.message
    );
}

#[test]
fn an_oversized_request_is_answered_not_cut_off() {
    let host = Host::start_with(IpcServer::builder().max_frame(4096));
    let mut raw = UnixStream::connect(socket_path(&host)).unwrap();
    let welcome: protocol::Welcome =
        protocol::decode(&raw_hello(&mut raw, host.env().token())).unwrap();
    assert_eq!(welcome.max_frame, 4096);
    // A whole mebibyte announced and sent: the host takes it in and drops
    // it, so the sender finishes writing and then reads why.
    let len = 1024 * 1024;
    let mut writer = raw.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        writer.write_all(&(len as u32).to_be_bytes())?;
        writer.write_all(&vec![0u8; len])
    });
    sender.join().unwrap().expect("the host drained the frame");
    let body = protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
    let error = refusal(&mut raw, &body);
    assert_eq!((error.kind.as_str(), error.exit), ("frame_too_large", 2));
    assert!(
        error
            .message
            .contains("1048576 bytes is over the 4096-byte limit"),
        "{}",
        error.message
    );

    // The clients check the limit from the welcome before sending.
    let mut client = client(&host);
    let big = "x".repeat(8192);
    let err = client
        .call_argv("echoargs", &[big.as_str()], None)
        .unwrap_err();
    assert!(
        matches!(err, ClientError::TooLarge { max: 4096, .. }),
        "{err}"
    );
    assert_eq!(err.exit_code(), 2);
    assert_eq!(
        ping(&mut client),
        "pong\n",
        "nothing was sent, the client still works"
    );
}

#[test]
fn a_response_over_the_limit_is_replaced_by_an_error() {
    let host = Host::start_with(IpcServer::builder().max_frame(4096));
    let mut client = client(&host);
    let err = client
        .call_argv("repeat", &["ab", "4000"], None)
        .unwrap_err();
    let remote = err.remote().expect("the host answers");
    assert_eq!(
        (remote.kind.as_str(), remote.exit),
        ("response_too_large", 1)
    );
    assert!(
        remote.message.contains("over the 4096-byte frame limit"),
        "{}",
        remote.message
    );
    let ok = client.call_argv("repeat", &["ab", "10"], None).unwrap();
    assert_eq!(
        ok,
        gangway::ipc::ArgvOutcome::Response(rmp_serde::to_vec(&"ab".repeat(10)).unwrap()),
        "the connection goes on"
    );
}

#[test]
fn idle_and_half_sent_hellos_lose_their_slot() {
    let host = Host::start_with(
        IpcServer::builder()
            .max_connections(2)
            .hello_timeout(Duration::from_millis(200)),
    );
    let socket = socket_path(&host);
    let mut silent = UnixStream::connect(&socket).unwrap();
    let mut half = UnixStream::connect(&socket).unwrap();
    half.write_all(&[0, 0, 0, 40, 0x82]).unwrap();
    for (name, raw) in [("silent", &mut silent), ("half", &mut half)] {
        raw.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let body = protocol::read_frame(raw, 1 << 20)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .unwrap();
        let error = refusal(raw, &body);
        assert_eq!(error.kind, "auth", "{name}");
        assert!(
            error.message.contains("in time"),
            "{name}: {}",
            error.message
        );
    }
    // Both slots are free again.
    let mut clients = [connect_within(&host, 5), connect_within(&host, 5)];
    for client in &mut clients {
        assert_eq!(ping(client), "pong\n");
    }
}

/// A client, once the host has a free slot within `seconds`.
fn connect_within(host: &Host, seconds: u64) -> IpcClient {
    let deadline = std::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        match IpcClient::connect_to(host.env().endpoint(), host.env().token()) {
            Ok(client) => return client,
            Err(err) => {
                assert!(
                    std::time::Instant::now() < deadline,
                    "no slot freed in {seconds}s: {err}"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

#[test]
fn a_client_that_stops_reading_is_cut_off_and_its_slot_freed() {
    // One connection for the scope: the next waits for the hog's.
    let host = Host::start_with(
        IpcServer::builder()
            .max_connections_per_scope(1)
            .io_timeout(Duration::from_millis(300)),
    );
    let mut hog = UnixStream::connect(socket_path(&host)).unwrap();
    raw_hello(&mut hog, host.env().token());
    // Ask for far more than the socket buffers hold, and never read it.
    let mut writer = hog.try_clone().unwrap();
    writer
        .set_write_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let asking = std::thread::spawn(move || {
        for id in 1..=64u64 {
            let request = protocol::Request {
                id,
                method: "repeat".into(),
                params: None,
                argv: Some(vec!["x".into(), "1000000".into()]),
                json: None,
                stdin: None,
                stdin_ready: false,
            };
            if protocol::write_frame(&mut writer, &common::call_frame(request)).is_err() {
                break;
            }
        }
    });
    let mut fresh = connect_within(&host, 10);
    assert_eq!(ping(&mut fresh), "pong\n");
    asking.join().unwrap();
    // What the hog can still read ends (or is reset): the host closed it.
    hog.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut rest = Vec::new();
    if let Err(error) = hog.read_to_end(&mut rest) {
        assert_eq!(
            error.kind(),
            std::io::ErrorKind::ConnectionReset,
            "the connection ends, it does not hang: {error}"
        );
    }
}

#[test]
fn bad_server_settings_are_refused_at_start() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let start = |builder: gangway::ipc::IpcServerBuilder| {
        runtime
            .block_on(builder.start(common::router(&common::Tally::default())))
            .map(|_| ())
            .unwrap_err()
    };
    let err = start(IpcServer::builder().token("short"));
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("16 to 1024 bytes, not 5"), "{err}");
    let err = start(IpcServer::builder().token("t".repeat(5000)));
    assert!(
        err.to_string().contains("16 to 1024 bytes, not 5000"),
        "{err}"
    );
    let err = start(IpcServer::builder().tcp("0.0.0.0:0".parse().unwrap()));
    assert!(
        err.to_string()
            .contains("0.0.0.0:0 is not a loopback address"),
        "{err}"
    );
    let err = start(IpcServer::builder().wrapper_dir("/tmp/a:b"));
    assert!(err.to_string().contains("holds `:`"), "{err}");
    let err = start(IpcServer::builder().socket_parent("/definitely/not/here"));
    assert!(err.to_string().contains("/definitely/not/here"), "{err}");
    let long = format!("/tmp/{}", "d".repeat(120));
    let err = start(IpcServer::builder().socket_parent(&long));
    assert!(
        err.to_string()
            .contains("too long a path for a Unix socket"),
        "{err}"
    );

    let server = runtime
        .block_on(
            IpcServer::builder()
                .tcp("0.0.0.0:0".parse().unwrap())
                .allow_non_loopback(true)
                .start(common::router(&common::Tally::default())),
        )
        .expect("allowed when asked for");
    runtime.block_on(server.shutdown(Duration::from_secs(1)));
}

#[test]
fn the_token_never_shows_in_debug_output() {
    let token = "0123456789abcdef-secret";
    let builder = IpcServer::builder().token(token);
    let env = gangway::ipc::SandboxEnv::new(Endpoint::Unix("/tmp/s".into()), token.into());
    let hello = protocol::Hello {
        v: 1,
        token: token.into(),
    };
    for shown in [
        format!("{builder:?}"),
        format!("{env:?}"),
        format!("{hello:?}"),
    ] {
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("redacted"), "{shown}");
    }
}

#[test]
fn ten_thousand_random_frames_never_stop_the_server() {
    let host = Host::start_with(IpcServer::builder().max_frame(4096));
    let socket = socket_path(&host);
    let mut good = client(&host);
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let token = host.env().token().to_owned();
    for round in 0..10_000u32 {
        let mut raw = UnixStream::connect(&socket).unwrap();
        raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        // Half the rounds get past the hello, to reach the request reader.
        if next() % 2 == 0 {
            raw_hello(&mut raw, &token);
        }
        let body_len = (next() % 64) as usize;
        let body: Vec<u8> = (0..body_len).map(|_| next() as u8).collect();
        let frame = match next() % 4 {
            // A length that matches the body.
            0 => [&(body_len as u32).to_be_bytes()[..], &body].concat(),
            // A length past the body: truncated.
            1 => [&(body_len as u32 + 10).to_be_bytes()[..], &body].concat(),
            // A length over the limit.
            2 => [&(next() as u32 | 0x1_0000).to_be_bytes()[..], &body].concat(),
            // Anything at all.
            _ => body,
        };
        let _ = raw.write_all(&frame);
        let _ = raw.shutdown(std::net::Shutdown::Write);
        let mut answer = Vec::new();
        let _ = raw.read_to_end(&mut answer);
        if round % 1000 == 0 {
            assert_eq!(ping(&mut good), "pong\n", "round {round}");
        }
    }
    assert_eq!(
        ping(&mut good),
        "pong\n",
        "the well-behaved client is still served"
    );
    assert_eq!(ping(&mut client(&host)), "pong\n", "and new ones too");
}

#[test]
fn sixty_four_clients_times_five_hundred_calls_all_matched() {
    let host = Host::start();
    let env = host.env();
    host.runtime.block_on(async {
        let mut tasks = Vec::new();
        for client_no in 0..64u32 {
            let client = AsyncIpcClient::connect_to(env.endpoint(), env.token())
                .await
                .unwrap();
            tasks.push(tokio::spawn(async move {
                // Several calls in flight on the one connection at a time.
                for batch in 0..50u32 {
                    let calls = (0..10u32).map(|i| {
                        let client = client.clone();
                        async move {
                            let word = format!("{client_no}-{batch}-{i}");
                            let reply = client
                                .call_argv("echoargs", &["--", &word], None)
                                .await
                                .unwrap();
                            let gangway::ipc::ArgvOutcome::Response(bytes) = reply else {
                                panic!()
                            };
                            let words: Vec<String> = rmp_serde::from_slice(&bytes).unwrap();
                            assert_eq!(words, [word]);
                        }
                    });
                    futures_join_all(calls).await;
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
    });
}

/// Runs futures concurrently on this task, without an extra dependency.
async fn futures_join_all<F: std::future::Future<Output = ()> + Send + 'static>(
    futures: impl Iterator<Item = F>,
) {
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    for handle in handles {
        handle.await.unwrap();
    }
}

#[test]
fn a_typed_client_gets_typed_responses_and_errors() {
    let host = Host::start();
    let mut client = client(&host);
    let fail = common::Fail {
        why: "typed".into(),
    };
    let response = client.call(&fail).unwrap();
    assert_eq!(
        response.unwrap_err().message(),
        "failed: typed",
        "the handler's error value, decoded"
    );
    let echoed = client
        .call(&common::EchoArgs {
            words: vec!["a".into(), "-b".into()],
        })
        .unwrap();
    assert_eq!(echoed, ["a", "-b"]);
}

#[test]
#[ignore = "needs bubblewrap"]
fn commands_work_inside_bwrap_without_a_network() {
    require(&["bwrap"]);
    let host = Host::start();
    let prefix = host.bwrap_prefix();
    let mut command = Command::new(&prefix[0]);
    command.args(&prefix[1..]).args([
        "sh",
        "-c",
        // No network inside: only loopback, and it is down or alone.
        "grep -c ':' /proc/net/dev; search --verbose sandboxed; echo piped | upper",
    ]);
    host.env().apply(&mut command);
    let out = common::run(command, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some("1"), "only the loopback device exists");
    let found: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(
        (found["query"].clone(), found["verbose"].clone()),
        ("sandboxed".into(), true.into())
    );
    assert_eq!(lines.next(), Some("PIPED"));
}

#[test]
fn a_call_sent_with_its_hello_never_runs_on_a_wrong_token() {
    // Over a Unix socket, and over TCP, where closing with the call unread
    // could reset the connection before the refusal is read.
    for host in [
        Host::start(),
        Host::start_with(IpcServer::builder().tcp("127.0.0.1:0".parse().unwrap())),
    ] {
        let env = host.env();
        let mut client = IpcClient::connect_deferred(env.endpoint(), "not-the-token").unwrap();
        let err = client.call_raw("counter", &[0x80]).unwrap_err();
        let remote = err.remote().expect("the host's refusal, read whole");
        assert_eq!((remote.kind.as_str(), remote.exit), ("auth", 69));
        assert_eq!(
            host.tally.counter.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "the call that came with a wrong token never ran"
        );
        let mut good = IpcClient::connect_deferred(env.endpoint(), env.token()).unwrap();
        let reply = good.call_raw("counter", &[0x80]).unwrap();
        assert_eq!(rmp_serde::from_slice::<u64>(&reply).unwrap(), 1);
        assert_eq!(
            good.max_frame(),
            protocol::DEFAULT_MAX_FRAME,
            "from the welcome"
        );
    }
}

#[test]
fn the_first_call_leaves_with_the_hello_without_waiting_for_the_welcome() {
    // A host that never answers the hello: the call must arrive anyway.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let endpoint = Endpoint::Unix(path);
    let caller = std::thread::spawn(move || {
        let mut client = IpcClient::connect_deferred(&endpoint, "t".repeat(32).as_str()).unwrap();
        client.set_timeout(Some(Duration::from_secs(30))).unwrap();
        // Ends when the host below hangs up.
        let _ = client.call_raw("ping", &[]);
    });
    let (mut raw, _) = listener.accept().unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let hello: protocol::Hello =
        protocol::decode(&protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap()).unwrap();
    assert_eq!(hello.token, "t".repeat(32));
    let frame: protocol::ClientFrame =
        protocol::decode(&protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap()).unwrap();
    let protocol::ClientFrame::Call(request) = frame else {
        panic!("not a call: {frame:?}");
    };
    assert_eq!(request.method, "ping", "the call came before any welcome");
    drop(raw);
    caller.join().unwrap();
}

#[test]
fn input_beyond_the_credit_granted_drops_the_connection() {
    let host = Host::start();
    let mut raw = UnixStream::connect(socket_path(&host)).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    raw_hello(&mut raw, host.env().token());
    let request = protocol::Request {
        id: 1,
        method: "sum".into(),
        params: None,
        argv: Some(vec![]),
        json: None,
        stdin: None,
        stdin_ready: true,
    };
    protocol::write_frame(&mut raw, &common::call_frame(request)).unwrap();
    // The host starts the call and grants credit for a window of input.
    let body = protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
    let protocol::HostFrame::InputWanted(wanted) = protocol::decode(&body).unwrap() else {
        panic!("no credit first");
    };
    assert_eq!(wanted.id, 1);
    // A client that sends more than it was granted is cut off: it cannot
    // make the host hold more than the window.
    let flood = vec![b'y'; wanted.bytes as usize + 1];
    protocol::write_frame(&mut raw, &protocol::encode_input(1, &flood)).unwrap();
    // The host closes the connection (a read timeout here would fail the
    // test) and never hands the handler the excess.
    let mut rest = Vec::new();
    match raw.read_to_end(&mut rest) {
        Ok(_) => {}
        Err(error) => assert_eq!(error.kind(), std::io::ErrorKind::ConnectionReset),
    }
    assert_eq!(
        host.tally
            .sum_chunks
            .load(std::sync::atomic::Ordering::SeqCst),
        0
    );
}

#[test]
fn a_json_call_is_bound_by_the_hosts_schema_and_bad_json_is_a_usage_error() {
    let host = Host::start();
    let env = host.env();
    let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    let reply = client
        .call_json("upper", &serde_json::json!({"text": "rust"}))
        .unwrap();
    assert_eq!(rmp_serde::from_slice::<String>(&reply).unwrap(), "RUST");
    let error = client
        .call_json("upper", &serde_json::json!({"txet": "rust"}))
        .unwrap_err();
    let remote = error.remote().expect("the host's usage error");
    assert_eq!((remote.kind.as_str(), remote.exit), ("usage", 2));
    assert!(remote.message.contains("did you mean `text`"), "{error}");

    // JSON text the host cannot parse (only a hand-made peer sends it).
    let mut raw = UnixStream::connect(socket_path(&host)).unwrap();
    raw_hello(&mut raw, env.token());
    // Sends a call of `upper` with these arguments and gives the error it
    // is answered with.
    let mut refused = |id, argv: Option<Vec<String>>, json: &str| {
        let request = protocol::Request {
            id,
            method: "upper".into(),
            params: None,
            argv,
            json: Some(json.into()),
            stdin: None,
            stdin_ready: false,
        };
        protocol::write_frame(&mut raw, &common::call_frame(request)).unwrap();
        let body = protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
        let Ok(protocol::HostFrame::Answer(response)) =
            protocol::decode::<protocol::HostFrame>(&body)
        else {
            panic!("an answer");
        };
        response.error.expect("an error")
    };
    let error = refused(1, None, "{\"text\": ");
    assert_eq!((error.kind.as_str(), error.exit), ("invalid_params", 2));
    assert!(
        error.message.contains("the JSON arguments do not parse"),
        "{}",
        error.message
    );
    // Arguments given two ways at once: refused, neither one chosen.
    let argv = Some(vec!["--text".into(), "argv".into()]);
    let error = refused(2, argv, r#"{"text": "json"}"#);
    assert_eq!(error.kind.as_str(), "invalid_params");
    assert!(error.message.contains("one way"), "{}", error.message);
}
