//! What bounds a long call's traffic, through the real wrappers: input
//! flows within the host's credit (the caller's pipe blocks once a window
//! is taken ahead of the handler, and more flows as the handler reads),
//! output waits for a slow reader once a window is queued, progress never
//! holds a handler, `ctx.stderr` reaches the caller's stderr in order with
//! its stdout, and `GANGWAY_PROGRESS=off` hides the progress line.
//!
//! "Blocked" is a claim about what does not happen; each test first waits
//! for what must happen (the window taken, the handler held), then watches
//! for a quiet moment ([`QUIET`]) with a ceiling checked throughout. On a
//! loaded machine the quiet moment can only come early and let a broken
//! host pass; it never fails a correct one.

mod common;

use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::process::{finish, spawn};
use common::streaming::{FNV_START, Probes, fnv1a, probed_host};
use common::{Host, PATIENCE, Style, each_style, require, wait_until};
use gangway::ipc::IpcServer;

/// The credit the host grants ahead of a handler (`INPUT_WINDOW`).
const INPUT_WINDOW: u64 = 1024 * 1024;

/// The output a call may queue for a slow reader (`OUTPUT_WINDOW`).
const OUTPUT_WINDOW: u64 = 1024 * 1024;

/// The largest output chunk the host sends.
const MAX_OUTPUT_CHUNK: u64 = 256 * 1024;

/// How long nothing must move before a flow counts as held.
const QUIET: Duration = Duration::from_millis(500);

/// A host with the probe commands, wrappers of `style`, a short grace.
fn host(style: Style) -> (Host, Probes) {
    probed_host(IpcServer::builder(), style, Duration::from_millis(300))
}

/// The capacity of the pipe `fd` is an end of.
fn pipe_size(fd: &impl AsRawFd) -> u64 {
    // SAFETY: F_GETPIPE_SZ reads a property of an open descriptor.
    let size = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETPIPE_SZ) };
    assert!(size > 0, "F_GETPIPE_SZ");
    size as u64
}

/// A test's end of a caller's standard input: written without blocking,
/// counting (and hashing) what the caller took.
struct Feeder {
    pipe: ChildStdin,
    written: u64,
    total: u64,
    hash: u64,
}

impl Feeder {
    fn new(pipe: ChildStdin, total: u64) -> Self {
        // SAFETY: sets a flag on a descriptor this process owns.
        unsafe {
            let fd = pipe.as_raw_fd();
            let flags = libc::fcntl(fd, libc::F_GETFL);
            assert_eq!(libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK), 0);
        }
        Feeder {
            pipe,
            written: 0,
            total,
            hash: FNV_START,
        }
    }

    /// Writes until the pipe is full or the input all written. Each write
    /// is a page at most: whole, or not at all.
    fn fill(&mut self) {
        let mut page = [0u8; 4096];
        while self.written < self.total {
            let n = (self.total - self.written).min(page.len() as u64) as usize;
            for (offset, byte) in page[..n].iter_mut().enumerate() {
                *byte = ((self.written + offset as u64) % 251) as u8;
            }
            match self.pipe.write(&page[..n]) {
                Ok(taken) => {
                    self.hash = fnv1a(self.hash, &page[..taken]);
                    self.written += taken as u64;
                }
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(error) => panic!("the caller's stdin: {error}"),
            }
        }
    }

    /// Whether the pipe has room within `timeout`.
    fn writable_within(&self, timeout: Duration) -> bool {
        let mut poll = libc::pollfd {
            fd: self.pipe.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: one pollfd, which lives for the call.
        unsafe { libc::poll(&mut poll, 1, ms) > 0 }
    }

    /// Feeds the caller until `held` holds, at least `floor()` bytes are
    /// in, and the pipe has stayed full for [`QUIET`]; fails if the caller
    /// ever takes more than `ceiling()`. Gives the bytes taken.
    fn settle(
        &mut self,
        what: &str,
        held: impl Fn() -> bool,
        floor: impl Fn() -> u64,
        ceiling: impl Fn() -> u64,
    ) -> u64 {
        let deadline = Instant::now() + PATIENCE;
        loop {
            self.fill();
            let ceiling = ceiling();
            assert!(
                self.written <= ceiling,
                "{what}: the caller took {} bytes, more than {ceiling}",
                self.written
            );
            let quiet = !self.writable_within(QUIET);
            if quiet && held() && self.written >= floor() {
                return self.written;
            }
            assert!(Instant::now() < deadline, "{what}: not within {PATIENCE:?}");
        }
    }

    /// Writes the rest and closes the pipe.
    fn finish(mut self) -> u64 {
        while self.written < self.total {
            self.fill();
            assert!(
                self.written == self.total || self.writable_within(PATIENCE),
                "the caller stopped taking input at {} bytes",
                self.written
            );
        }
        self.hash
    }
}

/// Starts `command` with a standard input the test writes.
fn spawn_fed(mut command: Command) -> Child {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    command.spawn().expect("the wrapper starts")
}

#[test]
fn input_stops_a_window_ahead_of_the_handler_and_flows_on_as_it_reads() {
    const TOTAL: u64 = 8 * 1024 * 1024;
    const STEP: u64 = 2 * 1024 * 1024;
    each_style(|style| {
        let (host, probes) = host(style);
        let drip = probes.drip.clone();
        let command = host.shell_command(&["sh"], "drip \"$1\"", &[&STEP.to_string()]);
        let mut child = spawn_fed(command);
        let mut feeder = Feeder::new(child.stdin.take().unwrap(), TOTAL);
        let pipe = pipe_size(&feeder.pipe);
        let read = || drip.read.load(Ordering::SeqCst);
        // What the host may have asked for (the window past what the
        // handler read), plus what the pipe holds and the chunk being
        // handed over (the pump's 128 KiB at most; the grant goes out
        // before the handler counts what it read).
        let ceiling = || read() + INPUT_WINDOW + pipe + 128 * 1024;

        // The handler holds after its first chunk: the caller takes the
        // window ahead of it, then its pipe stays full.
        let first = feeder.settle(
            "held after the first chunk",
            || drip.holds.load(Ordering::SeqCst) == 1,
            || INPUT_WINDOW,
            ceiling,
        );
        eprintln!(
            "held after one chunk ({} read): {first} bytes taken",
            read()
        );
        assert!(read() <= 256 * 1024, "one chunk read: {}", read());

        // The handler reads on to the next step: more flows, again a
        // window ahead at most (and at least half a window: credit comes
        // back as the handler reads).
        drip.gate.open();
        let second = feeder.settle(
            "held after the next step",
            || drip.holds.load(Ordering::SeqCst) == 2,
            || read() + INPUT_WINDOW / 2,
            ceiling,
        );
        eprintln!("held after a step ({} read): {second} bytes taken", read());
        assert!(read() >= STEP, "{}", read());
        assert!(second > first, "{second} after {first}");

        // Let it read everything: the input arrives whole.
        drip.gate.open_many(8);
        let hash = feeder.finish();
        let (code, stdout, stderr) = finish(child);
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(stdout, format!("{TOTAL} {hash:016x}\n"));
    });
}

/// Waits until `value()` is at least `floor` and has not moved for
/// [`QUIET`], failing if it ever passes `ceiling`. Gives the value.
fn settle_counter(what: &str, floor: u64, ceiling: u64, value: impl Fn() -> u64) -> u64 {
    let deadline = Instant::now() + PATIENCE;
    let (mut last, mut since) = (value(), Instant::now());
    loop {
        let now = value();
        assert!(now <= ceiling, "{what}: {now} bytes, more than {ceiling}");
        if now != last {
            (last, since) = (now, Instant::now());
        } else if now >= floor && since.elapsed() >= QUIET {
            return now;
        }
        assert!(Instant::now() < deadline, "{what}: not within {PATIENCE:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The kernel's default socket send buffer: how much a Unix socket holds
/// in flight.
fn socket_buffer() -> u64 {
    std::fs::read_to_string("/proc/sys/net/core/wmem_default")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(212_992)
}

#[test]
fn a_caller_that_does_not_read_holds_the_handler_once_a_window_is_queued() {
    const TOTAL: u64 = 32 * 1024 * 1024;
    each_style(|style| {
        let (host, probes) = host(style);
        let command = host.shell_command(&["sh"], "flood \"$1\"", &[&TOTAL.to_string()]);
        // Nobody reads its output until the handler is held.
        let child = spawn(command);
        let pipe = pipe_size(child.stdout.as_ref().unwrap());
        // The window, what the socket holds both ways, the chunk the client
        // is writing and the next, the pipe, and a chunk's rounding.
        let ceiling = OUTPUT_WINDOW + 2 * socket_buffer() + 3 * MAX_OUTPUT_CHUNK + pipe + 64 * 1024;
        // Each write's share of the window counts a few bytes past its own
        // (what a gathered piece costs): a window holds one write less.
        let floor = OUTPUT_WINDOW - 64 * 1024;
        let held = settle_counter("the handler held", floor, ceiling, || {
            probes.flooded.load(Ordering::SeqCst)
        });
        eprintln!("held at {held} bytes (ceiling {ceiling})");
        assert!(held < TOTAL, "{held}");
        // Once read, the whole output arrives.
        let (code, stdout, stderr) = finish(child);
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(stdout.len() as u64, TOTAL);
        assert!(stdout.bytes().all(|byte| byte == b'x'));
        assert_eq!(probes.flooded.load(Ordering::SeqCst), TOTAL);
    });
}

/// The ways a shell runs wrapper `name` (with `args` then `tail`, shell
/// text such as `2>&1`): from `PATH`, and by its path (a script wrapper
/// as `sh`'s script).
fn scripts(host: &Host, name: &str, args: &str, tail: &str) -> [Command; 2] {
    let by_path = match host.style {
        Style::Scripts => format!("sh \"$1\" {args} {tail}"),
        Style::Links => format!("\"$1\" {args} {tail}"),
    };
    let wrapper = host.wrapper(name);
    let wrapper = wrapper.to_str().unwrap();
    [
        host.shell_command(&["sh"], &format!("{name} {args} {tail}"), &[]),
        host.shell_command(&["sh"], &by_path, &[wrapper]),
    ]
}

#[test]
fn stderr_reaches_the_callers_stderr_in_order_with_its_stdout() {
    each_style(|style| {
        let (host, _) = host(style);
        let lines: String = (1..=20).map(|n| format!("[o{n}e{n}]\n")).collect();
        let out: String = (1..=20).map(|n| format!("[o{n}")).collect();
        let err: String = (1..=20).map(|n| format!("e{n}]\n")).collect();
        for command in scripts(&host, "chatter", "20", "2>&1") {
            let (code, stdout, stderr) = finish(spawn(command));
            assert_eq!(code, Some(0), "{stderr}");
            assert_eq!(stdout, lines, "one pipe: in the order written");
        }
        for command in scripts(&host, "chatter", "20", "") {
            let (code, stdout, stderr) = finish(spawn(command));
            assert_eq!(code, Some(0), "{stderr}");
            assert_eq!(
                (stdout.as_str(), stderr.as_str()),
                (out.as_str(), err.as_str())
            );
        }
    });
}

/// Sends `signal` to process `pid`.
fn kill(pid: u32, signal: i32) {
    // SAFETY: kill(2) on a process this test started.
    assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0, "kill {pid}");
}

/// Whether process `pid` is stopped (by SIGSTOP).
fn stopped(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rfind(')')
        .and_then(|end| stat[end + 1..].trim_start().chars().next())
        == Some('T')
}

#[test]
fn progress_never_holds_a_handler_whose_caller_is_stopped() {
    const TIMES: u64 = 200_000;
    each_style(|style| {
        // The writer waits on the stopped caller: a long I/O timeout keeps
        // the connection meanwhile, however loaded the machine.
        let builder = IpcServer::builder().io_timeout(10 * PATIENCE);
        let (host, probes) = probed_host(builder, style, Duration::from_millis(300));
        let [_, mut command] = scripts(&host, "spin", &TIMES.to_string(), "");
        command.env("GANGWAY_PROGRESS", "lines");
        let child = spawn(command);
        wait_until("the handler started", || {
            probes.spin.started.load(Ordering::SeqCst) == 1
        });
        // `sh WRAPPER` execs the client; the client is `child` either way.
        let client = common::process::client_pid(&child);
        kill(client, libc::SIGSTOP);
        let resume = common::process::ResumeOnDrop(client as i32);
        wait_until("the caller stopped", || stopped(client));
        probes.spin.gate.open();
        wait_until("the handler reported its progress", || {
            probes.spin.spun.load(Ordering::SeqCst) == 1
        });
        drop(resume);
        let (code, stdout, stderr) = finish(child);
        assert_eq!((code, stdout.as_str()), (Some(0), "spun\n"), "{stderr}");
        let shown: Vec<&str> = stderr.lines().collect();
        eprintln!("{} progress lines for {TIMES} reports", shown.len());
        assert_eq!(
            shown.last(),
            Some(&format!("progress: {TIMES}/{TIMES} spinning").as_str()),
            "the latest value is shown last"
        );
        assert!(
            shown.len() < (TIMES / 4) as usize,
            "only the latest waits to be sent: {} lines",
            shown.len()
        );
    });
}

#[test]
#[ignore = "needs script (bsdutils)"]
fn gangway_progress_off_hides_the_line_on_a_terminal() {
    require(&["script"]);
    each_style(|style| {
        let host = Host::start_styled(style);
        for (setting, drawn) in [(None, true), (Some("off"), false)] {
            // `script` runs the wrapper on a pseudo-terminal and copies all
            // it draws to its own stdout.
            let mut command = Command::new("script");
            command
                .args(["-qfec"])
                .arg(format!("{} 3", host.wrapper("work").display()))
                .arg("/dev/null")
                .env("TERM", "xterm")
                .env_remove("GANGWAY_PROGRESS");
            host.env().apply(&mut command);
            if let Some(setting) = setting {
                command.env("GANGWAY_PROGRESS", setting);
            }
            let (code, shown, stderr) = finish(spawn(command));
            assert_eq!(code, Some(0), "{setting:?}: {stderr}");
            assert_eq!(
                shown.contains("building"),
                drawn,
                "GANGWAY_PROGRESS={setting:?}: {shown:?}"
            );
            let mut screen = vt100::Parser::new(24, 100, 0);
            screen.process(shown.as_bytes());
            assert_eq!(screen.screen().contents().trim(), "done", "{setting:?}");
        }
    });
}
