//! Tool results an agent reads when a call goes wrong, served from a router
//! in this process and forwarded to a host alike: an error result of a
//! tool with an output schema never carries `structuredContent` (a
//! handler's error, a bad argument, a timeout), what the handler wrote to
//! its stdout and stderr comes first in the text, in the order written, and
//! a command's own `#[ipc(timeout = "...")]` applies under MCP, over the
//! server's.

#[path = "support/mcp_session.rs"]
mod session;

use std::time::Duration;

use gangway::ipc::{
    AsyncIpcClient, CallContext, CommandError, CommandResult, IpcRouter, IpcServer,
};
use gangway::mcp::McpServer;
use serde_json::{Value, json};
use session::Session;

/// An address found.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Address {
    addr: String,
}

/// Look a name up, saying so first (on stdout, then stderr); fails for a
/// name it does not know.
#[derive(Clone, serde::Serialize, gangway::IpcCommand)]
#[ipc(response = CommandResult<Address>, output_schema)]
struct Resolve {
    /// The name.
    #[ipc(positional)]
    name: String,
    #[ipc(context)]
    #[serde(skip)]
    ctx: CallContext,
}

impl Resolve {
    async fn handle(&mut self) -> CommandResult<Address> {
        let _ = self.ctx.stdout(format!("looking up {}\n", self.name)).await;
        let _ = self.ctx.stderr("(not cached)\n").await;
        if self.name == "localhost" {
            Ok(Address {
                addr: "127.0.0.1".to_owned(),
            })
        } else {
            Err(CommandError::new(format!("{} is unknown", self.name)))
        }
    }
}

/// Wait to be cancelled: its own timeout ends it. A typed answer that
/// never comes in time.
#[derive(Clone, serde::Serialize, gangway::IpcCommand)]
#[ipc(response = Address, output_schema, timeout = "300ms")]
struct Stall {
    #[ipc(context)]
    #[serde(skip)]
    ctx: CallContext,
}

impl Stall {
    async fn handle(&mut self) -> Address {
        self.ctx.cancelled().await;
        Address {
            addr: "too late".to_owned(),
        }
    }
}

/// Take longer than the server's limit, well within its own.
#[derive(Clone, serde::Serialize, gangway::IpcCommand)]
#[ipc(response = String, timeout = "1h")]
struct Linger {}

impl Linger {
    async fn handle(&mut self) -> String {
        // Not a wait for an event: the subject is a call that outlasts the
        // server's limit (50 ms below), and a sleep lasts at least this.
        tokio::time::sleep(Duration::from_millis(300)).await;
        "done".to_owned()
    }
}

fn router() -> IpcRouter {
    IpcRouter::new()
        .register(Resolve {
            name: String::new(),
            ctx: CallContext::detached(),
        })
        .register(Stall {
            ctx: CallContext::detached(),
        })
        .register(Linger {})
}

/// A session of `router()`'s commands served in this process, and one
/// forwarded to a host serving them; the host, to shut down.
async fn sessions(local: McpServer) -> (Vec<(&'static str, Session)>, IpcServer) {
    let host = IpcServer::builder().start(router()).await.unwrap();
    let env = host.sandbox_env();
    let client = AsyncIpcClient::connect_to(env.endpoint(), env.token())
        .await
        .unwrap();
    let (local, _) = Session::start(local).await;
    let (forwarded, _) = Session::start(McpServer::forwarding(client)).await;
    (vec![("local", local), ("forwarded", forwarded)], host)
}

/// An error result: `isError`, `text` its only content, and no
/// `structuredContent` at all (not even `null`).
fn assert_error_without_structure(result: &Value, text: &str, how: &str) {
    assert_eq!(result["isError"], true, "{how}: {result}");
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": text}]),
        "{how}: {result}"
    );
    assert!(
        result.get("structuredContent").is_none(),
        "{how}: an error result carries structuredContent: {result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_result_of_a_typed_tool_never_carries_structured_content() {
    let (sessions, host) = sessions(McpServer::new(router())).await;
    for (how, mut session) in sessions {
        // The tool is typed, and its success is structured.
        session
            .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
            .await;
        let listed = session.answer(1).await;
        let tools = listed["result"]["tools"].as_array().unwrap();
        let resolve = tools.iter().find(|tool| tool["name"] == "resolve").unwrap();
        assert_eq!(
            resolve["outputSchema"]["type"], "object",
            "{how}: {resolve}"
        );
        let found = session
            .call(2, "resolve", json!({"name": "localhost"}))
            .await;
        assert_eq!(found["isError"], false, "{how}: {found}");
        assert_eq!(
            found["structuredContent"],
            json!({"addr": "127.0.0.1"}),
            "{how}: {found}"
        );
        // The handler failed, after writing: what it wrote (to its stdout,
        // then its stderr, in that order), then why.
        let failed = session.call(3, "resolve", json!({"name": "nowhere"})).await;
        assert_error_without_structure(
            &failed,
            "looking up nowhere\n(not cached)\nresolve: nowhere is unknown",
            how,
        );
        // A bad argument: no handler ran.
        let typo = session.call(4, "resolve", json!({"nmae": "x"})).await;
        assert_error_without_structure(
            &typo,
            "resolve: unknown argument `nmae`; did you mean `name`?",
            how,
        );
        // Past its own timeout.
        let late = session.call(5, "stall", json!({})).await;
        assert_error_without_structure(&late, "command `stall` timed out after 300ms", how);
    }
    host.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commands_own_timeout_applies_under_mcp_over_the_servers() {
    // The server's limit is an hour: the command's own 300 ms applies, in
    // this process and on the host a call is forwarded to.
    let local = McpServer::new(router()).with_call_timeout(Some(Duration::from_secs(3600)));
    let (sessions, host) = sessions(local).await;
    for (how, mut session) in sessions {
        let late = session.call(1, "stall", json!({})).await;
        assert_eq!(
            session::text(&late),
            (true, "command `stall` timed out after 300ms"),
            "{how}: {late}"
        );
        // The session goes on.
        let found = session
            .call(2, "resolve", json!({"name": "localhost"}))
            .await;
        assert_eq!(found["isError"], false, "{how}: {found}");
    }
    host.shutdown(Duration::from_secs(5)).await;
    // The server's limit is 50 ms: a command whose own is an hour outlasts
    // it and answers.
    let server = McpServer::new(router()).with_call_timeout(Some(Duration::from_millis(50)));
    let (mut session, _serving) = Session::start(server).await;
    let lingered = session.call(1, "linger", json!({})).await;
    assert_eq!(session::text(&lingered), (false, "done"), "{lingered}");
}
