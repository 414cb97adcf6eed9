//! Stopping controllers, one by one and through a registry: graceful stops
//! and kills at the deadline, the status a stop leads to, starting again,
//! shutdowns in parallel, and that neither a command nor its background
//! jobs are left behind.

mod support;

#[path = "support/controller.rs"]
mod controller_support;

use support::processes::{Process, shut_down_leaving_nothing};
use support::runtime;

use std::sync::Arc;
use std::time::{Duration, Instant};

use gangway::controller::{
    Controller, ControllerError, ControllerInput, ControllerRegistry, LaunchSpec, Status,
    StopOutcome, SubprocessController,
};

use controller_support::{
    exists, no_meta, sh, start_with_jobs, until_exit, until_tasks_at_most, until_text, wait_gone,
};

#[test]
fn graceful_stops_end_early_and_stubborn_processes_are_killed_at_the_deadline() {
    runtime().block_on(async {
        let polite = SubprocessController::new(
            "polite",
            sh("trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done"),
        );
        let mut events = polite.subscribe();
        polite.start(no_meta(), None, false).unwrap();
        until_text(&mut events, "ready", &mut String::new()).await;
        let outcome = polite
            .shutdown(Instant::now() + Duration::from_secs(30))
            .await;
        assert_eq!(
            outcome,
            StopOutcome::Exited(0),
            "ended on SIGTERM, long before the deadline"
        );

        let plain = SubprocessController::new("plain", LaunchSpec::new("sleep").arg("600"));
        plain.start(no_meta(), None, false).unwrap();
        let outcome = plain
            .shutdown(Instant::now() + Duration::from_secs(30))
            .await;
        assert_eq!(outcome, StopOutcome::Stopped, "died of the SIGTERM itself");

        let stubborn = SubprocessController::new(
            "stubborn",
            sh("trap '' TERM; echo ready; while :; do sleep 0.05; done"),
        );
        let mut events = stubborn.subscribe();
        stubborn.start(no_meta(), None, false).unwrap();
        until_text(&mut events, "ready", &mut String::new()).await;
        let started = Instant::now();
        let outcome = stubborn
            .shutdown(Instant::now() + Duration::from_millis(500))
            .await;
        assert_eq!(outcome, StopOutcome::Killed);
        assert!(
            started.elapsed() >= Duration::from_millis(500),
            "not before the deadline"
        );
        assert_eq!(stubborn.get_runtime_status().status, Status::Done);

        let idle = SubprocessController::new("idle", LaunchSpec::new("true"));
        assert_eq!(idle.shutdown(Instant::now()).await, StopOutcome::NotRunning);
    });
}

#[test]
fn stop_leads_to_the_status_asked_for_and_a_graceful_stop_kills_after_the_grace() {
    runtime().block_on(async {
        let stubborn = SubprocessController::new(
            "s",
            sh("trap '' TERM; echo ready; while :; do sleep 0.05; done")
                .stop_grace(Duration::from_millis(200)),
        );
        let mut events = stubborn.subscribe();
        stubborn.start(no_meta(), None, false).unwrap();
        until_text(&mut events, "ready", &mut String::new()).await;
        stubborn.stop(true, "init").unwrap();
        let (_, exit) = until_exit(&mut events).await;
        assert_eq!(exit.signal, Some(9), "killed after the grace period");
        assert_eq!(stubborn.get_runtime_status().status, Status::Init);
        let err = stubborn.stop(true, "paused").unwrap_err();
        assert!(
            matches!(err, ControllerError::UnknownStatus { .. }),
            "{err}"
        );
        // Started again from its spec.
        stubborn.start(no_meta(), None, false).unwrap();
        until_text(&mut events, "ready", &mut String::new()).await;
        assert_eq!(stubborn.get_runtime_status().status, Status::Running);
        stubborn.stop(false, "done").unwrap();
        until_exit(&mut events).await;
    });
}

#[test]
fn a_command_and_its_background_jobs_leave_nothing_behind() {
    runtime().block_on(async {
        for (how, graceful) in [("stop", false), ("graceful stop", true), ("shutdown", true)] {
            let (command, jobs, session) = start_with_jobs(
                sh("sleep 600 & echo job=$!; (sleep 600 & echo job=$!; wait) & wait"),
                2,
            )
            .await;
            // The `( ... ) &` subshell, which no `$!` names: the second
            // job's parent, a child of the leader.
            let subshell = Process::read(jobs[1]).expect("the job runs").parent;
            assert!(
                session
                    .live()
                    .iter()
                    .any(|p| p.pid == subshell && p.parent == session.id),
                "the subshell {subshell} runs in the session: {:#?}",
                session.live()
            );
            if how == "shutdown" {
                shut_down_leaving_nothing(&command).await;
            } else {
                command.stop(graceful, "done").unwrap();
                session.wait_empty(how);
            }
        }
    });
}

#[test]
fn jobs_that_leave_the_process_group_are_still_ended() {
    runtime().block_on(async {
        // `timeout` puts itself (and the child it starts) in a process
        // group of its own; so does a shell with job control for each job
        // (bash: dash turns job control off without a terminal).
        let (command, jobs, session) = start_with_jobs(
            LaunchSpec::new("bash").args([
                "-c",
                "timeout 1000 sleep 600 & echo job=$!; set -m; sleep 600 & echo job=$!; wait",
            ]),
            2,
        )
        .await;
        // `timeout`'s child, which no `$!` names, once it is there (`timeout`
        // has made its group by then).
        let live = session.wait_for("child of `timeout`", |live| {
            live.iter().any(|p| p.parent == jobs[0])
        });
        let child = live.iter().find(|p| p.parent == jobs[0]).unwrap();
        let group_of = |pid: u32| live.iter().find(|p| p.pid == pid).map(|p| p.group);
        assert_eq!(
            (group_of(jobs[0]), child.group, group_of(jobs[1])),
            (Some(jobs[0]), jobs[0], Some(jobs[1])),
            "groups of their own, out of the leader's: {live:#?}"
        );
        shut_down_leaving_nothing(&command).await;
    });
}

#[test]
fn a_stopped_controller_starts_again_without_force() {
    runtime().block_on(async {
        let command = SubprocessController::new("again", LaunchSpec::new("sleep").arg("600"));
        command.start(no_meta(), None, false).unwrap();
        let first = command.get_runtime_status().pid.unwrap();
        // What one run keeps going on this (otherwise idle) runtime.
        let per_run = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks();
        command.stop(false, "init").unwrap();
        // At once, before the old process is reaped: a new one starts.
        command.start(no_meta(), None, false).unwrap();
        let second = command.get_runtime_status().pid.unwrap();
        let mut events = command.subscribe();
        assert_ne!(first, second);
        assert_eq!(command.get_runtime_status().status, Status::Running);
        // The old process's end is not reported to this run's subscribers:
        // once the old run's tasks have ended, its watcher has had its say.
        until_tasks_at_most(per_run, "the first run's tasks").await;
        assert!(events.try_recv().is_err(), "no stale exit event");
        assert_eq!(command.get_runtime_status().status, Status::Running);
        command.stop(false, "done").unwrap();
        let (_, exit) = until_exit(&mut events).await;
        assert_eq!(exit.signal, Some(9));
        wait_gone(&[first, second], "processes", exists);
    });
}

#[test]
fn a_subscriber_that_never_reads_does_not_stop_a_shutdown() {
    runtime().block_on(async {
        let chatty = SubprocessController::new("yes", LaunchSpec::new("yes"));
        let never_read = chatty.subscribe();
        chatty.start(no_meta(), None, false).unwrap();
        // Its queue full: the output readers now wait for room in it.
        let deadline = Instant::now() + Duration::from_secs(30);
        while never_read.capacity() > 0 {
            assert!(
                Instant::now() < deadline,
                "the subscriber's queue never filled"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let outcome = tokio::time::timeout(
            Duration::from_secs(20),
            chatty.shutdown(Instant::now() + Duration::from_secs(2)),
        )
        .await
        .expect("shutdown resolves");
        assert!(
            matches!(outcome, StopOutcome::Stopped | StopOutcome::Killed),
            "{outcome:?}"
        );
        assert_eq!(chatty.get_runtime_status().status, Status::Done);
    });
}

#[test]
fn five_hundred_start_stop_cycles_leave_no_zombie() {
    let runtime = runtime();
    let mut pids = Vec::new();
    runtime.block_on(async {
        let command = SubprocessController::new("cycle", LaunchSpec::new("sleep").arg("600"));
        for _ in 0..500 {
            command.start(no_meta(), None, true).unwrap();
            pids.push(command.get_runtime_status().pid.unwrap());
            command.stop(false, "init").unwrap();
        }
        let outcome = command
            .shutdown(Instant::now() + Duration::from_secs(5))
            .await;
        assert!(
            matches!(
                outcome,
                StopOutcome::NotRunning | StopOutcome::Killed | StopOutcome::Stopped
            ),
            "{outcome:?}"
        );
        wait_gone(&pids, "processes (zombie or not)", exists);
    });
}

#[test]
fn the_registry_lists_routes_input_and_removes_with_a_shutdown() {
    runtime().block_on(async {
        let registry = ControllerRegistry::new();
        let cat = Arc::new(SubprocessController::new("b-cat", LaunchSpec::new("cat")));
        let mut events = cat.subscribe();
        cat.start(no_meta(), None, false).unwrap();
        registry.register(cat.clone());
        registry.register(Arc::new(SubprocessController::new(
            "a-idle",
            LaunchSpec::new("true"),
        )));
        let listed: Vec<_> = registry
            .list()
            .into_iter()
            .map(|s| (s.id, s.status))
            .collect();
        assert_eq!(
            listed,
            [
                ("a-idle".to_owned(), Status::Init),
                ("b-cat".to_owned(), Status::Running)
            ]
        );
        registry
            .send_input("b-cat", ControllerInput::data("via registry\n"), None)
            .unwrap();
        until_text(&mut events, "via registry", &mut String::new()).await;
        let err = registry
            .send_input("nope", ControllerInput::data("x"), None)
            .unwrap_err();
        assert_eq!(err.to_string(), "no controller `nope`");
        let outcome = registry
            .remove("b-cat", Instant::now() + Duration::from_secs(10))
            .await;
        assert_eq!(outcome, Some(StopOutcome::Stopped));
        assert_eq!(registry.ids(), ["a-idle"]);
        assert_eq!(
            registry.remove("b-cat", Instant::now()).await,
            None,
            "already gone"
        );
        let all = registry
            .shutdown_all(Instant::now() + Duration::from_secs(5))
            .await;
        assert_eq!(all, [("a-idle".to_owned(), StopOutcome::NotRunning)]);
    });
}

#[test]
fn shutting_everything_down_runs_in_parallel() {
    runtime().block_on(async {
        let marks = tempfile::tempdir().unwrap();
        let registry = ControllerRegistry::new();
        let mut events = Vec::new();
        for id in ["a", "b", "c"] {
            // Asked to stop, each says so (a file named after it), then
            // exits only once all three have been asked: stopped one after
            // another, the first would wait for the others until killed at
            // the deadline.
            let spec = sh(r#"trap 'touch "$MARKS/$ID"
                    until [ -e "$MARKS/a" ] && [ -e "$MARKS/b" ] && [ -e "$MARKS/c" ]; do
                        sleep 0.01
                    done
                    exit 0' TERM
                echo ready; while :; do sleep 0.05; done"#)
            .env("MARKS", marks.path())
            .env("ID", id);
            let slow = Arc::new(SubprocessController::new(id, spec));
            let mut subscriber = slow.subscribe();
            slow.start(no_meta(), None, false).unwrap();
            until_text(&mut subscriber, "ready", &mut String::new()).await;
            events.push(subscriber);
            registry.register(slow);
        }
        let outcomes = registry
            .shutdown_all(Instant::now() + Duration::from_secs(30))
            .await;
        assert_eq!(
            outcomes,
            [
                ("a".to_owned(), StopOutcome::Exited(0)),
                ("b".to_owned(), StopOutcome::Exited(0)),
                ("c".to_owned(), StopOutcome::Exited(0)),
            ],
            "each was asked to stop before any had ended"
        );
        assert!(registry.ids().is_empty());
    });
}
