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
    let mut bad = IpcClient::connect_to(env.endpoint(), "wrong").unwrap();
    let err = bad.call_raw("ping", &[]).unwrap_err();
    assert_eq!(err.remote().map(|r| r.kind.as_str()), Some("auth"), "{err}");
}

#[test]
fn a_wrong_or_missing_token_is_refused_and_the_connection_closed() {
    let host = Host::start();
    let env = host.env();
    let mut bad = IpcClient::connect_to(env.endpoint(), "not-the-token").unwrap();
    let err = bad.call_raw("ping", &[]).unwrap_err();
    let remote = err.remote().expect("an auth error from the host");
    assert_eq!((remote.kind.as_str(), remote.exit), ("auth", 69));
    assert!(
        remote.message.contains("GANGWAY_TOKEN"),
        "{}",
        remote.message
    );
    assert!(
        matches!(bad.call_raw("ping", &[]), Err(ClientError::Io(_))),
        "closed after refusing"
    );

    // A request that carries no token at all.
    let mut raw = UnixStream::connect(socket_path(&host)).unwrap();
    let request = protocol::Request {
        v: protocol::VERSION,
        id: 9,
        token: None,
        method: "ping".into(),
        params: None,
        argv: None,
        stdin: None,
    };
    protocol::write_frame(&mut raw, &protocol::encode(&request)).unwrap();
    let body = protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
    let response: protocol::Response = rmp_serde::from_slice(&body).unwrap();
    assert_eq!(response.error.unwrap().kind, "auth");
    assert!(
        protocol::read_frame(&mut raw, 1 << 20).unwrap().is_none(),
        "closed"
    );

    let mut good = client(&host);
    assert_eq!(ping(&mut good), "pong\n", "others are unaffected");
}

#[test]
fn an_oversized_frame_is_refused_before_it_is_read() {
    let host = Host::start_with(IpcServer::builder().max_frame(1024));
    let mut raw = UnixStream::connect(socket_path(&host)).unwrap();
    raw.write_all(&(64 * 1024 * 1024u32).to_be_bytes()).unwrap();
    let body = protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
    let response: protocol::Response = rmp_serde::from_slice(&body).unwrap();
    let error = response.error.unwrap();
    assert_eq!(error.kind, "frame_too_large");
    assert!(
        error.message.contains("over the 1024-byte limit"),
        "{}",
        error.message
    );
    let mut rest = Vec::new();
    raw.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "closed");
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
    for round in 0..10_000u32 {
        let mut raw = UnixStream::connect(&socket).unwrap();
        raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
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
    let socket_dir = socket_path(&host).parent().unwrap().to_path_buf();
    let socket_dir = socket_dir.to_str().unwrap();
    let wrappers = host.wrappers.path().to_str().unwrap();
    let mut command = Command::new("bwrap");
    command.args([
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--bind",
        socket_dir,
        socket_dir,
        "--ro-bind",
        wrappers,
        wrappers,
        "--unshare-net",
        "--unshare-pid",
        "--die-with-parent",
        "--",
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
