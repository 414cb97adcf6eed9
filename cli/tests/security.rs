//! The server's defences at the door: a private socket, no stray TCP
//! port, tokens and hellos, settings refused at start, no token in debug
//! output, and a real sandbox.

mod common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::Duration;

use common::wire::{client, connect_within, ping, raw_hello, refusal, socket_path};
use common::{Host, require, text};
use gangway::ipc::{Endpoint, IpcClient, IpcServer, protocol};

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

/// Held by each test here that listens on TCP, so the one that counts this
/// process's TCP ports sees its own alone (the tests run in parallel).
static TCP_PORTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes [`TCP_PORTS`], whether or not a test that held it failed.
fn tcp_ports() -> std::sync::MutexGuard<'static, ()> {
    TCP_PORTS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
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
    let _tcp = tcp_ports();
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

#[test]
fn bad_server_settings_are_refused_at_start() {
    let _tcp = tcp_ports();
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
    let _tcp = tcp_ports();
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
