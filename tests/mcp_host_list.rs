//! A forwarding server (what `gangway mcp` runs in a sandbox) asks its host
//! for the tools at every `tools/list`: a command the host comes to serve
//! shows up, and one it stops serving goes, in the same session, without
//! a restart. (`cli/tests/mcp.rs` runs the same through `gangway mcp`.)

#[path = "../examples/mcp/commands.rs"]
mod commands;

#[path = "peers/mcp_fake_host.rs"]
mod fake_host;

#[path = "support/mcp_session.rs"]
mod session;

use gangway::ipc::AsyncIpcClient;
use gangway::mcp::McpServer;
use session::Session;

/// The names of the tools `session` lists (request `id`).
async fn listed(session: &mut Session, id: u64) -> Vec<String> {
    session.send(fake_host::list_request(id)).await;
    fake_host::tool_names(&session.answer(id).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_tools_list_asks_the_host_so_its_changes_show_without_a_restart() {
    let (host, endpoint) = fake_host::FakeHost::start(commands::router().manifest(), &["greet"]);
    let client = AsyncIpcClient::connect_to(&endpoint, fake_host::TOKEN)
        .await
        .unwrap();
    let (mut session, _serving) = Session::start(McpServer::forwarding(client)).await;

    assert_eq!(listed(&mut session, 1).await, ["greet"]);
    // The host comes to serve `count_words`: the next list has it.
    host.serve(&["count_words", "greet"]);
    assert_eq!(listed(&mut session, 2).await, ["count_words", "greet"]);
    // And stops serving `greet`: the next list has it no more.
    host.serve(&["count_words"]);
    assert_eq!(listed(&mut session, 3).await, ["count_words"]);
    // Each list was the host's, asked then.
    assert_eq!(host.lists(), 3);
}
