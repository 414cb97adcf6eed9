//! An ACP agent under a controller (the Python peer in `tests/peers`):
//! prompts as turns, permission requests asked of the handler, and a
//! shutdown with prompts still queued.

mod support;

#[path = "support/controller.rs"]
mod controller_support;

use support::runtime;

use std::sync::Arc;
use std::time::{Duration, Instant};

use gangway::controller::{
    AgentController, Controller, ControllerInput, LaunchSpec, Status, StopOutcome, TurnProvenance,
};
use serde_json::{Value, json};

use controller_support::{no_meta, until_text};

#[test]
#[ignore = "needs python peers"]
fn an_acp_agent_takes_prompts_as_turns_and_asks_the_handler() {
    runtime().block_on(async {
        let script = format!("{}/tests/peers/acp_agent.py", env!("CARGO_MANIFEST_DIR"));
        let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = asked.clone();
        let agent = AgentController::new(
            "agent",
            LaunchSpec::new("python3").arg(script).cwd("/tmp"),
            move |request: gangway::stdio::IncomingRequest| {
                let log = log.clone();
                async move {
                    log.lock().unwrap().push(request.method.clone());
                    let option = request.params["options"][0]["optionId"].clone();
                    Ok(json!({"outcome": {"outcome": "selected", "optionId": option}}))
                }
            },
        );
        let mut events = agent.subscribe();
        agent.start(no_meta(), None, false).unwrap();
        let tracker = agent.turn_tracker().unwrap();
        agent
            .send_input(ControllerInput::data("hello"), Some(1))
            .unwrap();
        agent.prompt("second").unwrap();
        tokio::time::timeout(Duration::from_secs(60), tracker.wait_completed(2))
            .await
            .expect("both turns end");
        assert_eq!(tracker.turns_started(), 2);
        assert_eq!(tracker.last_stop_reason().as_deref(), Some("end_turn"));
        assert_eq!(tracker.provenance(), Some(TurnProvenance::Host));
        assert!(agent.session_id().unwrap().starts_with("sess-"));
        let mut seen = String::new();
        until_text(&mut events, "permission: allow", &mut seen).await;
        until_text(&mut events, "echo: second", &mut seen).await;
        until_text(&mut events, "end_turn", &mut seen).await;
        assert!(seen.contains("echo: hello"), "{seen}");
        // Every line is one JSON message.
        for line in seen.lines() {
            serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        }
        assert_eq!(
            *asked.lock().unwrap(),
            ["session/request_permission", "session/request_permission"]
        );
        let outcome = agent
            .shutdown(Instant::now() + Duration::from_secs(10))
            .await;
        assert_eq!(outcome, StopOutcome::Exited(0));
        let status = agent.get_runtime_status();
        assert_eq!(
            (status.status, status.exit_code),
            (Status::Done, Some(0)),
            "{status:?}"
        );
    });
}

#[test]
#[ignore = "needs python peers"]
fn an_agent_shut_down_with_prompts_queued_starts_none_of_them() {
    runtime().block_on(async {
        let script = format!("{}/tests/peers/acp_agent.py", env!("CARGO_MANIFEST_DIR"));
        // A handler that never answers: the first turn waits on it.
        let agent = AgentController::new(
            "agent",
            LaunchSpec::new("python3").arg(script),
            |_request: gangway::stdio::IncomingRequest| std::future::pending(),
        );
        let mut events = agent.subscribe();
        agent.start(no_meta(), None, false).unwrap();
        for text in ["first", "second", "third"] {
            agent.send_input(ControllerInput::data(text), None).unwrap();
        }
        until_text(&mut events, "asking permission", &mut String::new()).await;
        let tracker = agent.turn_tracker().unwrap();
        assert!(tracker.is_active());
        assert_eq!(agent.turn_provenance(), Some(TurnProvenance::User));
        let outcome = agent
            .shutdown(Instant::now() + Duration::from_secs(20))
            .await;
        let tail = String::from_utf8(agent.output_tail()).unwrap();
        assert_eq!(
            outcome,
            StopOutcome::Exited(0),
            "ended well before the deadline: {tail}"
        );
        assert_eq!(tracker.turns_started(), 1, "the queued prompts never began");
        assert!(
            tail.contains("permission: cancelled"),
            "the waiting permission request was answered cancelled: {tail}"
        );
    });
}
