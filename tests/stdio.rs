//! The stdio transport against a real child process: the Rust test peer
//! (`tests/peers/stdio_peer.rs`) for every misbehaviour, and the Python
//! ACP and MCP SDKs as real peers.

mod support;

use support::processes::processes;
use support::runtime;

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gangway::stdio::{
    ExitOutcome, IncomingRequest, ResponseError, RpcError, StdioBuilder, StdioTransport,
};
use serde_json::{Value, json};

const PEER: &str = env!("CARGO_BIN_EXE_stdio-peer");

fn peer(options: StdioBuilder, args: &[&str]) -> StdioTransport {
    let mut command = tokio::process::Command::new(PEER);
    command.args(args);
    options.spawn(command).unwrap()
}

fn quick() -> StdioBuilder {
    StdioTransport::builder().rpc_timeout(Duration::from_secs(20))
}

#[test]
fn calls_echo_with_any_id_type_errors_and_out_of_order_answers() {
    runtime().block_on(async {
        let peer = Arc::new(peer(quick(), &[]));
        assert_eq!(
            peer.call("echo", json!({"a": [1, 2]})).await.unwrap(),
            json!({"a": [1, 2]})
        );
        assert_eq!(peer.call("string_id", json!("s")).await.unwrap(), "s");
        let err = peer
            .call("error", json!({"why": "test"}))
            .await
            .unwrap_err();
        assert_eq!(
            err.as_remote(),
            Some(ResponseError::new(-32000, "the peer refuses").with_data(json!({"why": "test"})))
        );
        // The slow call was sent first; the quick one is answered first.
        let slow = {
            let peer = peer.clone();
            tokio::spawn(async move { peer.call("delay", json!({"ms": 1500})).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        let quick = peer.call("delay", json!({"ms": 0})).await.unwrap();
        assert_eq!(quick, json!({"ms": 0}));
        assert!(!slow.is_finished(), "the slow one is still out");
        assert_eq!(slow.await.unwrap().unwrap(), json!({"ms": 1500}));
        assert_eq!(
            peer.shutdown(Duration::from_secs(5)).await,
            ExitOutcome::Exited(0)
        );
    });
}

#[test]
fn malformed_and_oversized_lines_are_dropped_and_the_call_still_answered() {
    runtime().block_on(async {
        let peer = peer(quick().max_frame(64 * 1024), &[]);
        // Ten oversized lines of 1 MiB each, between junk.
        for _ in 0..10 {
            let answer = peer
                .call("junk", json!({"oversized": 1024 * 1024}))
                .await
                .unwrap();
            assert_eq!(answer, "after the junk");
        }
        assert_eq!(peer.call("echo", json!(1)).await.unwrap(), 1);
    });
}

#[test]
fn a_peer_that_dies_mid_call_fails_every_call_at_once_with_its_stderr() {
    runtime().block_on(async {
        let peer = Arc::new(peer(quick().rpc_timeout(Duration::from_secs(600)), &[]));
        let waiting: Vec<_> = (0..20)
            .map(|_| {
                let peer = peer.clone();
                tokio::spawn(async move { peer.call("never", Value::Null).await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let started = Instant::now();
        let err = peer.call("die", Value::Null).await.unwrap_err();
        let RpcError::Closed { reason, stderr } = &err else {
            panic!("{err}")
        };
        // The exit status and stderr are waited for briefly, so on a very
        // busy machine the reason may lack the code; the end itself is sure.
        assert!(
            reason.starts_with("the peer closed its standard output"),
            "{err}"
        );
        assert!(
            reason == "the peer closed its standard output; it exited with code 3"
                || !reason.contains(';'),
            "{err}"
        );
        assert!(
            stderr.is_empty() || stderr == "peer: dying on purpose\n",
            "{err}"
        );
        assert_eq!(
            peer.stderr_tail(),
            "peer: dying on purpose\n",
            "the tail is there by now"
        );
        for call in waiting {
            let err = call.await.unwrap().unwrap_err();
            assert!(matches!(err, RpcError::Closed { .. }), "{err}");
        }
        // Not at the 600 s timeout: at once (generous bound for a busy machine).
        assert!(started.elapsed() < Duration::from_secs(10));
        let err = peer.call("echo", Value::Null).await.unwrap_err();
        assert!(
            matches!(err, RpcError::Closed { .. }),
            "later calls fail: {err}"
        );
        assert_eq!(
            peer.shutdown(Duration::from_secs(1)).await,
            ExitOutcome::Exited(3)
        );
    });
}

#[test]
fn a_peer_that_never_answers_times_out_and_the_others_go_on() {
    runtime().block_on(async {
        let peer = peer(quick(), &[]);
        let err = peer
            .call_with_timeout("never", Value::Null, Duration::from_millis(200))
            .await
            .unwrap_err();
        assert!(matches!(err, RpcError::Timeout { .. }), "{err}");
        assert_eq!(peer.call("echo", json!("next")).await.unwrap(), "next");
    });
}

#[test]
fn a_thousand_concurrent_calls_each_get_their_own_answer() {
    runtime().block_on(async {
        let peer = Arc::new(peer(quick(), &[]));
        let calls: Vec<_> = (0..1000)
            .map(|i| {
                let peer = peer.clone();
                tokio::spawn(async move {
                    let method = if i % 3 == 0 { "string_id" } else { "echo" };
                    (i, peer.call(method, json!({"i": i})).await)
                })
            })
            .collect();
        for call in calls {
            let (i, answer) = call.await.unwrap();
            assert_eq!(answer.unwrap(), json!({"i": i}));
        }
    });
}

#[test]
fn the_peers_requests_are_answered_by_the_handler_with_their_id() {
    runtime().block_on(async {
        let peer = peer(quick(), &[]);
        peer.set_request_handler(|request: IncomingRequest| async move {
            assert_eq!(request.method, "question");
            Ok(json!({"allowed": true, "asked": request.params["text"]}))
        });
        let reply = peer.call("ask", json!({})).await.unwrap();
        assert_eq!(
            reply,
            json!({"jsonrpc": "2.0", "id": 0, "result": {"allowed": true, "asked": "allow?"}})
        );
        let reply = peer.call("ask", json!({"string_id": true})).await.unwrap();
        assert_eq!(reply["id"], "q-1", "a string id comes back a string");
    });
}

#[test]
fn notifications_arrive_in_order_before_the_answer_and_respond_works_from_the_handler() {
    runtime().block_on(async {
        let peer = Arc::new(peer(quick(), &[]));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let weak = Arc::downgrade(&peer);
        let log = seen.clone();
        peer.set_notification_handler(Arc::new(move |message| {
            if message.get("id").is_some() {
                // A request: answer it from here.
                let peer = weak.upgrade().ok_or("gone")?;
                peer.respond_to(message["id"].clone(), json!("from the handler"))?;
            } else {
                log.lock()
                    .unwrap()
                    .push(message["params"]["n"].as_u64().unwrap());
            }
            Ok(())
        }));
        assert_eq!(
            peer.call("notify", json!({"count": 100})).await.unwrap(),
            "ticked"
        );
        assert_eq!(*seen.lock().unwrap(), (0..100).collect::<Vec<_>>());
        let reply = peer.call("ask", json!({})).await.unwrap();
        assert_eq!(reply["result"], "from the handler");
    });
}

/// A peer that has stopped reading its standard input (`stall`), until
/// [`release`](Stalled::release).
struct Stalled {
    dir: tempfile::TempDir,
}

impl Stalled {
    /// The peer reads again (within 10 ms: it looks for the file).
    fn release(&self) {
        std::fs::write(self.dir.path().join("release"), b"").unwrap();
    }
}

/// Makes the peer stop reading; returns once it has (its answer to
/// `stall` is its report that it stopped).
async fn stall(peer: &StdioTransport) -> Stalled {
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("release");
    peer.call("stall", json!({"release": release}))
        .await
        .unwrap();
    Stalled { dir }
}

#[test]
fn a_slow_reader_makes_writers_wait_not_fail() {
    runtime().block_on(async {
        let peer = Arc::new(peer(quick().write_queue(2), &[]));
        let stalled = stall(&peer).await;
        // 16 MiB of notifications: far past the pipe and the queue.
        let payload = "n".repeat(64 * 1024);
        let sent = Arc::new(AtomicUsize::new(0));
        let sender = {
            let peer = peer.clone();
            let sent = sent.clone();
            tokio::spawn(async move {
                for _ in 0..256 {
                    peer.notify("tick", json!({"data": payload})).await?;
                    sent.fetch_add(1, Ordering::SeqCst);
                }
                Ok::<_, RpcError>(())
            })
        };
        // The peer reads nothing until released, so however fast or slow
        // this machine is, the sender cannot be through: the pause is no
        // synchronisation, only the time a transport that buffered without
        // bound (or dropped) would need to show it.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            !sender.is_finished() && sent.load(Ordering::SeqCst) < 256,
            "the sender waits while the peer stalls ({} sent)",
            sent.load(Ordering::SeqCst)
        );
        stalled.release();
        tokio::time::timeout(Duration::from_secs(30), sender)
            .await
            .expect("the sender goes on once the peer reads")
            .unwrap()
            .expect("nothing failed");
        assert_eq!(peer.call("count", Value::Null).await.unwrap(), 256);
    });
}

#[test]
fn once_the_peer_stops_reading_calls_fail_closed() {
    runtime().block_on(async {
        let peer = peer(quick(), &[]);
        peer.call("close_stdin", Value::Null).await.unwrap();
        // The next request meets a closed pipe. (A process being spawned
        // elsewhere in this test binary may hold a copy of the pipe for a
        // moment, so a write can still land: try again until it fails.)
        let deadline = Instant::now() + Duration::from_secs(20);
        let err = loop {
            match peer
                .call_with_timeout("echo", Value::Null, Duration::from_millis(200))
                .await
            {
                Err(err @ RpcError::Closed { .. }) => break err,
                other => assert!(Instant::now() < deadline, "still open: {other:?}"),
            }
        };
        let RpcError::Closed { reason, .. } = &err else {
            panic!("{err}")
        };
        assert!(
            reason.starts_with("the peer stopped reading its standard input"),
            "{reason}"
        );
        let err = peer.notify("tick", Value::Null).await.unwrap_err();
        assert!(matches!(err, RpcError::Closed { .. }), "{err}");
    });
}

#[test]
fn spawning_outside_a_runtime_is_an_error_not_a_panic() {
    let err = StdioTransport::spawn(tokio::process::Command::new(PEER)).unwrap_err();
    assert!(err.to_string().contains("within a tokio runtime"), "{err}");
}

#[test]
fn shutdown_closes_stdin_and_kills_a_peer_that_lingers_at_the_deadline() {
    runtime().block_on(async {
        let peer = peer(quick(), &[]);
        assert_eq!(
            peer.shutdown(Duration::from_secs(5)).await,
            ExitOutcome::Exited(0)
        );
        assert_eq!(
            peer.shutdown(Duration::from_secs(5)).await,
            ExitOutcome::Exited(0),
            "the same answer again"
        );
        let err = peer.call("echo", Value::Null).await.unwrap_err();
        assert!(matches!(err, RpcError::Closed { .. }), "{err}");

        let lingering = self::peer(quick(), &["--linger"]);
        lingering.call("echo", Value::Null).await.unwrap();
        let started = Instant::now();
        let outcome = lingering.shutdown(Duration::from_millis(300)).await;
        assert_eq!(outcome, ExitOutcome::Killed);
        assert!(
            started.elapsed() >= Duration::from_millis(300),
            "killed only at the deadline"
        );
    });
}

#[test]
fn answers_written_just_before_the_peer_exits_are_not_lost() {
    runtime().block_on(async {
        for _ in 0..5 {
            let peer = peer(quick(), &[]);
            // A slow handler: the reader is still busy when the peer exits.
            peer.set_notification_handler(Arc::new(|_| {
                std::thread::sleep(Duration::from_millis(2));
                Ok(())
            }));
            let answer = peer.call("notify_then_exit", json!({"count": 100})).await;
            assert_eq!(answer.unwrap(), "ticked");
        }
    });
}

#[test]
fn request_handlers_that_call_the_peer_back_never_stall_reading() {
    runtime().block_on(async {
        let peer = Arc::new(peer(quick().max_concurrent_requests(1), &[]));
        let weak = Arc::downgrade(&peer);
        peer.set_request_handler(move |request: IncomingRequest| {
            let weak = weak.clone();
            async move {
                let peer = weak
                    .upgrade()
                    .ok_or_else(|| ResponseError::internal("gone"))?;
                // The answer to this call comes through the reader.
                let echoed = peer
                    .call("echo", request.params)
                    .await
                    .map_err(|e| ResponseError::internal(e.to_string()))?;
                Ok(json!({"echoed": echoed}))
            }
        });
        let answers = peer.call("ask_many", json!({"count": 5})).await.unwrap();
        let expected: Vec<Value> = (0..5).map(|q| json!({"echoed": {"q": q}})).collect();
        assert_eq!(answers, json!(expected));
    });
}

#[test]
fn a_call_given_up_on_before_it_is_written_is_never_written() {
    runtime().block_on(async {
        let peer = Arc::new(peer(
            quick()
                .write_queue(64)
                .cancel_notice(gangway::stdio::CancelNotice::CancelRequest),
            &[],
        ));
        // A written call that times out: its cancel notice follows it.
        let err = peer
            .call_with_timeout("never", Value::Null, Duration::from_millis(100))
            .await
            .unwrap_err();
        assert!(matches!(err, RpcError::Timeout { .. }), "{err}");
        // Then the peer stops reading, and 2 MiB is sent: more than a pipe
        // holds (Linux gives 64 KiB, and never more than 1 MiB to a program
        // that asks, which tokio does not), its writer's 64 KiB buffer and
        // the peer's 8 KiB one. All 32 fit the queue, so each `notify`
        // returns at once; what the pipe cannot take waits in the queue,
        // the writer stuck on the full pipe, until the peer reads again.
        let stalled = stall(&peer).await;
        for _ in 0..32 {
            peer.notify("tick", json!({"data": "f".repeat(64 * 1024)}))
                .await
                .unwrap();
        }
        // These wait in the queue behind the rest of the 2 MiB, which
        // cannot be written before the release, and are given up on there.
        for _ in 0..5 {
            let err = peer
                .call_with_timeout("probe", Value::Null, Duration::from_millis(50))
                .await
                .unwrap_err();
            assert!(matches!(err, RpcError::Timeout { .. }), "{err}");
        }
        stalled.release();
        let seen: Vec<String> =
            serde_json::from_value(peer.call("seen", Value::Null).await.unwrap()).unwrap();
        let never = seen.iter().position(|m| m == "never").unwrap();
        let cancel = seen.iter().position(|m| m == "$/cancelRequest").unwrap();
        assert!(
            never < cancel,
            "the request before its cancel notice: {seen:?}"
        );
        assert_eq!(
            seen.iter().filter(|m| *m == "$/cancelRequest").count(),
            1,
            "no notice for calls never written: {seen:?}"
        );
        assert!(!seen.iter().any(|m| m == "probe"), "{seen:?}");
    });
}

#[test]
fn a_peer_that_floods_requests_without_reading_answers_is_cut_off() {
    runtime().block_on(async {
        let peer = peer(quick().max_frame(64 * 1024), &[]);
        let err = peer
            .call("flood", json!({"count": 20_000}))
            .await
            .unwrap_err();
        let RpcError::Closed { reason, .. } = &err else {
            panic!("{err}")
        };
        assert!(
            reason.starts_with("the peer sends requests but does not read the answers"),
            "{reason}"
        );
    });
}

#[test]
fn a_program_that_cannot_start_is_named() {
    runtime().block_on(async {
        let err =
            StdioTransport::spawn(tokio::process::Command::new("/no/such/agent")).unwrap_err();
        assert!(matches!(err, RpcError::Io(_)), "{err}");
        assert!(
            err.to_string()
                .starts_with("cannot start `/no/such/agent`: "),
            "{err}"
        );
    });
}

#[test]
fn a_thousand_spawn_and_drop_cycles_leave_no_zombie_and_no_orphan() {
    let runtime = runtime();
    let mut peers = HashSet::new();
    let mut grandchildren = HashSet::new();
    runtime.block_on(async {
        for cycle in 0..1000u32 {
            let peer = peer(quick(), &[]);
            peers.insert(peer.pid().unwrap());
            // Every tenth peer starts children of its own first.
            if cycle % 10 == 0 {
                let pids = peer
                    .call("spawn_children", json!({"count": 2}))
                    .await
                    .unwrap();
                let pids: Vec<u32> = serde_json::from_value(pids).unwrap();
                assert_eq!(pids.len(), 2);
                grandchildren.extend(pids);
            }
            drop(peer);
        }
    });
    // Reaping runs on the runtime's tasks: give them a moment.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        // Zombies count: the peers are this process's children, and a
        // grandchild's parent (its peer) is gone, so init reaps it.
        let left: Vec<_> = processes()
            .into_iter()
            .filter(|p| {
                peers.contains(&p.pid)
                    || grandchildren.contains(&p.pid)
                    || peers.contains(&p.group)
                    || peers.contains(&p.session)
            })
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "left behind: {left:#?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(runtime);
}

mod python {
    //! The real SDKs as peers; `scripts/test` installs them.

    use super::*;

    fn python_peer(script: &str) -> StdioTransport {
        let mut command = tokio::process::Command::new("python3");
        command.arg(format!(
            "{}/tests/peers/{script}",
            env!("CARGO_MANIFEST_DIR")
        ));
        StdioTransport::builder()
            .rpc_timeout(Duration::from_secs(30))
            .spawn(command)
            .unwrap()
    }

    #[test]
    #[ignore = "needs python peers"]
    fn an_acp_agent_prompts_streams_updates_and_asks_permission() {
        runtime().block_on(async {
            let agent = Arc::new(python_peer("acp_agent.py"));
            let updates = Arc::new(Mutex::new(Vec::new()));
            let weak = Arc::downgrade(&agent);
            let log = updates.clone();
            agent.set_notification_handler(Arc::new(move |message| {
                match message["method"].as_str() {
                    Some("session/update") => log
                        .lock()
                        .unwrap()
                        .push(message["params"]["update"]["content"]["text"].clone()),
                    Some("session/request_permission") => {
                        let agent = weak.upgrade().ok_or("gone")?;
                        let option = message["params"]["options"][0]["optionId"].clone();
                        let id = message["id"].as_i64().ok_or("a numeric id")?;
                        agent.respond(
                            id,
                            json!({"outcome": {"outcome": "selected", "optionId": option}}),
                        )?;
                    }
                    other => return Err(format!("unexpected {other:?}").into()),
                }
                Ok(())
            }));
            let init = agent
                .call(
                    "initialize",
                    json!({"protocolVersion": 1,
                           "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": false}},
                           "clientInfo": {"name": "gangway-test", "version": "0"}}),
                )
                .await
                .unwrap();
            assert_eq!(init["protocolVersion"], 1);
            let session = agent
                .call("session/new", json!({"cwd": "/tmp", "mcpServers": []}))
                .await
                .unwrap();
            let session_id = session["sessionId"].as_str().unwrap().to_owned();
            let done = agent
                .call(
                    "session/prompt",
                    json!({"sessionId": session_id,
                           "prompt": [{"type": "text", "text": "hello"}]}),
                )
                .await
                .unwrap();
            assert_eq!(done, json!({"stopReason": "end_turn"}));
            assert_eq!(
                *updates.lock().unwrap(),
                ["echo: hello", "asking permission", "permission: allow"],
                "updates arrive through the handler, before the prompt's answer"
            );
            assert_eq!(agent.shutdown(Duration::from_secs(10)).await, ExitOutcome::Exited(0));
        });
    }

    #[test]
    #[ignore = "needs python peers"]
    fn an_mcp_server_initializes_lists_and_calls_tools() {
        runtime().block_on(async {
            let server = python_peer("mcp_server.py");
            let init = server
                .call(
                    "initialize",
                    json!({"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "gangway-test", "version": "0"}}),
                )
                .await
                .unwrap();
            assert_eq!(init["protocolVersion"], "2025-06-18");
            server
                .notify("notifications/initialized", Value::Null)
                .await
                .unwrap();
            let tools = server.call("tools/list", json!({})).await.unwrap();
            let names: Vec<&str> = tools["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, ["add", "echo"]);
            assert_eq!(
                tools["tools"][0]["inputSchema"]["required"],
                json!(["a", "b"])
            );
            let sum = server
                .call(
                    "tools/call",
                    json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
                )
                .await
                .unwrap();
            assert_eq!(sum["content"][0]["text"], "5");
            assert_eq!(sum["isError"], false);
            let err = server.call("no/such/method", json!({})).await.unwrap_err();
            assert_eq!(
                err.as_remote().map(|e| e.code),
                Some(ResponseError::METHOD_NOT_FOUND)
            );
            assert_eq!(
                server.shutdown(Duration::from_secs(10)).await,
                ExitOutcome::Exited(0)
            );
        });
    }
}
