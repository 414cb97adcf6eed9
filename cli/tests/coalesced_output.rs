//! A call's small writes travel gathered: many `ctx.stdout` writes made
//! while the connection's writer is busy go out as few frames, stdout and
//! stderr keep their exact order, and nothing written is held back past
//! the handler's next await.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gangway::IpcCommand;
use gangway::ipc::protocol::OutputStream;
use gangway::ipc::{ArgvOutcome, CallContext, CallEvent, IpcClient, IpcRouter, IpcServer};
use serde::Serialize;
use tokio::sync::Notify;

/// Write `lines` short lines to stdout, one write each, awaiting nothing
/// else; with `both`, each followed by one on stderr.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "chatter", response = ())]
struct Chatter {
    #[ipc(positional)]
    lines: u32,
    both: bool,
    #[ipc(context)]
    #[serde(skip)]
    ctx: CallContext,
}

impl Chatter {
    async fn handle(&mut self) {
        for i in 0..self.lines {
            if self.ctx.stdout(format!("o{i}\n")).await.is_err() {
                return;
            }
            if self.both && self.ctx.stderr(format!("e{i}\n")).await.is_err() {
                return;
            }
        }
    }
}

/// Write a line, then wait to be released (or 30 s): `released` says
/// which came first.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "then_wait", response = bool)]
struct ThenWait {
    #[ipc(context)]
    #[serde(skip)]
    ctx: CallContext,
    #[ipc(state)]
    #[serde(skip)]
    release: Arc<Notify>,
}

impl ThenWait {
    async fn handle(&mut self) -> bool {
        let _ = self.ctx.stdout("ready\n").await;
        tokio::time::timeout(Duration::from_secs(30), self.release.notified())
            .await
            .is_ok()
    }
}

/// A server of both commands on a runtime of two workers, as on the
/// 2-core machines; the runtime goes with it.
fn serve(release: &Arc<Notify>) -> (tokio::runtime::Runtime, IpcServer) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let router = IpcRouter::new()
        .register(Chatter {
            lines: 0,
            both: false,
            ctx: CallContext::detached(),
        })
        .register(ThenWait {
            ctx: CallContext::detached(),
            release: release.clone(),
        });
    let server = runtime.block_on(IpcServer::start(router)).unwrap();
    (runtime, server)
}

/// Calls `chatter` and gives every output event, in order.
fn chatter(server: &IpcServer, words: &[&str]) -> Vec<(OutputStream, Vec<u8>)> {
    let env = server.sandbox_env();
    let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    let mut events = Vec::new();
    client
        .call_argv_streaming("chatter", words, None, &mut |event| {
            if let CallEvent::Output { stream, data } = event {
                events.push((stream, data.into_owned()));
            }
            Ok(())
        })
        .unwrap();
    events
}

#[test]
fn ten_thousand_small_writes_travel_in_few_frames() {
    let (_runtime, server) = serve(&Arc::default());
    let events = chatter(&server, &["10000"]);
    let text: Vec<u8> = events.iter().flat_map(|(_, data)| data.clone()).collect();
    let expected: String = (0..10_000).map(|i| format!("o{i}\n")).collect();
    assert_eq!(String::from_utf8(text).unwrap(), expected);
    assert!(
        events
            .iter()
            .all(|(stream, _)| *stream == OutputStream::Stdout),
        "all on stdout"
    );
    // One frame per write would be 10,000.
    assert!(
        events.len() <= 1_000,
        "{} frames for 10,000 writes",
        events.len()
    );
}

#[test]
fn stdout_and_stderr_keep_their_exact_order_when_gathered() {
    let (_runtime, server) = serve(&Arc::default());
    let events = chatter(&server, &["2000", "--both"]);
    // Gathered, a stream's writes join only while the other stream has
    // not written in between: every event is a run of one stream, and the
    // runs alternate line by line.
    let mut seen = Vec::new();
    for (stream, data) in &events {
        let text = String::from_utf8(data.clone()).unwrap();
        for line in text.lines() {
            seen.push((*stream, line.to_owned()));
        }
    }
    let expected: Vec<(OutputStream, String)> = (0..2000)
        .flat_map(|i| {
            [
                (OutputStream::Stdout, format!("o{i}")),
                (OutputStream::Stderr, format!("e{i}")),
            ]
        })
        .collect();
    assert_eq!(seen, expected);
}

#[test]
fn output_is_not_held_back_past_the_handlers_next_await() {
    let release = Arc::new(Notify::new());
    let (_runtime, server) = serve(&release);
    let env = server.sandbox_env();
    let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    let seen_first = Arc::new(AtomicBool::new(false));
    let outcome = client
        .call_argv_streaming("then_wait", &[] as &[&str], None, &mut |event| {
            if let CallEvent::Output { data, .. } = event {
                assert_eq!(&*data, b"ready\n");
                // The line came while the handler waits: let it go.
                seen_first.store(true, Ordering::SeqCst);
                release.notify_one();
            }
            Ok(())
        })
        .unwrap();
    assert!(seen_first.load(Ordering::SeqCst), "the line arrived");
    // `true`: released by the line's arrival, not after 30 s.
    let ArgvOutcome::Response(answer) = outcome else {
        panic!("an answer, not help: {outcome:?}")
    };
    let released: bool = rmp_serde::from_slice(&answer).unwrap();
    assert!(
        released,
        "the handler was released by the caller seeing its line"
    );
}
