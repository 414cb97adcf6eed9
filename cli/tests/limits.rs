//! No one starves the host: one sandbox flooding its own socket (silent
//! connections, idle authenticated ones) leaves every other scope served;
//! a huge command name is refused at once and audited small; a scope's
//! expiry ends its running calls; the caller's terminal gets no escape
//! sequence from a message; the audit file is a regular file of the
//! host's, 0600, never a link followed.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::authority::{audited, call, client, records, scoped};
use common::process::{finish, spawn};
use common::{Host, Style, text, wait_until};
use gangway::ipc::{AuditLog, Endpoint, IpcClient, IpcServer, SandboxEnv, Scope, protocol};

/// The Unix socket a sandbox environment names.
fn socket_of(env: &SandboxEnv) -> PathBuf {
    match env.endpoint() {
        Endpoint::Unix(path) => path.clone(),
        Endpoint::Tcp(addr) => panic!("a Unix socket, not {addr}"),
    }
}

/// Lets this process hold as many descriptors as its hard limit allows: a
/// flood of 800 connections is 1,600 descriptors here, host and attacker
/// being one process.
fn raise_descriptor_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit`/`setrlimit` read and write the struct given.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = limit.rlim_max;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
    assert!(
        limit.rlim_cur >= 4096,
        "a descriptor limit of {}",
        limit.rlim_cur
    );
}

/// A connection that said its hello and was welcomed, or why the host
/// turned it away.
fn authenticated(socket: &PathBuf, token: &str) -> Result<UnixStream, String> {
    let raw = UnixStream::connect(socket).map_err(|e| e.to_string())?;
    raw.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    greeted(raw, token)
}

/// `raw` once it said its hello and was welcomed, or why the host turned
/// it away.
fn greeted<S: Read + Write>(mut raw: S, token: &str) -> Result<S, String> {
    let hello = protocol::Hello {
        v: protocol::VERSION,
        token: token.to_owned(),
    };
    protocol::write_frame(&mut raw, &protocol::encode(&hello)).map_err(|e| e.to_string())?;
    let body = protocol::read_frame(&mut raw, 1 << 20)
        .map_err(|e| e.to_string())?
        .ok_or("closed")?;
    if protocol::decode::<protocol::Welcome>(&body).is_ok() {
        return Ok(raw);
    }
    let refusal = protocol::decode::<protocol::Response>(&body).map_err(|e| e.to_string())?;
    Err(refusal.error.map(|e| e.message).unwrap_or_default())
}

#[test]
fn an_idle_connection_is_closed_and_told_why_and_a_running_call_keeps_it() {
    let host = Host::start_with(IpcServer::builder().idle_timeout(Duration::from_millis(200)));
    let env = host.env();
    let mut raw = authenticated(&socket_of(&env), env.token()).unwrap();
    let body = protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
    let notice = match protocol::decode::<protocol::HostFrame>(&body) {
        Ok(protocol::HostFrame::Answer(response)) => response,
        _ => protocol::decode::<protocol::Response>(&body).unwrap(),
    };
    let message = notice.error.unwrap().message;
    assert!(message.contains("idle for 200ms"), "{message}");
    assert!(
        protocol::read_frame(&mut raw, 1 << 20).unwrap().is_none(),
        "then closed"
    );
    // A call running past the idle timeout keeps its connection.
    let started = host.tally.sleeps_finished.load(Ordering::SeqCst);
    let (code, stderr) = call(&env, &["call", "sleep", "--", "700"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        host.tally.sleeps_finished.load(Ordering::SeqCst),
        started + 1
    );
}

#[test]
fn one_sandbox_flooding_its_own_socket_leaves_the_others_served() {
    raise_descriptor_limit();
    // A short wait for a slot, so the refusals come quickly.
    let host = Host::start_with(IpcServer::builder().hello_timeout(Duration::from_millis(300)));
    let flooder = scoped(&host, Scope::new("flooder"));
    let bystander = scoped(&host, Scope::new("bystander"));
    let socket = socket_of(&flooder.env);
    // 400 authenticated connections from 40 threads, kept open: the
    // scope's quota of them is welcomed, the rest told why they are not.
    let attempts: Vec<Result<UnixStream, String>> = std::thread::scope(|threads| {
        let workers: Vec<_> = (0..40)
            .map(|_| {
                threads.spawn(|| {
                    (0..10)
                        .map(|_| authenticated(&socket, flooder.env.token()))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().unwrap())
            .collect()
    });
    let (idle, refused): (Vec<_>, Vec<_>) = attempts.into_iter().partition(Result::is_ok);
    let idle: Vec<UnixStream> = idle.into_iter().map(Result::unwrap).collect();
    let refused: Vec<String> = refused.into_iter().map(Result::unwrap_err).collect();
    assert_eq!(idle.len(), 64, "the default quota: {:?}", refused.first());
    assert!(
        refused
            .iter()
            .all(|why| why.contains("64 connections to the host open")),
        "{:?}",
        refused.first()
    );
    // Then 400 silent ones, filling the socket's room before the hello.
    let silent: Vec<UnixStream> = (0..400)
        .filter_map(|_| UnixStream::connect(&socket).ok())
        .collect();
    // The other sandbox is served, each call within a second, and the
    // main socket too.
    for env in [&bystander.env, &host.env()] {
        for _ in 0..5 {
            let started = Instant::now();
            let (code, stderr) = call(env, &["call", "ping"]);
            assert_eq!(code, Some(0), "served: {stderr}");
            let took = started.elapsed();
            assert!(took < Duration::from_secs(1), "a call took {took:?}");
        }
    }
    drop((silent, idle));
}

#[test]
fn an_8_mib_command_name_is_refused_before_any_search_and_audited_small() {
    let (host, dir) = audited(IpcServer::builder(), Style::Scripts);
    let env = host.env();
    let mut client = IpcClient::connect_to(env.endpoint(), env.token()).unwrap();
    let huge = "x".repeat(8 << 20);
    let error = client.call_raw(&huge, &[0x80]).unwrap_err();
    let remote = error.remote().expect("the host answered");
    assert_eq!(remote.exit, 2, "{}", remote.message);
    assert!(
        remote.message.contains("128") && remote.message.len() < 1024,
        "{}",
        &remote.message[..remote.message.len().min(300)]
    );
    assert_eq!(remote.suggestion, None);
    // A name of bad characters, short, is refused the same way.
    let error = client.call_raw("ping\u{1b}[2J", &[0x80]).unwrap_err();
    assert_eq!(error.exit_code(), 2);
    drop(client);
    let (records, bytes) = records(host, &dir);
    let record = records
        .iter()
        .find(|r| r["command"].as_str().is_some_and(|c| c.starts_with("xxxx")))
        .expect("the call is audited");
    assert!(
        record["command"]
            .as_str()
            .unwrap()
            .ends_with("… (8388608 bytes)"),
        "{}",
        &record["command"].as_str().unwrap()[..200]
    );
    for line in text(&bytes).lines() {
        assert!(line.len() < 4096, "a record of {} bytes", line.len());
    }
}

#[test]
fn every_string_of_an_audit_record_is_capped() {
    // A guard denying `ping` with a long reason.
    let reason = "z".repeat(100_000);
    let guard = move |info: &gangway::ipc::CallInfo| {
        let decision = if info.command() == "ping" {
            gangway::ipc::Decision::Deny(reason.clone())
        } else {
            gangway::ipc::Decision::Allow
        };
        std::future::ready(decision)
    };
    let (host, dir) = audited(IpcServer::builder().guard(guard), Style::Scripts);
    // A long argument, many arguments (under the 16 KiB a guard is shown
    // whole), a long reason: one record each.
    let long = "y".repeat(100_000);
    let many: Vec<String> = (0..1400).map(|n| format!("w-{n:05}")).collect();
    let mut words = vec!["call", "echoargs", "--"];
    words.extend(many.iter().map(String::as_str));
    assert_eq!(
        call(&host.env(), &["call", "echoargs", "--", &long]).0,
        Some(0)
    );
    assert_eq!(call(&host.env(), &words).0, Some(0));
    assert_eq!(call(&host.env(), &["call", "ping"]).0, Some(77));
    let (records, bytes) = records(host, &dir);
    assert_eq!(records.len(), 3, "{records:?}");
    let reason = records[2]["reason"].as_str().unwrap();
    assert!(reason.ends_with("… (100000 bytes)"), "{}", &reason[..100]);
    for line in text(&bytes).lines() {
        assert!(line.len() < 4096, "a record of {} bytes", line.len());
    }
}

#[test]
fn a_scope_expiring_under_a_running_call_ends_it() {
    let host = Host::start();
    let server = host.server.as_ref().unwrap();
    let short = server.scope(
        Scope::new("short")
            .commands(["linger"])
            .expires_in(Duration::from_millis(500)),
    );
    let started = host.tally.waits_started.load(Ordering::SeqCst);
    let child = spawn(client(&short, &["call", "linger"]));
    wait_until("the call runs", || {
        host.tally.waits_started.load(Ordering::SeqCst) > started
    });
    let (code, _, stderr) = finish(child);
    assert_eq!(code, Some(77), "{stderr}");
    assert!(stderr.contains("expired"), "{stderr}");
    wait_until("the handler saw its scope expire", || {
        host.tally.waits_expired.load(Ordering::SeqCst) == 1
    });
}

#[test]
fn a_message_reaches_the_callers_terminal_without_its_control_characters() {
    let host = Host::start();
    let hostile = "\u{1b}]0;pwned\u{7}\u{1b}[2Jtab\there\u{7f}";
    for words in [
        &["call", "fail", "--", hostile][..],
        // Usage errors and suggestions quote what the caller typed.
        &["call", "greet", "--", "--nmae", hostile],
        &["call", "upper", "--", "--text", "a", hostile],
    ] {
        let (code, stderr) = call(&host.env(), words);
        assert_ne!(code, Some(0), "{words:?}");
        assert!(
            !stderr.contains(['\u{1b}', '\u{7}', '\u{7f}']),
            "{words:?}: {stderr:?}"
        );
    }
    let (_, stderr) = call(&host.env(), &["call", "fail", "--", hostile]);
    assert!(stderr.contains("tab\there"), "tabs are kept: {stderr:?}");
    // Streamed output is data: byte for byte.
    let mut echo = client(&host.env(), &["call", "cat", "--stdin", "data"]);
    echo.stdin(std::process::Stdio::piped());
    let out = common::run(echo, Some(hostile.as_bytes()));
    assert_eq!(out.stdout, hostile.as_bytes());
}

#[test]
fn the_audit_log_is_a_private_regular_file_of_the_hosts_never_a_link() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    // A link, to a file that exists or not: refused, nothing written.
    let target = dir.path().join("elsewhere");
    std::fs::write(&target, "").unwrap();
    let link = dir.path().join("audit.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let error = AuditLog::jsonl(&link).expect_err("a link is refused");
    assert!(error.to_string().contains("link"), "{error}");
    std::fs::remove_file(&target).unwrap();
    assert!(AuditLog::jsonl(&link).is_err());
    assert!(!target.exists(), "nothing created through the link");
    // An existing file readable by others: taken, and made 0600.
    let open = dir.path().join("open.jsonl");
    std::fs::write(&open, "{}\n").unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut log = AuditLog::jsonl(&open).unwrap();
    let mode = std::fs::metadata(&open).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    use gangway::ipc::AuditSink;
    log.flush().unwrap();
    // A second name for a file of the host's own (its `.bashrc`, say).
    let bashrc = dir.path().join("bashrc");
    std::fs::write(&bashrc, "").unwrap();
    let linked = dir.path().join("linked.jsonl");
    std::fs::hard_link(&bashrc, &linked).unwrap();
    let error = AuditLog::jsonl(&linked).expect_err("a hard link is refused");
    assert!(error.to_string().contains("2 hard links"), "{error}");
    // A directory, or a FIFO: not a regular file.
    for (what, path) in [
        ("a directory", dir.path().to_path_buf()),
        ("a FIFO", fifo(dir.path())),
    ] {
        let error = AuditLog::jsonl(&path)
            .err()
            .unwrap_or_else(|| panic!("{what}"));
        assert!(
            error.to_string().contains("regular file"),
            "{what}: {error}"
        );
    }
    // Another user's file.
    // SAFETY: `geteuid` cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        let theirs = dir.path().join("theirs.jsonl");
        std::fs::write(&theirs, "").unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let error = AuditLog::jsonl(&theirs).expect_err("another user's file");
        assert!(error.to_string().contains("owned"), "{error}");
    }
}

/// A FIFO in `dir`.
fn fifo(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("fifo");
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    path
}

#[test]
fn scopes_at_their_quotas_together_lock_no_other_scope_out() {
    // A backstop of 8 over every scope, 8 each: one scope at its quota
    // fills it.
    let host = Host::start_with(
        IpcServer::builder()
            .max_connections(8)
            .max_connections_per_scope(8),
    );
    let first = scoped(&host, Scope::new("first"));
    let second = scoped(&host, Scope::new("second"));
    let third = scoped(&host, Scope::new("third"));
    let open = |env: &SandboxEnv, count: usize| -> Vec<Result<UnixStream, String>> {
        (0..count)
            .map(|_| authenticated(&socket_of(env), env.token()))
            .collect()
    };
    let held_first = open(&first.env, 8);
    assert!(held_first.iter().all(Result::is_ok), "{held_first:?}");
    // The second has its guaranteed four, and no more.
    let held_second = open(&second.env, 6);
    let welcomed = held_second.iter().filter(|held| held.is_ok()).count();
    assert_eq!(welcomed, 4, "{held_second:?}");
    for refused in held_second.iter().filter_map(|held| held.as_ref().err()) {
        assert!(refused.contains("too many connections"), "{refused}");
    }
    // A third scope, and the main socket, are still served.
    for env in [&third.env, &host.env()] {
        let (code, stderr) = call(env, &["call", "ping"]);
        assert_eq!(code, Some(0), "served: {stderr}");
    }
    drop((held_first, held_second));
}

#[test]
fn over_tcp_a_scope_over_its_quota_is_refused_at_once_not_holding_the_shared_port() {
    let host = Host::start_with(
        IpcServer::builder()
            .tcp("127.0.0.1:0".parse().unwrap())
            .max_connections_per_scope(2)
            .max_unauthenticated(1)
            .hello_timeout(Duration::from_secs(30)),
    );
    let flooder = scoped(&host, Scope::new("flooder"));
    let bystander = scoped(&host, Scope::new("bystander"));
    let Endpoint::Tcp(address) = *flooder.env.endpoint() else {
        panic!("a TCP server");
    };
    let connect = || {
        let raw = TcpStream::connect(address).unwrap();
        raw.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        greeted(raw, flooder.env.token())
    };
    let held: Vec<TcpStream> = (0..2).map(|_| connect().unwrap()).collect();
    // The third is told at once: it does not wait out the 30-second hello
    // timeout in the one port's room for hellos.
    let started = Instant::now();
    let refused = connect().expect_err("over the quota");
    assert!(
        refused.contains("2 connections to the host open"),
        "{refused}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let (code, stderr) = call(&bystander.env, &["call", "ping"]);
    assert_eq!(code, Some(0), "served: {stderr}");
    drop(held);
}

#[test]
fn a_call_waiting_for_a_slow_producers_whole_input_is_not_idle() {
    let host = Host::start_with(IpcServer::builder().idle_timeout(Duration::from_millis(200)));
    // `slow | upper`: the host asks for the whole input, which comes well
    // after the idle timeout.
    let mut producer = std::process::Command::new("sh")
        .args(["-c", "sleep 1; printf slow"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut upper = client(&host.env(), &["call", "upper", "--stdin", "text"]);
    upper.stdin(producer.stdout.take().unwrap());
    let out = upper.output().unwrap();
    assert!(producer.wait().unwrap().success());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim_end(), "SLOW");
}

#[test]
fn the_idle_notice_comes_after_every_answer_queued() {
    let host = Host::start_with(IpcServer::builder().idle_timeout(Duration::from_millis(500)));
    let env = host.env();
    let mut raw = authenticated(&socket_of(&env), env.token()).unwrap();
    // A large answer the caller does not read for a while, and a small one
    // queued behind it: both calls end, so the connection falls idle
    // while they wait to be written.
    let repeat = |id: u64, word: &str, times: &str| protocol::Request {
        id,
        method: "repeat".into(),
        params: None,
        argv: Some(vec![word.into(), times.into()]),
        json: None,
        stdin: None,
        stdin_ready: false,
    };
    protocol::write_frame(&mut raw, &common::call_frame(repeat(1, "x", "4000000"))).unwrap();
    // The first answer's length: its writing has begun (and stalls, unread).
    let mut head = [0u8; 4];
    raw.read_exact(&mut head).unwrap();
    protocol::write_frame(&mut raw, &common::call_frame(repeat(2, "y", "1"))).unwrap();
    // Past the idle timeout, the answers still unread.
    std::thread::sleep(Duration::from_millis(1500));
    let mut first = vec![0u8; u32::from_be_bytes(head) as usize];
    raw.read_exact(&mut first).unwrap();
    let mut bodies = vec![first];
    while let Some(body) = protocol::read_frame(&mut raw, 16 << 20).unwrap() {
        bodies.push(body);
    }
    let ids: Vec<u64> = bodies
        .iter()
        .map(|body| match protocol::decode(body) {
            Ok(protocol::HostFrame::Answer(answer)) => answer.id,
            _ => panic!("an answer"),
        })
        .collect();
    assert_eq!(ids, [1, 2, 0], "both answers, then the notice");
}

#[test]
fn a_scope_lapsing_under_a_call_reading_its_input_is_answered_denied() {
    let host = Host::start();
    let server = host.server.as_ref().unwrap();
    let started = host.tally.sum_chunks.load(Ordering::SeqCst);
    // Several at once: the reader failing the input first and the
    // connection cancelling the call first must answer alike.
    let children: Vec<_> = (0..6)
        .map(|n| {
            let env = server.scope(
                Scope::new(format!("short-{n}"))
                    .commands(["sum"])
                    .expires_in(Duration::from_secs(3)),
            );
            // A byte, then input that never ends.
            let mut producer = std::process::Command::new("sh")
                .args(["-c", "printf x; exec sleep 30"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut sum = client(&env, &["call", "sum", "--stdin", "input"]);
            sum.stdin(producer.stdout.take().unwrap())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            (sum.spawn().unwrap(), producer)
        })
        .collect();
    // Every call reads its input before its scope expires.
    wait_until("each call read a chunk", || {
        host.tally.sum_chunks.load(Ordering::SeqCst) >= started + 6
    });
    for (child, mut producer) in children {
        let (code, _, stderr) = finish(child);
        let _ = producer.kill();
        let _ = producer.wait();
        assert_eq!(code, Some(77), "{stderr}");
        assert!(stderr.contains("expired"), "{stderr}");
    }
}

#[test]
fn a_connection_holds_its_room_until_all_it_had_to_say_is_written() {
    // One connection for the scope, and a writer that waits a while for a
    // slow reader.
    let host = Host::start_with(
        IpcServer::builder()
            .max_connections_per_scope(1)
            .hello_timeout(Duration::from_millis(500))
            .io_timeout(Duration::from_secs(20)),
    );
    let env = host.env();
    let socket = socket_of(&env);
    let mut stalled = authenticated(&socket, env.token()).unwrap();
    let request = protocol::Request {
        id: 1,
        method: "repeat".into(),
        params: None,
        argv: Some(vec!["x".into(), "4000000".into()]),
        json: None,
        stdin: None,
        stdin_ready: false,
    };
    protocol::write_frame(&mut stalled, &common::call_frame(request)).unwrap();
    // The answer's writing has begun, and stalls unread; then a frame that
    // is no gangway frame ends the reading.
    let mut head = [0u8; 4];
    stalled.read_exact(&mut head).unwrap();
    protocol::write_frame(&mut stalled, &[0xc1]).unwrap();
    // The connection still holds its room: the next one waits, then is
    // refused.
    let refused = authenticated(&socket, env.token()).expect_err("over the quota");
    assert!(
        refused.contains("connections to the host open"),
        "{refused}"
    );
    // Once the first is gone, its room is free.
    drop(stalled);
    wait_until("the room is free", || {
        authenticated(&socket, env.token()).is_ok()
    });
}
