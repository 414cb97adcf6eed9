//! The processes on this machine, from `/proc`, and the check that a
//! stopped controller left none of its session behind.
//!
//! A module of its own so that the `gangway-cli` package's tests can use it
//! too (`#[path = "../../tests/support/processes.rs"] mod processes;`):
//! it needs only `std` and `gangway::controller`.

// Each test file uses a part.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use gangway::controller::{Controller, StopOutcome};

/// A process, as `/proc/PID/stat` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    pub pid: u32,
    /// The command name (`comm`), for messages.
    pub name: String,
    /// `R`, `S`, `D`, `T`, `Z` (zombie)...
    pub state: char,
    pub parent: u32,
    pub group: u32,
    pub session: u32,
    /// When it started, in clock ticks since boot.
    pub started: u64,
}

impl Process {
    /// Reads `/proc/PID/stat`; `None` once the process is gone.
    pub fn read(pid: u32) -> Option<Process> {
        // comm may be any bytes: read lossily rather than miss the process.
        let stat =
            String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/stat")).ok()?).into_owned();
        // `pid (comm) state ppid pgrp session ...`: the name may hold
        // anything, parentheses and spaces included, so the fields are
        // counted from its last `)`.
        let open = stat.find('(')?;
        let close = stat.rfind(')')?;
        let name = stat.get(open + 1..close)?.to_owned();
        let fields: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
        Some(Process {
            pid,
            name,
            state: fields.first()?.chars().next()?,
            parent: fields.get(1)?.parse().ok()?,
            group: fields.get(2)?.parse().ok()?,
            session: fields.get(3)?.parse().ok()?,
            // Field 22 of the line; the 20th after the name.
            started: fields.get(19)?.parse().ok()?,
        })
    }

    /// Not a zombie (nor dead): it still runs, or could.
    pub fn is_live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Every process now (one that ends while `/proc` is read is left out).
pub fn processes() -> Vec<Process> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .filter_map(Process::read)
        .collect()
}

/// Waits (polling `/proc`, up to 30 s) until process `pid` is there and
/// `ready` holds for it; returns it.
pub fn wait_for_process(pid: u32, what: &str, ready: impl Fn(&Process) -> bool) -> Process {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let process = Process::read(pid);
        if let Some(process) = process.as_ref().filter(|p| ready(p)) {
            return process.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no {what} after 30 s: {process:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` is alive (a zombie is not).
pub fn alive(pid: u32) -> bool {
    Process::read(pid).is_some_and(|process| process.is_live())
}

/// A session, named by its leader (whose pid is the session's id), and
/// when the leader started: a pid used again later is a different session.
#[derive(Debug, Clone, Copy)]
pub struct Session {
    pub id: u32,
    leader_started: u64,
}

impl Session {
    /// The session that `leader` leads (it must be running).
    pub fn led_by(leader: u32) -> Session {
        let process = Process::read(leader).expect("the session leader runs");
        assert_eq!(process.session, leader, "{process:?} leads no session");
        Session {
            id: leader,
            leader_started: process.started,
        }
    }

    /// The live processes of the session: every one whose session id is
    /// its leader's, whatever its parent or group (a `( ... ) &` subshell,
    /// a child of `timeout` in the group `timeout` made, a job orphaned to
    /// init). Zombies are left out: once its parent is gone, init reaps a
    /// zombie, which is no business of the controller; and one whose
    /// parent lives holds nothing but its exit status.
    pub fn live(&self) -> Vec<Process> {
        let all = processes();
        // The kernel gives the id out again only once nothing in the
        // session is left, zombies included; a new leader under it means
        // the old session is gone.
        if all
            .iter()
            .any(|p| p.pid == self.id && p.started != self.leader_started)
        {
            return Vec::new();
        }
        all.into_iter()
            .filter(|p| p.session == self.id && p.is_live())
            .collect()
    }

    /// Waits (polling `/proc`, up to 30 s) until no live process of the
    /// session is left; fails naming those that are.
    pub fn wait_empty(&self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = self.live();
            if left.is_empty() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: left behind in session {}: {left:#?}",
                self.id
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits (polling `/proc`, up to 30 s) until `ready` holds for the
    /// session's live processes; returns them.
    pub fn wait_for(&self, what: &str, ready: impl Fn(&[Process]) -> bool) -> Vec<Process> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let live = self.live();
            if ready(&live) {
                return live;
            }
            assert!(
                Instant::now() < deadline,
                "no {what} after 30 s in session {}: {live:#?}",
                self.id
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Shuts the running `controller` down (within 10 s), expects it to end on
/// the polite signal or by exiting, and waits until nothing of its session
/// (the session its process leads) is left alive.
pub async fn shut_down_leaving_nothing(controller: &dyn Controller) {
    let leader = controller
        .get_runtime_status()
        .pid
        .expect("the controller runs");
    let session = Session::led_by(leader);
    let outcome = controller
        .shutdown(Instant::now() + Duration::from_secs(10))
        .await;
    assert!(
        matches!(outcome, StopOutcome::Stopped | StopOutcome::Exited(_)),
        "{outcome:?}"
    );
    session.wait_empty(&format!("shutting `{}` down", controller.block_id()));
}
