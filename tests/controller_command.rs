//! Commands under a controller: their tagged output, real exit codes and
//! environment, the input they are sent (in order by sequence number, and
//! kept for a retry when there is no room), the signals that reach them
//! (even from a host that ignores signals), and a program that cannot start.

mod support;

#[path = "support/controller.rs"]
mod controller_support;

use support::runtime;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use gangway::controller::{
    Controller, ControllerError, ControllerInput, ExitInfo, LaunchSpec, OutputSource,
    ShellController, Status, SubprocessController,
};
use serde_json::json;

use controller_support::{interrupt_cat, no_meta, sh, text_of, until_exit, until_text};

#[test]
fn a_command_streams_tagged_output_and_its_real_exit_code() {
    runtime().block_on(async {
        let command = SubprocessController::new("c1", sh("echo out; echo err >&2; exit 7"));
        assert_eq!(command.get_runtime_status().status, Status::Init);
        let mut events = command.subscribe();
        command
            .start(
                HashMap::from([("title".into(), json!("demo"))]),
                None,
                false,
            )
            .unwrap();
        let (output, exit) = until_exit(&mut events).await;
        assert_eq!(text_of(&output, OutputSource::Stdout), "out\n");
        assert_eq!(text_of(&output, OutputSource::Stderr), "err\n");
        assert_eq!(
            exit,
            ExitInfo {
                code: Some(7),
                signal: None
            }
        );
        let status = command.get_runtime_status();
        assert_eq!(
            (status.status, status.exit_code, status.pid),
            (Status::Done, Some(7), None)
        );
        assert_eq!(status.block_meta["title"], "demo");
        assert_eq!(status.controller_type, "cmd");
        let tail = String::from_utf8(command.output_tail()).unwrap();
        assert!(tail.contains("out\n") && tail.contains("err\n"), "{tail}");
    });
}

#[test]
fn a_prefixed_process_gets_none_of_the_hosts_environment() {
    // The prefix runs the program as `env env`: the second prints what it
    // was given.
    let spec = LaunchSpec::new("env")
        .prefix(["env"])
        .env("ASKED_FOR", "yes");
    runtime().block_on(async {
        let command = SubprocessController::new("env", spec);
        let mut events = command.subscribe();
        command.start(HashMap::new(), None, false).unwrap();
        let (output, exit) = until_exit(&mut events).await;
        assert_eq!(exit.code, Some(0));
        let printed = text_of(&output, OutputSource::Stdout);
        let names: Vec<&str> = printed
            .lines()
            .filter_map(|line| line.split_once('=').map(|(name, _)| name))
            .collect();
        let kept = ["TERM", "LANG", "LC_ALL", "TZ", "HOME", "PATH", "ASKED_FOR"];
        for name in &names {
            assert!(
                kept.contains(name),
                "the host's {name} reached it:\n{printed}"
            );
        }
        // HOME stays the host's (the host's /tmp is anyone's to write).
        let home = format!("HOME={}", std::env::var("HOME").unwrap_or_default());
        for wanted in ["ASKED_FOR=yes", &home] {
            assert!(
                printed.lines().any(|line| line == wanted),
                "{wanted}:\n{printed}"
            );
        }
        // This test's own environment has plenty it must not pass on.
        assert!(std::env::vars().any(|(name, _)| !kept.contains(&name.as_str())));
    });
}

#[test]
fn input_reaches_stdin_and_signals_reach_the_group_by_name() {
    runtime().block_on(async {
        let cat = SubprocessController::new("cat", LaunchSpec::new("cat"));
        let mut events = cat.subscribe();
        cat.start(no_meta(), None, false).unwrap();
        cat.send_input(ControllerInput::data("hello\n"), None)
            .unwrap();
        let mut seen = String::new();
        until_text(&mut events, "hello\n", &mut seen).await;
        let err = cat
            .send_input(ControllerInput::signal("SIGNOPE"), None)
            .unwrap_err();
        assert!(
            matches!(err, ControllerError::UnknownSignal { .. }),
            "{err}"
        );
        cat.send_input(ControllerInput::resize(10, 10), None)
            .unwrap();
        cat.send_input(ControllerInput::signal("int"), None)
            .unwrap();
        let (_, exit) = until_exit(&mut events).await;
        assert_eq!(
            exit,
            ExitInfo {
                code: None,
                signal: Some(2)
            },
            "killed by SIGINT"
        );
        assert_eq!(cat.get_runtime_status().exit_signal, Some(2));
        let err = cat
            .send_input(ControllerInput::data("late"), None)
            .unwrap_err();
        assert!(matches!(err, ControllerError::NotRunning { .. }), "{err}");
    });
}

/// While alive, this process ignores SIGINT, SIGQUIT and SIGHUP, as a host
/// started in the background of a script (or under `nohup`) does; the old
/// actions come back on drop.
struct IgnoringSignals(Vec<(nix::sys::signal::Signal, nix::sys::signal::SigHandler)>);

impl IgnoringSignals {
    fn start() -> Self {
        use nix::sys::signal::{SigHandler, Signal, signal};
        let ignored = [Signal::SIGINT, Signal::SIGQUIT, Signal::SIGHUP];
        // SAFETY: ignoring installs no handler.
        IgnoringSignals(
            ignored
                .into_iter()
                .map(|sig| (sig, unsafe { signal(sig, SigHandler::SigIgn) }.unwrap()))
                .collect(),
        )
    }
}

impl Drop for IgnoringSignals {
    fn drop(&mut self) {
        for (sig, old) in self.0.drain(..) {
            // SAFETY: puts back what was there.
            unsafe { nix::sys::signal::signal(sig, old) }.unwrap();
        }
    }
}

#[test]
fn signals_end_processes_of_a_host_that_ignores_them() {
    // Ignored signals stay ignored across exec: children must be started
    // with the default actions, or `signal int` and Ctrl-C do nothing.
    let _ignoring = IgnoringSignals::start();
    runtime().block_on(async {
        // (Not SIGQUIT: its default action may leave a core file behind.)
        for (name, number) in [("int", 2), ("SIGHUP", 1)] {
            let cat = SubprocessController::new("cat", LaunchSpec::new("cat"));
            let mut events = cat.subscribe();
            cat.start(no_meta(), None, false).unwrap();
            cat.send_input(ControllerInput::data("ready\n"), None)
                .unwrap();
            until_text(&mut events, "ready\n", &mut String::new()).await;
            cat.send_input(ControllerInput::signal(name), None).unwrap();
            let (_, exit) = until_exit(&mut events).await;
            assert_eq!(exit.signal, Some(number), "{name}: {exit:?}");
        }
        let shell = ShellController::new("term", LaunchSpec::new("sh").env("PS1", "$ "));
        let mut events = shell.subscribe();
        shell.start(no_meta(), None, false).unwrap();
        interrupt_cat(&shell, &mut events, &mut String::new()).await;
        shell
            .send_input(ControllerInput::data("exit\n"), None)
            .unwrap();
        until_exit(&mut events).await;
    });
}

#[test]
fn inputs_sent_with_shuffled_seq_arrive_in_order() {
    runtime().block_on(async {
        let cat = SubprocessController::new("cat", LaunchSpec::new("cat"));
        let mut events = cat.subscribe();
        cat.start(no_meta(), None, false).unwrap();
        // A fixed shuffle of 1..=200.
        let mut order: Vec<u64> = (1..=200).collect();
        let mut rng = support::Rng(0x9e37_79b9_7f4a_7c15);
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for seq in order {
            cat.send_input(ControllerInput::data(format!("{seq},")), Some(seq))
                .unwrap();
        }
        let expected: String = (1..=200).map(|n| format!("{n},")).collect();
        let mut seen = String::new();
        until_text(&mut events, "200,", &mut seen).await;
        assert_eq!(seen, expected);
        let err = cat
            .send_input(ControllerInput::data("x"), Some(5))
            .unwrap_err();
        assert!(
            matches!(
                err,
                ControllerError::StaleInput {
                    seq: 5,
                    expected: 201
                }
            ),
            "{err}"
        );
    });
}

#[test]
fn eof_closes_a_commands_stdin() {
    runtime().block_on(async {
        let wc = SubprocessController::new("wc", LaunchSpec::new("wc").arg("-c"));
        let mut events = wc.subscribe();
        wc.start(no_meta(), None, false).unwrap();
        wc.send_input(ControllerInput::data("12345"), Some(1))
            .unwrap();
        wc.send_input(ControllerInput::eof(), Some(2)).unwrap();
        let (output, exit) = until_exit(&mut events).await;
        assert_eq!(text_of(&output, OutputSource::Stdout).trim(), "5");
        assert_eq!(exit.code, Some(0));
    });
}

#[test]
fn a_program_that_cannot_start_is_named_and_no_runtime_is_an_error() {
    runtime().block_on(async {
        let missing = SubprocessController::new("m", LaunchSpec::new("/no/such/program"));
        let err = missing.start(no_meta(), None, false).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot start `/no/such/program`: "),
            "{err}"
        );
        assert_eq!(missing.get_runtime_status().status, Status::Init);
    });
    let outside = SubprocessController::new("o", LaunchSpec::new("true"));
    let err = outside.start(no_meta(), None, false).unwrap_err();
    assert!(matches!(err, ControllerError::NoRuntime), "{err}");
}

/// A process's standard input when it is a pipe, opened for looking (never
/// reading): how full the pipe is.
struct PipeGauge(std::fs::File);

impl PipeGauge {
    fn of(pid: u32) -> PipeGauge {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening the link opens the pipe itself, as another reader.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(format!("/proc/{pid}/fd/0"))
            .unwrap();
        PipeGauge(file)
    }

    /// Whether the pipe has no room for `bytes` more (not more than
    /// `PIPE_BUF`, so written whole or not at all).
    fn has_no_room_for(&self, bytes: usize) -> bool {
        use std::os::fd::AsRawFd;
        let fd = self.0.as_raw_fd();
        let mut queued: nix::libc::c_int = 0;
        // SAFETY: `fd` is open for the call, and FIONREAD writes one int
        // to the pointer given.
        let read = unsafe { nix::libc::ioctl(fd, nix::libc::FIONREAD, &mut queued) };
        // SAFETY: as above; F_GETPIPE_SZ takes no argument.
        let size = unsafe { nix::libc::fcntl(fd, nix::libc::F_GETPIPE_SZ) };
        assert!(read == 0 && size > 0, "{}", std::io::Error::last_os_error());
        queued as usize + bytes > size as usize
    }
}

#[test]
fn sequenced_input_refused_for_lack_of_room_is_kept_for_the_retry() {
    runtime().block_on(async {
        let gate = tempfile::tempdir().unwrap();
        // Reads nothing until the file `go` appears, then echoes everything.
        let slow = SubprocessController::new(
            "slow",
            sh(r#"until [ -e "$GATE/go" ]; do sleep 0.01; done; exec cat"#)
                .env("GATE", gate.path()),
        );
        let mut events = slow.subscribe();
        slow.start(no_meta(), None, false).unwrap();
        let chunk = "f".repeat(1024);
        let mut queued = 0usize;
        // Queues chunks until the input queue has no room.
        let fill = |queued: &mut usize| loop {
            match slow.send_input(ControllerInput::data(chunk.clone()), None) {
                Ok(()) => *queued += 1,
                Err(ControllerError::InputBacklogFull { .. }) => break,
                Err(other) => panic!("{other}"),
            }
        };
        // Fill the queue until the pipe behind it is full too: the writer
        // is then stuck on the pipe, and no room comes while nothing reads.
        let gauge = PipeGauge::of(slow.get_runtime_status().pid.unwrap());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            fill(&mut queued);
            if gauge.has_no_room_for(chunk.len()) {
                break;
            }
            assert!(Instant::now() < deadline, "the pipe never filled");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // What the writer took from the queue meanwhile.
        fill(&mut queued);
        drop(gauge);
        // 2 to 5 wait for 1, which finds no room.
        for seq in 2..=5u64 {
            slow.send_input(ControllerInput::data(format!("<{seq}>")), Some(seq))
                .unwrap();
        }
        let err = slow
            .send_input(ControllerInput::data("<1>"), Some(1))
            .unwrap_err();
        assert!(
            matches!(err, ControllerError::InputBacklogFull { .. }),
            "{err}"
        );
        // Once `cat` reads, the same number goes through, and 2 to 5 follow.
        std::fs::write(gate.path().join("go"), b"").unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while let Err(err) = slow.send_input(ControllerInput::data("<1>"), Some(1)) {
            assert!(
                matches!(err, ControllerError::InputBacklogFull { .. }),
                "{err}"
            );
            assert!(Instant::now() < deadline, "no room came");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut seen = String::new();
        until_text(&mut events, "<5>", &mut seen).await;
        assert_eq!(seen.matches(&chunk).count(), queued, "every chunk arrived");
        assert!(
            seen.ends_with("<1><2><3><4><5>"),
            "{}",
            &seen[seen.len() - 40..]
        );
        slow.stop(false, "done").unwrap();
    });
}
