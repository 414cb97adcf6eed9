//! No token reaches a `tracing` event: a global subscriber (so this test
//! has a binary of its own) catches every event of a host whose audit log
//! is `tracing`, through allowed, denied, revoked, expired and wrong-token
//! calls.

mod common;

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Host;
use common::authority::{call, scoped};
use gangway::ipc::{AuditLog, IpcServer, SandboxEnv, Scope};
use tracing::field::{Field, Visit};
use tracing::span;

/// Waits until a lapsed scope's room is gone: its token file and socket.
fn gone_room(env: &SandboxEnv) {
    common::wait_until("the lapsed scope's room goes", || {
        !env.token_file().unwrap().exists()
            && match env.endpoint() {
                gangway::ipc::Endpoint::Unix(socket) => !socket.exists(),
                _ => true,
            }
    });
}

/// A `tracing` subscriber keeping every event's target, message and fields.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<String>>);

struct Fields<'a>(&'a mut String);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, "{}={value:?} ", field.name());
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &span::Attributes<'_>) -> span::Id {
        let mut text = self.0.lock().unwrap();
        let _ = writeln!(text, "span {}", span.metadata().name());
        span.record(&mut Fields(&mut text));
        span::Id::from_u64(1)
    }
    fn record(&self, _: &span::Id, values: &span::Record<'_>) {
        values.record(&mut Fields(&mut self.0.lock().unwrap()));
    }
    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut text = self.0.lock().unwrap();
        let _ = write!(text, "{}: ", event.metadata().target());
        event.record(&mut Fields(&mut text));
        text.push('\n');
    }
    fn enter(&self, _: &span::Id) {}
    fn exit(&self, _: &span::Id) {}
}

#[test]
fn no_token_reaches_a_tracing_event() {
    let capture = Capture::default();
    tracing::subscriber::set_global_default(capture.clone()).unwrap();
    let host = Host::start_with(IpcServer::builder().audit(AuditLog::tracing()));
    let server = host.server.as_ref().unwrap();
    let kept = scoped(&host, Scope::new("kept").commands(["ping", "echoargs"]));
    let revoked = server.scope(Scope::new("gone"));
    let short = server.scope(Scope::new("short").expires_in(Duration::from_millis(50)));
    let tokens = [
        host.env().token().to_owned(),
        kept.env.token().to_owned(),
        revoked.token().to_owned(),
        short.token().to_owned(),
    ];
    assert_eq!(call(&kept.env, &["call", "ping"]).0, Some(0));
    assert_eq!(call(&kept.env, &["call", "echoargs", "--", "a"]).0, Some(0));
    assert_eq!(call(&kept.env, &["call", "upper"]).0, Some(77));
    // Tokens pasted into a call: an argument (whole, and inside a longer
    // word) and a command's name.
    let pasted = format!("key={}", tokens[1]);
    let echoed = call(&kept.env, &["call", "echoargs", "--", &tokens[0], &pasted]);
    assert_eq!(echoed.0, Some(0), "{}", echoed.1);
    let named = call(&kept.env, &["call", &format!("x{}", tokens[0])]);
    assert_eq!(named.0, Some(2), "{}", named.1);
    assert!(server.revoke("gone"));
    // A lapsed scope's room (socket and token file) goes a moment after
    // the lapse: a call made before it goes would reach a hello.
    gone_room(&revoked);
    assert_eq!(call(&revoked, &["call", "ping"]).0, Some(77));
    common::wait_until("the short scope expires", || {
        server.manifest_for("short").is_none()
    });
    gone_room(&short);
    assert_eq!(call(&short, &["call", "ping"]).0, Some(77));
    // A wrong token on the main socket: refused at its hello (69: a token
    // the host does not know is not a sandbox it has rules for).
    let mut wrong = common::authority::client(&host.env(), &["call", "ping"]);
    wrong
        .env("GANGWAY_TOKEN", "0".repeat(tokens[0].len()))
        .env_remove("GANGWAY_TOKEN_FILE");
    let refused = common::run(wrong, None);
    assert_eq!(
        refused.status.code(),
        Some(gangway::ipc::exit::UNAVAILABLE),
        "{}",
        common::text(&refused.stderr)
    );
    drop(host);
    let logged = capture.0.lock().unwrap().clone();
    // Six records: the lapsed scopes' rooms were gone, so their calls
    // never reached a hello.
    let records = logged
        .lines()
        .filter(|line| line.starts_with("gangway::audit: "))
        .count();
    assert_eq!(records, 6, "{logged}");
    for token in &tokens {
        assert!(!logged.contains(token.as_str()), "a token was logged");
    }
    // The pasted tokens were replaced where they stood.
    assert!(
        logged.contains(r#"command="echoargs" args="{\"words\":[\"<token>\",\"key=<token>\"]}""#),
        "{logged}"
    );
    assert!(logged.contains(r#"command="x<token>""#), "{logged}");
}
