//! A JSON-RPC peer for the stdio transport's tests and benchmark: echoes,
//! and misbehaves on request. One JSON message per line on stdin/stdout.
//!
//! Methods (the response echoes the request's id, with its type):
//! - `echo`: the params back.
//! - `delay` `{ms}`: the params back after `ms`, from another thread (so
//!   answers come out of order).
//! - `string_id`: the params back, under the id as a string.
//! - `error`: an error response with data.
//! - `junk` `{oversized}`: a blank line, non-JSON, a JSON array of numbers,
//!   and a line of `oversized` bytes, then the answer.
//! - `notify` `{count}`: `count` notifications `tick` `{n}`, then the answer.
//! - `ask`: a request `question` to the caller (numeric id 0, or the
//!   string `"q-<n>"` when params say `{"string_id": true}`), then the
//!   caller's answer (its whole response message) as the result.
//! - `die`: a line on stderr, then exit code 3, without answering.
//! - `never`: no answer.
//! - `spawn_children` `{count}`: starts `count` `sleep 600` children in the
//!   peer's process group; answers their pids.
//! - `stall` `{release}`: answers, then reads nothing more from stdin
//!   until the file `release` exists (looked for every 10 ms). The answer
//!   is the peer's report that it has stopped reading: it writes nothing
//!   after it and reads nothing before the file appears, so a caller that
//!   has the answer knows the peer stalled, and decides when it resumes.
//! - `count`: how many `tick` notifications the peer has received.
//! - `notify_then_exit` `{count}`: `count` notifications, the answer, then
//!   exit 0 at once.
//! - `ask_many` `{count}`: `count` `question` requests to the caller, all
//!   at once; answers the caller's own requests meanwhile (`echo` only);
//!   then the answers, in order, as the result.
//! - `flood` `{count}`: `count` `question` requests, then stops reading.
//! - `seen`: every method received so far, in order.
//! - `close_stdin`: closes its standard input, answers, and lives on for
//!   five seconds with its stdout open.
//!
//! At the end of stdin the peer exits 0, unless started with `--linger`,
//! when it sleeps on (to be killed).

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

fn main() {
    let linger = std::env::args().any(|a| a == "--linger");
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let send = {
        let out = out.clone();
        move |message: &Value| {
            let mut out = out.lock().unwrap();
            let _ = writeln!(out, "{message}");
            let _ = out.flush();
        }
    };
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut ticks = 0u64;
    let mut questions = 0u64;
    let mut seen: Vec<String> = Vec::new();
    while let Some(Ok(line)) = lines.next() {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            eprintln!("peer: not JSON: {line}");
            continue;
        };
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        if !method.is_empty() {
            seen.push(method.clone());
        }
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let Some(id) = message.get("id").cloned() else {
            if method == "tick" {
                ticks += 1;
            }
            continue;
        };
        let answer = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
        match method.as_str() {
            "echo" => send(&answer(params)),
            "delay" => {
                let send = send.clone();
                let reply = answer(params.clone());
                let ms = params["ms"].as_u64().unwrap_or(0);
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(ms));
                    send(&reply);
                });
            }
            "string_id" => send(&json!({"jsonrpc": "2.0", "id": id.to_string(), "result": params})),
            "error" => send(&json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32000, "message": "the peer refuses", "data": params}})),
            "junk" => {
                let oversized = params["oversized"].as_u64().unwrap_or(0) as usize;
                let mut out = out.lock().unwrap();
                let _ = writeln!(out);
                let _ = writeln!(out, "this is not JSON");
                let _ = writeln!(out, "[1, 2, 3]");
                let _ = writeln!(
                    out,
                    "{{\"id\": {}, \"result\": \"{}\"}}",
                    id,
                    "x".repeat(oversized)
                );
                let _ = writeln!(out, "{}", answer(json!("after the junk")));
                let _ = out.flush();
            }
            "notify" => {
                for n in 0..params["count"].as_u64().unwrap_or(0) {
                    send(&json!({"jsonrpc": "2.0", "method": "tick", "params": {"n": n}}));
                }
                send(&answer(json!("ticked")));
            }
            "ask" => {
                let question_id = if params["string_id"].as_bool() == Some(true) {
                    json!(format!("q-{questions}"))
                } else {
                    json!(questions)
                };
                questions += 1;
                send(
                    &json!({"jsonrpc": "2.0", "id": question_id, "method": "question",
                    "params": {"text": "allow?"}}),
                );
                // The next line is the caller's answer.
                let reply = lines
                    .next()
                    .and_then(Result::ok)
                    .and_then(|line| serde_json::from_str::<Value>(&line).ok())
                    .unwrap_or(Value::Null);
                send(&answer(reply));
            }
            "die" => {
                eprintln!("peer: dying on purpose");
                std::process::exit(3);
            }
            "never" => {}
            "spawn_children" => {
                let pids: Vec<u32> = (0..params["count"].as_u64().unwrap_or(0))
                    .filter_map(|_| {
                        std::process::Command::new("sleep")
                            .arg("600")
                            .stdin(std::process::Stdio::null())
                            .stdout(std::process::Stdio::null())
                            .stderr(std::process::Stdio::null())
                            .spawn()
                            .ok()
                            .map(|child| child.id())
                    })
                    .collect();
                send(&answer(json!(pids)));
            }
            "stall" => {
                let release =
                    std::path::PathBuf::from(params["release"].as_str().unwrap_or_default());
                send(&answer(Value::Null));
                while !release.exists() {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            "count" => send(&answer(json!(ticks))),
            "seen" => send(&answer(json!(seen))),
            "notify_then_exit" => {
                for n in 0..params["count"].as_u64().unwrap_or(0) {
                    send(&json!({"jsonrpc": "2.0", "method": "tick", "params": {"n": n}}));
                }
                send(&answer(json!("ticked")));
                std::process::exit(0);
            }
            "ask_many" => {
                let count = params["count"].as_u64().unwrap_or(0);
                for q in 0..count {
                    send(&json!({"jsonrpc": "2.0", "id": q, "method": "question",
                        "params": {"q": q}}));
                }
                let mut answers = vec![Value::Null; count as usize];
                let mut missing = count;
                while missing > 0 {
                    let Some(Ok(line)) = lines.next() else { break };
                    let Ok(message) = serde_json::from_str::<Value>(&line) else {
                        continue;
                    };
                    if message["method"] == "echo" {
                        send(&json!({"jsonrpc": "2.0", "id": message["id"],
                            "result": message["params"]}));
                    } else if let Some(q) = message["id"].as_u64().filter(|q| *q < count) {
                        answers[q as usize] = message["result"].clone();
                        missing -= 1;
                    }
                }
                send(&answer(json!(answers)));
            }
            "flood" => {
                for q in 0..params["count"].as_u64().unwrap_or(0) {
                    send(&json!({"jsonrpc": "2.0", "id": q, "method": "question"}));
                }
                std::thread::sleep(Duration::from_secs(30));
            }
            "close_stdin" => {
                // Closed before answering, so the caller's next write
                // meets a closed pipe.
                drop(lines);
                // SAFETY: fd 0 is this process's stdin, owned by nothing
                // else once `lines` is dropped.
                drop(unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(0) });
                send(&answer(Value::Null));
                std::thread::sleep(Duration::from_secs(5));
                return;
            }
            other => send(&json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": format!("no method {other}")}})),
        }
    }
    if linger {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}
