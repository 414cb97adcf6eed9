//! A sandboxed shell under a controller: `sh` inside bubblewrap on a
//! terminal, with a live host's `SandboxEnv`, calls a generated wrapper and
//! the answer reaches the controller's subscriber.

mod common;
// The workspace tests' `/proc` helpers (the file needs only `std` and
// `gangway::controller`).
#[path = "../../tests/support/processes.rs"]
mod processes;

use std::time::Duration;

use common::{Host, require};
use gangway::controller::{Controller, ControllerInput, LaunchSpec, OutputEvent, ShellController};

#[test]
#[ignore = "needs bubblewrap"]
fn a_shell_in_bwrap_calls_the_host_through_its_wrappers() {
    require(&["bwrap"]);
    let host = Host::start();
    // The prefix sets the sandbox's whole environment (`--clearenv`).
    let prefix = gangway::ipc::Bwrap::new(&host.env())
        .setenv("PS1", "sandbox$ ")
        .prefix()
        .unwrap();
    let spec = LaunchSpec::new("sh").prefix(prefix);
    host.runtime.block_on(async {
        let shell = ShellController::new("sandboxed", spec);
        let mut events = shell.subscribe();
        shell.start(Default::default(), None, false).unwrap();
        shell
            .send_input(
                ControllerInput::data("search --verbose from-the-sandbox; echo done-$((6*7))\n"),
                None,
            )
            .unwrap();
        let mut seen = String::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while !seen.contains("done-42") {
            match tokio::time::timeout_at(deadline, events.recv()).await {
                Ok(Some(OutputEvent::Output { data, .. })) => {
                    seen.push_str(&String::from_utf8_lossy(&data));
                }
                other => panic!("{other:?} before the answer; so far: {seen}"),
            }
        }
        // The prompt set with `Bwrap::setenv` reached the sandbox's shell.
        assert!(seen.contains("sandbox$ "), "{seen}");
        // On a terminal the JSON is indented, as `jq` does.
        assert!(
            seen.contains(r#""query": "from-the-sandbox""#) && seen.contains(r#""verbose": true"#),
            "the host's answer reached the subscriber: {seen}"
        );
        // Nothing of the sandbox (bwrap, its namespace's init, the shell)
        // is left.
        processes::shut_down_leaving_nothing(&shell).await;
    });
}
