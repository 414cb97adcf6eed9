//! A shell on a terminal under a controller: echo, resizes, Ctrl-C and
//! Ctrl-D, its exit code, its jobs (gone with it, spared by a replace), and
//! signals for a shell whose leader is gone, which never reach the host.

mod support;

#[path = "support/controller.rs"]
mod controller_support;

use support::processes::{Session, alive, shut_down_leaving_nothing, wait_for_process};
use support::runtime;

use std::sync::Arc;
use std::time::Duration;

use gangway::controller::{
    Controller, ControllerError, ControllerInput, ControllerRegistry, ExitInfo, LaunchSpec,
    ShellController, Status,
};
use serde_json::json;

use controller_support::{
    interrupt_cat, no_meta, pids_in, run_cat, sh, until, until_exit, until_tasks_at_most,
    until_text, wait_gone,
};

#[test]
fn a_shell_on_a_terminal_echoes_resizes_and_exits_with_its_code() {
    runtime().block_on(async {
        let shell = ShellController::new("term", LaunchSpec::new("sh").env("PS1", "$ "));
        let mut events = shell.subscribe();
        shell
            .start(
                no_meta(),
                Some(json!({"termsize": {"rows": 50, "cols": 132}})),
                false,
            )
            .unwrap();
        let mut seen = String::new();
        shell
            .send_input(ControllerInput::data("echo typed-$((40+2))\n"), None)
            .unwrap();
        until_text(&mut events, "typed-42", &mut seen).await;
        shell
            .send_input(ControllerInput::data("stty size\n"), None)
            .unwrap();
        until_text(&mut events, "50 132", &mut seen).await;
        shell
            .send_input(ControllerInput::resize(30, 100), None)
            .unwrap();
        shell
            .send_input(ControllerInput::data("stty size\n"), None)
            .unwrap();
        until_text(&mut events, "30 100", &mut seen).await;
        // SIGINT goes to the foreground job, as Ctrl-C would.
        interrupt_cat(&shell, &mut events, &mut seen).await;
        // Ctrl-D ends a program reading the terminal.
        run_cat(&shell, &mut events, &mut seen, "cat; echo cat-done-$?", 5).await;
        shell.send_input(ControllerInput::eof(), Some(7)).unwrap();
        until_text(&mut events, "cat-done-0", &mut seen).await;
        shell
            .send_input(ControllerInput::data("exit 3\n"), None)
            .unwrap();
        let (_, exit) = until_exit(&mut events).await;
        assert_eq!(
            exit,
            ExitInfo {
                code: Some(3),
                signal: None
            }
        );
        let status = shell.get_runtime_status();
        assert_eq!((status.status, status.exit_code), (Status::Done, Some(3)));
        assert_eq!(status.controller_type, "shell");
    });
}

#[test]
fn a_shell_and_its_jobs_leave_nothing_behind_but_a_replace_spares_the_jobs() {
    runtime().block_on(async {
        // Shutdown: the shell and its jobs (each in its own group) go.
        let shell = ShellController::new("t", LaunchSpec::new("sh"));
        let mut events = shell.subscribe();
        shell.start(no_meta(), None, false).unwrap();
        let mut seen = String::new();
        shell
            .send_input(
                ControllerInput::data(
                    "sleep 600 & echo job=$!; (sleep 600 & echo job=$!); echo mark-$((2*3))\n",
                ),
                None,
            )
            .unwrap();
        until_text(&mut events, "mark-6", &mut seen).await;
        let jobs = pids_in(&seen, "job=");
        assert_eq!(jobs.len(), 2, "a job, and an orphaned grandchild: {seen}");
        let session = Session::led_by(shell.get_runtime_status().pid.unwrap());
        let live: Vec<u32> = session.live().iter().map(|p| p.pid).collect();
        assert!(
            jobs.iter().all(|p| live.contains(p)),
            "the jobs {jobs:?} run in the session: {live:?}"
        );
        shut_down_leaving_nothing(&shell).await;

        // Replace: the old shell goes, its job stays.
        let registry = ControllerRegistry::new();
        let old = Arc::new(ShellController::new("t", LaunchSpec::new("sh")));
        let mut events = old.subscribe();
        old.start(no_meta(), None, false).unwrap();
        registry.register(old.clone());
        let mut seen = String::new();
        old.send_input(ControllerInput::data("sleep 600 & echo job=$!\n"), None)
            .unwrap();
        until(
            &mut events,
            &mut seen,
            |s| pids_in(s, "job=").len() == 1,
            "the job",
        )
        .await;
        let job = pids_in(&seen, "job=")[0];
        let old_pid = old.get_runtime_status().pid.unwrap();
        let new = Arc::new(ShellController::new("t", LaunchSpec::new("sh")));
        let replaced = registry
            .register(new.clone())
            .expect("the old one is handed back");
        drop(replaced);
        drop(old);
        until_exit(&mut events).await;
        wait_gone(&[old_pid], "the replaced shell", alive);
        // Everything the old shell's run had going is over (its watcher,
        // which would end what is left of the session, last): the job is
        // spared for good, not for now.
        until_tasks_at_most(0, "the replaced shell's tasks").await;
        assert!(alive(job), "the job outlives a replace");
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(job as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        assert_eq!(registry.ids(), ["t"]);
        assert!(Arc::ptr_eq(
            &registry.get("t").unwrap(),
            &(new as Arc<dyn Controller>)
        ));
    });
}

/// Whether this process has received SIGUSR1 (the handler below sets it).
static GOT_USR1: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn note_usr1(_: nix::libc::c_int) {
    GOT_USR1.store(true, std::sync::atomic::Ordering::SeqCst);
}

#[test]
fn signals_for_a_shell_whose_leader_is_gone_never_reach_the_host() {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        sigaction(
            Signal::SIGUSR1,
            &SigAction::new(
                SigHandler::Handler(note_usr1),
                SaFlags::empty(),
                SigSet::empty(),
            ),
        )
        .unwrap();
    }
    runtime().block_on(async {
        // The leader exits (once it reads a line) while a process in a
        // session of its own keeps the terminal open: the terminal then has
        // no foreground group.
        let shell = ShellController::new(
            "gone",
            sh("trap '' USR1; setsid sleep 60 & echo keeper=$!; echo ignoring; read line; exit 0"),
        );
        let mut events = shell.subscribe();
        shell.start(no_meta(), None, false).unwrap();
        let mut seen = String::new();
        until_text(&mut events, "ignoring", &mut seen).await;
        let keeper = pids_in(&seen, "keeper=")[0];
        // Until it has a session of its own, the keeper would go with the
        // leader's (hung up, or ended with what the leader left).
        wait_for_process(keeper, "keeper in a session of its own", |p| {
            p.session == keeper && p.name == "sleep"
        });
        let usr1 = || ControllerInput::signal("USR1");
        // While the leader lives, every signal is taken (and ignored).
        let mut seq = 1;
        for _ in 0..20 {
            shell.send_input(usr1(), Some(seq)).unwrap();
            shell.send_input(usr1(), None).unwrap();
            seq += 1;
        }
        shell
            .send_input(ControllerInput::data("go\n"), Some(seq))
            .unwrap();
        seq += 1;
        // Then through its exit and past it: each signal is taken (queued
        // behind the line, so it meets the leaderless terminal, or the end
        // of the run) or, once the controller has recorded the exit,
        // refused as not running, and never taken again after that. At
        // most 100 rounds, 240 inputs in all, well within the writer's
        // queue however far it falls behind.
        let mut refused = false;
        for _ in 0..100 {
            for seq in [Some(seq), None] {
                match shell.send_input(usr1(), seq) {
                    Ok(()) => assert!(!refused, "taken after a refusal"),
                    Err(ControllerError::NotRunning { .. }) => refused = true,
                    Err(other) => panic!("{other}"),
                }
            }
            if refused {
                break;
            }
            seq += 1;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let (_, exit) = until_exit(&mut events).await;
        assert_eq!(exit.code, Some(0), "{exit:?}");
        let err = shell.send_input(usr1(), None).unwrap_err();
        assert!(matches!(err, ControllerError::NotRunning { .. }), "{err}");
        let status = shell.get_runtime_status();
        assert_eq!(
            (status.status, status.exit_code),
            (Status::Done, Some(0)),
            "{status:?}"
        );
        assert!(alive(keeper), "the keeper held the terminal throughout");
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(keeper as i32),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
    });
    assert!(
        !GOT_USR1.load(std::sync::atomic::Ordering::SeqCst),
        "a signal meant for the shell reached the host"
    );
}
