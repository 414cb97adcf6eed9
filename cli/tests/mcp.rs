//! `gangway mcp` inside a bubblewrap sandbox with a scoped token, driven by
//! the real MCP SDKs (Python and TypeScript) from outside: the tools are the
//! scope's commands as the host lists them, each call runs on the host
//! (bound there, recorded in its audit log), a command outside the scope is
//! refused as an `isError` result without running, and a call the client
//! abandons is cancelled on the host.

#[path = "../../examples/mcp/commands.rs"]
mod commands;
#[path = "../../tests/peers/mcp_expected.rs"]
mod expected;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use gangway::ipc::{AuditLog, Bwrap, IpcServer, Scope};

/// The full `gangway` program: the sandbox runs its `mcp` subcommand.
const GANGWAY: &str = env!("CARGO_BIN_EXE_gangway");

/// How often `reboot` ran: never, as no scope of the test allows it.
static REBOOTS: AtomicUsize = AtomicUsize::new(0);

/// A host command the sandbox's scope leaves out.
#[derive(Clone, serde::Serialize, gangway::IpcCommand)]
#[ipc(response = String, destructive)]
struct Reboot {}

impl Reboot {
    async fn handle(&mut self) -> String {
        REBOOTS.fetch_add(1, Ordering::SeqCst);
        "rebooting".to_owned()
    }
}

/// Hosts the example's commands and `reboot`, runs the client script
/// against `gangway mcp` in a sandbox holding a token for every command
/// but `reboot`, and checks what the client saw and what the host's audit
/// log recorded.
fn bridge(program: &str, script: &str, sdk: expected::Sdk) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let router = commands::router().register(Reboot {});
    let server = runtime
        .block_on(
            IpcServer::builder()
                .client_bin(GANGWAY)
                .audit(AuditLog::jsonl(&audit).unwrap())
                .start(router),
        )
        .unwrap();
    let env = server.scope(Scope::new("agent").commands([
        "greet",
        "count_words",
        "count_bytes",
        "fail",
        "countdown",
        "stats",
    ]));
    // The SDKs start the server with an environment of their own choosing;
    // the prefix sets the sandbox's own (`--clearenv`, then `--setenv`),
    // the token going in as its read-only file, never in this argv.
    let mut server_argv = Bwrap::new(&env).prefix().unwrap();
    assert!(
        !server_argv
            .iter()
            .any(|arg| arg.to_string_lossy().contains(env.token()))
    );
    server_argv.extend([GANGWAY.into(), "mcp".into()]);

    let (seen, stderr) = expected::drive(program, script, &server_argv);
    expected::check(
        &seen,
        "gangway",
        sdk,
        "reboot: not available in this sandbox",
    );
    assert_eq!(REBOOTS.load(Ordering::SeqCst), 0, "reboot never ran");

    let report = runtime.block_on(server.shutdown(Duration::from_secs(5)));
    assert_eq!((report.audit_errors, report.audit_unwritten), (0, 0));
    let records: Vec<serde_json::Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let mut outcomes: Vec<(&str, &str)> = records
        .iter()
        .filter(|record| record["command"].is_string())
        .map(|record| {
            assert_eq!(record["scope"], "agent", "{record}");
            (
                record["command"].as_str().unwrap(),
                record["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    // Every call of the session (sorted: the abandoned countdown and the
    // greeting after it end in either order): the abandoned countdown was
    // cancelled on the host, not left running.
    outcomes.sort_unstable();
    assert_eq!(
        outcomes,
        [
            ("count_bytes", "ok"),
            ("count_bytes", "ok"),
            ("count_words", "ok"),
            ("countdown", "cancelled"),
            ("countdown", "ok"),
            ("fail", "handler_error"),
            ("greet", "ok"),
            ("greet", "ok"),
            ("greet", "usage"),
            ("reboot", "denied"),
            ("stats", "ok"),
            ("stats", "ok"),
        ],
        "{records:#?}\n{stderr}"
    );
}

#[test]
#[ignore = "needs bwrap and python3 with the mcp SDK"]
fn the_python_sdk_calls_the_hosts_commands_through_gangway_mcp_in_a_sandbox() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/peers/mcp_client.py");
    bridge("python3", script, expected::Sdk::Python);
}

#[test]
#[ignore = "needs bwrap and node with the TypeScript MCP SDK"]
fn the_typescript_sdk_calls_the_hosts_commands_through_gangway_mcp_in_a_sandbox() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/peers/node/mcp_client.mjs"
    );
    bridge("node", script, expected::Sdk::TypeScript);
}
