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

/// The peer's standard input, by the line.
type Lines = std::io::Lines<std::io::StdinLock<'static>>;

fn main() {
    let linger = std::env::args().any(|a| a == "--linger");
    let mut peer = Peer {
        out: Out(Arc::new(Mutex::new(std::io::stdout()))),
        ticks: 0,
        questions: 0,
        seen: Vec::new(),
    };
    let mut lines = std::io::stdin().lock().lines();
    while let Some(Ok(line)) = lines.next() {
        let Some(request) = peer.read(&line) else {
            continue;
        };
        if request.method == "close_stdin" {
            return close_stdin(lines, &peer.out, &request);
        }
        peer.respond(&request, &mut lines);
    }
    if linger {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}

/// The peer's standard output, shared with the threads that answer late.
#[derive(Clone)]
struct Out(Arc<Mutex<std::io::Stdout>>);

impl Out {
    /// Writes `message` as one line, at once.
    fn send(&self, message: &Value) {
        let mut out = self.0.lock().unwrap();
        let _ = writeln!(out, "{message}");
        let _ = out.flush();
    }
}

/// What the peer keeps between messages.
struct Peer {
    out: Out,
    /// `tick` notifications received.
    ticks: u64,
    /// `question` requests sent by `ask`.
    questions: u64,
    /// Every method received, in order.
    seen: Vec<String>,
}

/// A request to answer: its id, method and params.
struct Request {
    id: Value,
    method: String,
    params: Value,
}

impl Request {
    /// A response to this request with `result`.
    fn answer(&self, result: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": self.id, "result": result})
    }
}

impl Peer {
    /// Takes in one line: notes its method, counts a `tick`, and returns
    /// the request it holds (`None` for non-JSON and for notifications).
    fn read(&mut self, line: &str) -> Option<Request> {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            eprintln!("peer: not JSON: {line}");
            return None;
        };
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        if !method.is_empty() {
            self.seen.push(method.clone());
        }
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let Some(id) = message.get("id").cloned() else {
            if method == "tick" {
                self.ticks += 1;
            }
            return None;
        };
        Some(Request { id, method, params })
    }

    /// Answers `request` (or misbehaves as it asks), reading from `lines`
    /// what the caller sends back meanwhile.
    fn respond(&mut self, request: &Request, lines: &mut Lines) {
        let Request { id, params, .. } = request;
        let send = |message: &Value| self.out.send(message);
        match request.method.as_str() {
            "echo" => send(&request.answer(params.clone())),
            "delay" => delay(&self.out, request),
            "string_id" => send(&json!({"jsonrpc": "2.0", "id": id.to_string(), "result": params})),
            "error" => send(&json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32000, "message": "the peer refuses", "data": params}})),
            "junk" => junk(&self.out, request),
            "notify" => notify(&self.out, request),
            "ask" => self.ask(request, lines),
            "die" => {
                eprintln!("peer: dying on purpose");
                std::process::exit(3);
            }
            "never" => {}
            "spawn_children" => send(&request.answer(json!(spawn_children(params)))),
            "stall" => stall(&self.out, request),
            "count" => send(&request.answer(json!(self.ticks))),
            "seen" => send(&request.answer(json!(self.seen))),
            "notify_then_exit" => {
                notify(&self.out, request);
                std::process::exit(0);
            }
            "ask_many" => ask_many(&self.out, request, lines),
            "flood" => {
                for q in 0..params["count"].as_u64().unwrap_or(0) {
                    send(&json!({"jsonrpc": "2.0", "id": q, "method": "question"}));
                }
                std::thread::sleep(Duration::from_secs(30));
            }
            other => send(&json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": format!("no method {other}")}})),
        }
    }

    /// `ask`: a `question` to the caller, then the caller's answer (the
    /// next line) as the result.
    fn ask(&mut self, request: &Request, lines: &mut Lines) {
        let question_id = if request.params["string_id"].as_bool() == Some(true) {
            json!(format!("q-{}", self.questions))
        } else {
            json!(self.questions)
        };
        self.questions += 1;
        self.out.send(
            &json!({"jsonrpc": "2.0", "id": question_id, "method": "question",
            "params": {"text": "allow?"}}),
        );
        // The next line is the caller's answer.
        let reply = lines
            .next()
            .and_then(Result::ok)
            .and_then(|line| serde_json::from_str::<Value>(&line).ok())
            .unwrap_or(Value::Null);
        self.out.send(&request.answer(reply));
    }
}

/// `delay`: the params back after `ms`, from another thread.
fn delay(out: &Out, request: &Request) {
    let out = out.clone();
    let reply = request.answer(request.params.clone());
    let ms = request.params["ms"].as_u64().unwrap_or(0);
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(ms));
        out.send(&reply);
    });
}

/// `junk`: a blank line, non-JSON, a JSON array, an oversized line, then
/// the answer, all at once.
fn junk(out: &Out, request: &Request) {
    let oversized = request.params["oversized"].as_u64().unwrap_or(0) as usize;
    let mut out = out.0.lock().unwrap();
    let _ = writeln!(out);
    let _ = writeln!(out, "this is not JSON");
    let _ = writeln!(out, "[1, 2, 3]");
    let _ = writeln!(
        out,
        "{{\"id\": {}, \"result\": \"{}\"}}",
        request.id,
        "x".repeat(oversized)
    );
    let _ = writeln!(out, "{}", request.answer(json!("after the junk")));
    let _ = out.flush();
}

/// `notify`: `count` `tick` notifications, then the answer.
fn notify(out: &Out, request: &Request) {
    for n in 0..request.params["count"].as_u64().unwrap_or(0) {
        out.send(&json!({"jsonrpc": "2.0", "method": "tick", "params": {"n": n}}));
    }
    out.send(&request.answer(json!("ticked")));
}

/// `spawn_children`: starts `count` `sleep 600` children; their pids.
fn spawn_children(params: &Value) -> Vec<u32> {
    (0..params["count"].as_u64().unwrap_or(0))
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
        .collect()
}

/// `stall`: answers, then reads nothing until the file `release` exists.
fn stall(out: &Out, request: &Request) {
    let release = std::path::PathBuf::from(request.params["release"].as_str().unwrap_or_default());
    out.send(&request.answer(Value::Null));
    while !release.exists() {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `ask_many`: `count` questions at once, the caller's `echo` requests
/// answered meanwhile, then the answers in order.
fn ask_many(out: &Out, request: &Request, lines: &mut Lines) {
    let count = request.params["count"].as_u64().unwrap_or(0);
    for q in 0..count {
        out.send(&json!({"jsonrpc": "2.0", "id": q, "method": "question",
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
            out.send(&json!({"jsonrpc": "2.0", "id": message["id"],
                "result": message["params"]}));
        } else if let Some(q) = message["id"].as_u64().filter(|q| *q < count) {
            answers[q as usize] = message["result"].clone();
            missing -= 1;
        }
    }
    out.send(&request.answer(json!(answers)));
}

/// `close_stdin`: closes standard input, answers, and lives on for five
/// seconds with stdout open.
fn close_stdin(lines: Lines, out: &Out, request: &Request) {
    // Closed before answering, so the caller's next write meets a closed
    // pipe.
    drop(lines);
    // SAFETY: fd 0 is this process's stdin, owned by nothing else once
    // `lines` is dropped.
    drop(unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(0) });
    out.send(&request.answer(Value::Null));
    std::thread::sleep(Duration::from_secs(5));
}
