//! The audit record's values end to end, as the README states them: `ts`
//! when the call ended, `pid`/`uid` of the calling client, `exit` what the
//! caller exited with, `duration_ms` from the call being read to its
//! answer, `bytes_in`/`bytes_out` the call's traffic (streamed input and
//! output counted), and the `timeout` and `error` outcomes; a slow sink
//! holding the answers back, and what a sink had not written counted at
//! shutdown.

mod common;

use std::io::{self, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use common::authority::{audited, client, records, shut_down};
use common::process::finish;
use common::{Host, Style, text, wait_until};
use gangway::ipc::{AuditRecord, AuditSink, IpcClient, IpcServer};

/// The time now as the audit log writes it (RFC 3339, UTC, milliseconds),
/// from `date(1)`, so the comparison needs no date library.
fn now_rfc3339() -> String {
    let output = Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%S.%3NZ"])
        .output()
        .unwrap();
    text(&output.stdout).trim().to_owned()
}

/// Runs the client with `words` (and `stdin`, if any) and gives its pid,
/// exit code and stderr.
fn run_call(host: &Host, words: &[&str], stdin: Option<&[u8]>) -> (u32, Option<i32>, String) {
    let mut command = client(&host.env(), words);
    command.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    command.stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    if let Some(bytes) = stdin {
        child.stdin.take().unwrap().write_all(bytes).unwrap();
    }
    let pid = child.id();
    let (code, _, err) = finish(child);
    (pid, code, err)
}

fn record_of(records: &[serde_json::Value], pid: u32) -> &serde_json::Value {
    records
        .iter()
        .find(|record| record["pid"] == pid)
        .unwrap_or_else(|| panic!("no record of pid {pid}: {records:?}"))
}

#[test]
fn each_record_holds_the_calls_time_caller_exit_duration_and_traffic() {
    let (host, dir) = audited(IpcServer::builder().max_frame(64 * 1024), Style::Scripts);
    let before = now_rfc3339();
    let slept = run_call(&host, &["call", "sleep", "--", "300"], None);
    let piped = vec![b'x'; 50_000];
    let cat = run_call(&host, &["call", "cat", "--stdin", "data"], Some(&piped));
    let repeat = run_call(&host, &["call", "repeat", "--", "ab", "5000"], None);
    let timeout = run_call(&host, &["call", "hang"], None);
    // An answer over the frame limit: the host could not answer.
    let too_large = run_call(&host, &["call", "repeat", "--", "ab", "100000"], None);
    let after = now_rfc3339();
    let (records, _) = records(host, &dir);
    let uid = unsafe { libc::getuid() };

    let sleep = record_of(&records, slept.0);
    assert_eq!(
        (sleep["outcome"].as_str(), sleep["exit"].as_i64(), slept.1),
        (Some("ok"), Some(0), Some(0)),
        "{sleep}"
    );
    assert_eq!(sleep["uid"], uid, "the calling user");
    let ts = sleep["ts"].as_str().unwrap();
    assert!(
        before.as_str() <= ts && ts <= after.as_str(),
        "{before} <= {ts} <= {after}"
    );
    let duration = sleep["duration_ms"].as_u64().unwrap();
    assert!((300..60_000).contains(&duration), "{duration} ms");

    // Streamed input counts in, the answer (the same bytes) out.
    let cat_record = record_of(&records, cat.0);
    assert_eq!(cat.1, Some(0), "{}", cat.2);
    let (bytes_in, bytes_out) = traffic(cat_record);
    assert!((50_000..51_024).contains(&bytes_in), "{cat_record}");
    assert!((50_000..51_024).contains(&bytes_out), "{cat_record}");
    // A small call with a large answer: little in, much out.
    let repeat_record = record_of(&records, repeat.0);
    let (bytes_in, bytes_out) = traffic(repeat_record);
    assert!(bytes_in < 1024, "{repeat_record}");
    assert!((10_000..11_024).contains(&bytes_out), "{repeat_record}");

    let hang = record_of(&records, timeout.0);
    assert_eq!(
        (hang["outcome"].as_str(), hang["exit"].as_i64(), timeout.1),
        (Some("timeout"), Some(124), Some(124)),
        "{hang}: {}",
        timeout.2
    );
    assert!(hang["duration_ms"].as_u64().unwrap() >= 300, "{hang}");
    let error = record_of(&records, too_large.0);
    assert_eq!(error["outcome"], "error", "{error}");
    assert_eq!(
        error["exit"].as_i64().map(|code| code as i32),
        too_large.1,
        "the record's exit is what the caller exited with: {}",
        too_large.2
    );
    assert!(
        too_large.2.contains("over the 65536-byte frame limit"),
        "{}",
        too_large.2
    );
}

fn traffic(record: &serde_json::Value) -> (u64, u64) {
    (
        record["bytes_in"].as_u64().unwrap(),
        record["bytes_out"].as_u64().unwrap(),
    )
}

/// A sink that holds each record until the test opens it, counting what it
/// took.
#[derive(Clone, Default)]
struct Gated {
    open: Arc<(Mutex<bool>, Condvar)>,
    taken: Arc<AtomicU64>,
}

impl Gated {
    fn open(&self) {
        let (open, opened) = &*self.open;
        *open.lock().unwrap() = true;
        opened.notify_all();
    }
}

impl AuditSink for Gated {
    fn record(&mut self, _: &AuditRecord) -> io::Result<()> {
        let (open, opened) = &*self.open;
        let mut open = open.lock().unwrap();
        while !*open {
            open = opened.wait(open).unwrap();
        }
        self.taken.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// The records the audit queue holds before a call's answer waits for room.
const AUDIT_QUEUE: u64 = 1024;

#[test]
fn a_sink_that_does_not_keep_up_holds_the_answers_back_and_loses_nothing() {
    const CALLS: u64 = AUDIT_QUEUE + 200;
    let sink = Gated::default();
    let mut host = Host::start_with(IpcServer::builder().audit(sink.clone()));
    let env = host.env();
    let answered = Arc::new(AtomicU64::new(0));
    let caller = std::thread::spawn({
        let answered = answered.clone();
        move || {
            let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
            for _ in 0..CALLS {
                client.call_raw("ping", &[0x80]).unwrap();
                answered.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    wait_until("the audit queue fills", || {
        answered.load(Ordering::SeqCst) >= AUDIT_QUEUE
    });
    // Held: a broken hold would let the rest through at once.
    std::thread::sleep(Duration::from_millis(300));
    let held = answered.load(Ordering::SeqCst);
    assert!(
        (AUDIT_QUEUE..AUDIT_QUEUE + 4).contains(&held),
        "{held} answers went out while the sink held its first record"
    );
    assert!(!caller.is_finished());
    sink.open();
    caller.join().unwrap();
    shut_down(&mut host, Duration::from_secs(30), 0, 0);
    assert_eq!(sink.taken.load(Ordering::SeqCst), CALLS, "no record lost");
}

#[test]
fn records_a_sink_had_not_written_by_the_deadline_are_counted_in_the_report() {
    let sink = Gated::default();
    let mut host = Host::start_with(IpcServer::builder().audit(sink.clone()));
    let env = host.env();
    let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    for _ in 0..5 {
        client.call_raw("ping", &[0x80]).unwrap();
    }
    drop(client);
    // The five records unwritten, no error, and no call abandoned.
    let report = shut_down(&mut host, Duration::from_millis(300), 0, 5);
    assert_eq!(report.abandoned_calls, 0, "{report:?}");
    // The sink goes on with them as long as the process lives.
    sink.open();
    wait_until("the sink writes what it held", || {
        sink.taken.load(Ordering::SeqCst) == 5
    });
}
