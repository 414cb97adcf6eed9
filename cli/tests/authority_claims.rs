//! The authority model's smaller claims end to end: a call outside its
//! scope is refused before its arguments are decoded (77, not a usage
//! error), the guard sees the caller's pid, uid and gid over a Unix socket
//! and no credentials over TCP (where the audit record's `pid` and `uid`
//! are null), and a connection whose scope expires answers its running
//! call before it closes.

mod common;

use std::time::Duration;

use common::authority::{Gatekeeper, audited, call, records, scoped};
use common::{Host, Style};
use gangway::ipc::{IpcServer, Scope};

#[test]
fn a_call_outside_the_scope_with_bad_arguments_is_denied_not_a_usage_error() {
    let host = Host::start();
    let sandbox = scoped(&host, Scope::new("narrow").commands(["ping"]));
    // `echoargs` is not the scope's; its words would not even bind.
    for words in [
        &["call", "echoargs", "--", "--no-such-flag"][..],
        &["call", "sleep", "--", "not-a-number"],
        &["call", "sleep"],
    ] {
        let (code, err) = call(&sandbox.env, words);
        assert_eq!(code, Some(77), "{words:?}: {err}");
        assert!(err.contains("not available in this sandbox"), "{err}");
    }
    // The same words in a scope that has the command: a usage error.
    let wide = scoped(&host, Scope::new("wide").commands(["sleep"]));
    assert_eq!(call(&wide.env, &["call", "sleep", "--", "x"]).0, Some(2));
}

#[test]
fn the_guard_sees_the_callers_pid_uid_and_gid_over_a_unix_socket() {
    let gate = Gatekeeper::new();
    let host = Host::start_with(IpcServer::builder().guard(gate.guard()));
    let mut client = common::authority::client(&host.env(), &["call", "ping"]);
    client.stdout(std::process::Stdio::null());
    let child = client.spawn().unwrap();
    let pid = child.id();
    assert_eq!(common::process::finish(child).0, Some(0));
    let seen = gate.seen.lock().unwrap();
    let peer = seen[0].peer().expect("credentials over a Unix socket");
    assert_eq!(peer.pid, Some(pid as i32));
    assert_eq!(peer.uid, unsafe { libc::getuid() });
    assert_eq!(peer.gid, unsafe { libc::getgid() });
}

#[test]
fn over_tcp_the_guard_and_the_audit_record_have_no_credentials() {
    let gate = Gatekeeper::new();
    let builder = IpcServer::builder()
        .tcp("127.0.0.1:0".parse().unwrap())
        .guard(gate.guard());
    let (host, dir) = audited(builder, Style::Scripts);
    assert_eq!(call(&host.env(), &["call", "ping"]).0, Some(0));
    assert_eq!(gate.seen.lock().unwrap()[0].peer(), None);
    let (records, _) = records(host, &dir);
    let [record] = &records[..] else {
        panic!("{records:?}")
    };
    assert_eq!(record["command"], "ping");
    assert!(
        record["pid"].is_null() && record["uid"].is_null(),
        "{record}"
    );
}

#[test]
fn at_expiry_a_connection_answers_its_running_call_then_closes() {
    use gangway::ipc::protocol::{self, ClientFrame, HostFrame, Request};
    use std::io::Read;

    let host = Host::start();
    let server = host.server.as_ref().unwrap();
    // Long enough for the call to start on a loaded machine; the test waits
    // for the expiry anyway.
    let env = server.scope(Scope::new("brief").expires_in(Duration::from_secs(3)));
    let gangway::ipc::Endpoint::Unix(socket) = env.endpoint() else {
        panic!("a Unix socket")
    };
    let mut raw = std::os::unix::net::UnixStream::connect(socket).unwrap();
    // A broken host fails the test rather than hanging it.
    raw.set_read_timeout(Some(common::PATIENCE)).unwrap();
    let welcome = common::wire::raw_hello(&mut raw, env.token());
    protocol::decode::<protocol::Welcome>(&welcome).expect("welcomed");
    let call = ClientFrame::Call(Request {
        id: 1,
        method: "linger".into(),
        params: Some(serde_bytes::ByteBuf::from(vec![0x80])),
        argv: None,
        json: None,
        stdin: None,
        stdin_ready: false,
    });
    protocol::write_frame(&mut raw, &protocol::encode(&call)).unwrap();
    common::wait_until("the call runs", || {
        host.tally
            .waits_started
            .load(std::sync::atomic::Ordering::SeqCst)
            == 1
    });
    // The scope expires under the running call: its answer comes, denied,
    // and then the connection closes.
    let body = protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
    let Ok(HostFrame::Answer(answer)) = protocol::decode::<HostFrame>(&body) else {
        panic!("an answer")
    };
    assert_eq!(answer.id, 1);
    let error = answer.error.expect("denied");
    assert_eq!(error.exit, gangway::ipc::exit::DENIED, "{error:?}");
    assert!(error.message.contains("expired"), "{error:?}");
    // Then the connection's own notice (id 0), and the end.
    let body = protocol::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
    let Ok(HostFrame::Answer(notice)) = protocol::decode::<HostFrame>(&body) else {
        panic!("a notice")
    };
    assert_eq!(notice.id, 0);
    let error = notice.error.expect("the reason");
    assert_eq!(
        error.message,
        "this sandbox's access expired; the host must issue a new scope"
    );
    let mut rest = Vec::new();
    raw.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "closed after the notice: {rest:?}");
    common::wait_until("the handler saw its scope expire", || {
        host.tally
            .waits_expired
            .load(std::sync::atomic::Ordering::SeqCst)
            == 1
    });
}
