//! The server's defences against what comes down a connection: frames
//! and responses over the limit, random bytes, a client that stops reading,
//! input beyond the credit granted, bad JSON arguments, and load.

mod common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use common::Host;
use common::wire::{client, connect_within, ping, raw_hello, refusal, socket_path};
use gangway::ipc::{AsyncIpcClient, ClientError, IpcClient, IpcServer, protocol};

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
    let chunk = protocol::ClientFrame::Input(protocol::InputChunk {
        id: 1,
        data: serde_bytes::ByteBuf::from(flood),
    });
    protocol::write_frame(&mut raw, &protocol::encode(&chunk)).unwrap();
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
