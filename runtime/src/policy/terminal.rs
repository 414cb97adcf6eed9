//! Asking on the host's terminal: [`TerminalApprover`] shows the call
//! (scope, command, arguments with secrets redacted, the asking rule and
//! its reason) on `/dev/tty`, the controlling terminal of the host, never
//! the sandbox's, and reads one key. Everything a sandbox chose (the
//! arguments) is shown with control and direction-changing characters
//! escaped, so no argument can draw over the question or reorder it.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::termios::{self, LocalFlags, SetArg, SpecialCharacterIndices, Termios};
use serde_json::Value;
use tokio::io::unix::AsyncFd;

use super::approver::{Approval, ApprovalRequest, Approver};
use crate::invisible::is_invisible;

/// The longest argument value shown, in characters.
const MAX_SHOWN: usize = 1300;
/// How long a question is shown before keys answer it.
const SETTLE: Duration = Duration::from_millis(400);
/// How long the input must be quiet after an escape sequence begins before
/// keys answer again.
const QUIET: Duration = Duration::from_millis(60);
/// The most characters of all the values shown whole together (more scroll
/// the question off a terminal).
const MAX_SHOWN_ALL: usize = 4000;
/// The longest reason read.
const MAX_REASON: usize = 500;

/// Asks a person at the host's terminal (`/dev/tty`) about each call a
/// policy asks about, one question at a time in the process, and reads one
/// key: `y` this once, `s` for this session, `a` always, `n` to refuse
/// (then a reason, or Enter for none), offered 0.4 s after the question is
/// drawn, with what `s` and `a` would hold to. Nothing else answers: not
/// a capital, not a key typed before the keys were offered, not anything
/// in an escape sequence (an arrow or function key, a mouse report, a
/// terminal's reply to a query) or after one until the input goes quiet.
/// When a value (or all of them together) is too long to show whole, only
/// `y` and `n` are taken. When
/// the host has no terminal (or runs in its background), the answer is
/// [`Approval::Unavailable`]: the call is refused, its caller told it
/// needs approval. A question whose call is cancelled (the caller's
/// Ctrl-C, its timeout) is taken down, saying so.
///
/// Give sandboxes output of their own (a pipe, a pseudo-terminal of
/// theirs), never the terminal this approver asks on: a process that can
/// write to it can draw over the question.
#[derive(Debug)]
pub struct TerminalApprover {
    path: PathBuf,
}

/// One question at a time in the process, whichever approver asks: two on
/// one terminal would take each other's keys, and the second to start
/// would save the first's single-key mode as the terminal's own.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

impl Default for TerminalApprover {
    fn default() -> Self {
        TerminalApprover::new()
    }
}

impl TerminalApprover {
    /// Asks on the host's controlling terminal, `/dev/tty`.
    pub fn new() -> Self {
        TerminalApprover::on("/dev/tty")
    }

    /// Asks on the terminal device at `path` (a pseudo-terminal a host
    /// made for its operator, say).
    pub fn on(path: impl Into<PathBuf>) -> Self {
        TerminalApprover { path: path.into() }
    }
}

impl Approver for TerminalApprover {
    fn approve<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Approval> + Send + 'a>> {
        Box::pin(async move {
            let _turn = TURN.lock().await;
            let mut terminal = match Terminal::open(&self.path) {
                Ok(terminal) => terminal,
                Err(error) => {
                    return Approval::Unavailable(format!(
                        "no terminal to ask on ({}: {error})",
                        self.path.display()
                    ));
                }
            };
            match terminal.ask(request).await {
                Ok(approval) => approval,
                Err(error) => {
                    terminal.answered = true;
                    Approval::Unavailable(format!(
                        "the terminal {} failed: {error}",
                        self.path.display()
                    ))
                }
            }
        })
    }
}

/// The terminal while a question is on it: in single-key mode, set back
/// as it was when dropped.
struct Terminal {
    fd: AsyncFd<File>,
    saved: Termios,
    answered: bool,
}

impl Terminal {
    fn open(path: &Path) -> io::Result<Terminal> {
        // O_NOCTTY: asking must not make the terminal the host's own.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
            .open(path)?;
        let saved = termios::tcgetattr(&file).map_err(io::Error::from)?;
        // A host in the background of its own terminal would be stopped
        // (SIGTTOU, SIGTTIN) by setting or reading it.
        if let Ok(foreground) = nix::unistd::tcgetpgrp(&file)
            && foreground != nix::unistd::getpgrp()
        {
            return Err(io::Error::other(
                "the host runs in the background of this terminal",
            ));
        }
        // SAFETY: the `File` owns its descriptor, open until the `AsyncFd`
        // (which owns the `File`) is dropped.
        let fd = unsafe { AsyncFd::register(file) }.map_err(io::Error::from)?;
        let mut keys = saved.clone();
        keys.local_flags
            .remove(LocalFlags::ICANON | LocalFlags::ECHO);
        keys.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
        keys.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
        termios::tcsetattr(fd.get_ref(), SetArg::TCSANOW, &keys).map_err(io::Error::from)?;
        Ok(Terminal {
            fd,
            saved,
            answered: false,
        })
    }

    async fn ask(&mut self, request: &ApprovalRequest) -> io::Result<Approval> {
        let (question, keys_line, whole) = question(request);
        self.write(&question).await?;
        // Keys typed before the person could read the question (meant for
        // the question before it, or for something else) are dropped: the
        // keys it takes are offered only after a moment.
        tokio::time::sleep(SETTLE).await;
        termios::tcflush(self.fd.get_ref(), termios::FlushArg::TCIFLUSH)
            .map_err(io::Error::from)?;
        self.write(&keys_line).await?;
        let approval = loop {
            let Some(key) = self.read_key().await? else {
                self.answered = true;
                return Ok(Approval::Unavailable("the terminal closed".to_owned()));
            };
            match key {
                b'y' => break Approval::Once,
                b's' if whole => break Approval::Session,
                b'a' if whole => break Approval::Always,
                b'n' => break Approval::Deny(self.read_reason().await?),
                // An escape sequence (a function key, an arrow, a mouse or
                // other report from the terminal) or a byte past ASCII: none
                // of what follows is an answer until the input goes quiet.
                0x1b | 0x80.. => self.skip_until_quiet().await?,
                _ => {
                    let keys = if whole { "y, s, a or n" } else { "y or n" };
                    self.write(&format!("\r\n  Press {keys}: ")).await?;
                }
            }
        };
        self.answered = true;
        let said = match &approval {
            Approval::Once => "allowed, this once",
            Approval::Session => "allowed for this session",
            Approval::Always => "allowed from now on (a rule is added)",
            _ => "refused",
        };
        self.write(&format!("\r\n  -> {said}\r\n")).await?;
        Ok(approval)
    }

    /// The reason for a refusal: one line, typed with echo on.
    async fn read_reason(&mut self) -> io::Result<String> {
        self.write("n\r\n  Why (Enter for no reason): ").await?;
        let mut line = self.saved.clone();
        line.local_flags
            .insert(LocalFlags::ICANON | LocalFlags::ECHO);
        termios::tcsetattr(self.fd.get_ref(), SetArg::TCSANOW, &line).map_err(io::Error::from)?;
        let mut reason = Vec::new();
        while let Some(byte) = self.read_key().await? {
            if byte == b'\n' || byte == b'\r' {
                break;
            }
            if reason.len() < MAX_REASON {
                reason.push(byte);
            }
        }
        Ok(String::from_utf8_lossy(&reason).trim().to_owned())
    }

    /// One byte typed; `None` at the end (the terminal hung up).
    async fn read_key(&mut self) -> io::Result<Option<u8>> {
        loop {
            let mut ready = self.fd.readable().await?;
            let mut byte = [0u8; 1];
            match ready.try_io(|fd| fd.get_ref().read(&mut byte)) {
                Ok(Ok(0)) => return Ok(None),
                Ok(Ok(_)) => return Ok(Some(byte[0])),
                // A hung-up pseudo-terminal reads EIO.
                Ok(Err(error)) if error.raw_os_error() == Some(libc::EIO) => return Ok(None),
                Ok(Err(error)) if error.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(error)) => return Err(error),
                Err(_would_block) => {}
            }
        }
    }

    /// Drops every byte typed until none has come for [`QUIET`]: the rest
    /// of an escape sequence, whatever its kind or length, arrives at once.
    async fn skip_until_quiet(&mut self) -> io::Result<()> {
        loop {
            match tokio::time::timeout(QUIET, self.read_key()).await {
                Err(_quiet) => return Ok(()),
                Ok(Ok(Some(_))) => {}
                Ok(Ok(None)) => return Ok(()),
                Ok(Err(error)) => return Err(error),
            }
        }
    }

    async fn write(&mut self, text: &str) -> io::Result<()> {
        let mut rest = text.as_bytes();
        while !rest.is_empty() {
            let mut ready = self.fd.writable().await?;
            match ready.try_io(|fd| fd.get_ref().write(rest)) {
                Ok(Ok(written)) => rest = &rest[written..],
                Ok(Err(error)) if error.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(error)) => return Err(error),
                Err(_would_block) => {}
            }
        }
        Ok(())
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let file = self.fd.get_ref();
        if !self.answered {
            // Best effort: the question is moot, and the person should know.
            let _ = (&*file).write_all(b"\r\n  -> the call was cancelled; no answer is needed\r\n");
        }
        let _ = termios::tcsetattr(file, SetArg::TCSANOW, &self.saved);
    }
}

/// The question (every value the sandbox chose shown escaped), the line
/// offering its keys, and whether every value is shown whole (else only
/// this call can be approved: an answer for more would cover what no one
/// saw).
fn question(request: &ApprovalRequest) -> (String, String, bool) {
    let mut text = String::from("\r\n== A sandbox's call needs your approval ==\r\n");
    let mut whole = true;
    let mut total = 0;
    let mut show = |value: &str| {
        let (shown, all) = shown(value);
        total += shown.len();
        whole &= all && total <= MAX_SHOWN_ALL;
        shown
    };
    let scope = request.scope().unwrap_or("(full access)");
    let _ = write!(text, "  scope:   {}\r\n", show(scope));
    let _ = write!(text, "  command: {}\r\n", show(request.command()));
    match request.args().as_object() {
        Some(args) if !args.is_empty() => {
            text.push_str("  arguments:\r\n");
            for (name, value) in args {
                let value = match value {
                    Value::String(text) => format!("{text:?}"),
                    other => other.to_string(),
                };
                let _ = write!(text, "    {} = {}\r\n", show(name), show(&value));
            }
        }
        _ => text.push_str("  arguments: (none)\r\n"),
    }
    match (request.rule(), request.reason()) {
        (Some(rule), Some(reason)) => {
            let _ = write!(text, "  rule:    {} ({})\r\n", show(rule), show(reason));
        }
        (Some(rule), None) => {
            let _ = write!(text, "  rule:    {}\r\n", show(rule));
        }
        (None, _) => text.push_str("  rule:    none matches; the policy's default is to ask\r\n"),
    }
    let keys = if !whole {
        "  (too much to show whole: only this call can be approved)\r\n  [y] once  [n] refuse: "
            .to_owned()
    } else {
        let names = |names: &[String]| {
            let names: Vec<String> = names.iter().map(|name| shown(name).0).collect();
            names.join(", ")
        };
        let held = match (request.rule(), request.held_args()) {
            (_, None) => String::new(),
            (None, Some(held)) => format!("exactly these arguments ({})", names(held)),
            (Some(_), Some([])) => "any arguments".to_owned(),
            (Some(_), Some(held)) => {
                format!("these values of {}, other arguments any", names(held))
            }
        };
        let held = match held.is_empty() {
            true => String::new(),
            false => format!(
                "  (s and a hold for `{}` with {held})\r\n",
                shown(request.command()).0
            ),
        };
        format!("{held}  [y] once  [s] this session  [a] always  [n] refuse: ")
    };
    (text, keys, whole)
}

/// `text` cut to [`MAX_SHOWN`] characters, with every character that could
/// move the cursor, change colours, reorder the line or hide itself
/// written as an escape (`\u{1b}`); and whether it is shown whole.
fn shown(text: &str) -> (String, bool) {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == MAX_SHOWN {
            let _ = write!(out, "... ({} characters)", text.chars().count());
            return (out, false);
        }
        if c.is_control() || is_invisible(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    (out, true)
}
