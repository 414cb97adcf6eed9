//! How the client shows a call's progress: one self-updating line on
//! standard error when it is a terminal (message, done/total, rate),
//! cleared when the call ends; nothing on a pipe, unless
//! `GANGWAY_PROGRESS=lines` asks for `progress: 40/100 building` lines (for
//! agents reading stderr).
//!
//! Drawn here rather than with `indicatif`: its rate estimator needs
//! `libm`, whose loading alone costs every call of the lean client about a
//! tenth of a millisecond (measured with the wrapper benchmark), for a
//! line that most calls never draw.

use std::io::{self, IsTerminal, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The variable that chooses how progress shows: `lines`, or `off`.
pub const ENV_PROGRESS: &str = "GANGWAY_PROGRESS";

/// How often the line is redrawn at most.
const REDRAW: Duration = Duration::from_millis(100);

/// Clears the terminal's current line and returns to its start.
const CLEAR_LINE: &str = "\r\x1b[2K";

/// Where a call's progress goes.
pub(super) enum ProgressView {
    /// Nowhere.
    Hidden,
    /// As lines on standard error, each new value once.
    Lines(Option<Update>),
    /// As a line on the terminal, redrawn in place (by a ticker thread,
    /// started at the first report, for values that came between draws).
    Line(Arc<Mutex<LineState>>),
}

/// One progress report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Update {
    done: u64,
    total: Option<u64>,
    message: Option<String>,
}

/// The terminal line's state.
#[derive(Default)]
pub(super) struct LineState {
    /// The latest report, and when the first came (for the rate).
    latest: Option<(Update, Instant)>,
    /// When the line was last drawn; `None` while nothing is drawn.
    drawn: Option<Instant>,
    /// A report came that is not drawn yet.
    dirty: bool,
    /// Output left the cursor mid-line: drawing now would erase it.
    mid_line: bool,
    /// The call is over: nothing more is drawn.
    finished: bool,
    /// Whether the ticker runs.
    ticking: bool,
}

impl ProgressView {
    /// As `GANGWAY_PROGRESS` and standard error say. A value it does not
    /// know is named on stderr, and the default applies.
    pub(super) fn from_env() -> Self {
        match std::env::var(ENV_PROGRESS).as_deref() {
            Ok("lines") => return ProgressView::Lines(None),
            Ok("off") => return ProgressView::Hidden,
            Ok("") | Err(_) => {}
            Ok(other) => eprintln!(
                "gangway: {ENV_PROGRESS}=`{other}` is neither `lines` nor `off`; \
                 showing progress only on a terminal"
            ),
        }
        if io::stderr().is_terminal() {
            ProgressView::Line(Arc::default())
        } else {
            ProgressView::Hidden
        }
    }

    /// Shows the latest progress.
    pub(super) fn update(&mut self, done: u64, total: Option<u64>, message: Option<String>) {
        let update = Update {
            done,
            total,
            message,
        };
        match self {
            ProgressView::Hidden => {}
            ProgressView::Lines(last) => {
                if last.as_ref() == Some(&update) {
                    return;
                }
                let mut line = format!("progress: {}", count(&update));
                if let Some(message) = &update.message {
                    line.push(' ');
                    line.push_str(&printable(message));
                }
                line.push('\n');
                let _ = io::stderr().lock().write_all(line.as_bytes());
                *last = Some(update);
            }
            ProgressView::Line(shared) => {
                let mut state = lock(shared);
                let started = state.latest.as_ref().map_or_else(Instant::now, |l| l.1);
                state.latest = Some((update, started));
                state.dirty = true;
                if state.drawn.is_none_or(|at| at.elapsed() >= REDRAW) {
                    state.draw();
                }
                if !state.ticking {
                    state.ticking = true;
                    start_ticker(shared.clone());
                }
            }
        }
    }

    /// Runs `write` (output that `ends_line` or not) with the line out of
    /// the way: cleared first, and drawn again after output that ended its
    /// line (never over a partial line).
    pub(super) fn suspend<R>(&mut self, ends_line: bool, write: impl FnOnce() -> R) -> R {
        let ProgressView::Line(shared) = self else {
            return write();
        };
        let mut state = lock(shared);
        if state.drawn.take().is_some() {
            let _ = io::stderr().lock().write_all(CLEAR_LINE.as_bytes());
            state.dirty = true;
        }
        let result = write();
        state.mid_line = !ends_line;
        if state.dirty {
            state.draw();
        }
        result
    }

    /// Clears the line: the call is over.
    pub(super) fn finish(&mut self) {
        if let ProgressView::Line(shared) = self {
            let mut state = lock(shared);
            state.finished = true;
            if state.drawn.take().is_some() {
                let _ = io::stderr().lock().write_all(CLEAR_LINE.as_bytes());
            }
        }
    }
}

fn lock(shared: &Mutex<LineState>) -> std::sync::MutexGuard<'_, LineState> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Redraws a report that came between draws, until the call is over.
fn start_ticker(shared: Arc<Mutex<LineState>>) {
    let _ = std::thread::Builder::new()
        .name("gangway-progress".to_owned())
        .spawn(move || {
            loop {
                std::thread::sleep(REDRAW);
                let mut state = lock(&shared);
                if state.finished {
                    return;
                }
                if state.dirty {
                    state.draw();
                }
            }
        });
}

impl LineState {
    /// Draws the latest report, unless that would erase partial output or
    /// the call is over.
    fn draw(&mut self) {
        if self.mid_line || self.finished {
            return;
        }
        let Some((update, started)) = &self.latest else {
            return;
        };
        let mut text = String::new();
        if let Some(message) = &update.message {
            text.push_str(&printable(message));
            text.push(' ');
        }
        text.push_str(&count(update));
        let elapsed = started.elapsed().as_secs_f64();
        if elapsed >= 0.5 {
            text.push_str(&format!(" ({:.1}/s)", update.done as f64 / elapsed));
        }
        // One row: a line that wrapped could not be cleared in place.
        let text: String = text
            .chars()
            .take(terminal_width().saturating_sub(1))
            .collect();
        let _ = io::stderr()
            .lock()
            .write_all(format!("{CLEAR_LINE}{text}").as_bytes());
        self.drawn = Some(Instant::now());
        self.dirty = false;
    }
}

/// A message as one line: control characters (newlines, escapes) become
/// spaces.
fn printable(message: &str) -> String {
    message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The terminal's width in columns: `COLUMNS`, else the terminal's own
/// (from standard error), else 80.
fn terminal_width() -> usize {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse::<usize>().ok())
        .filter(|&c| c > 0)
    {
        return columns;
    }
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes a `winsize` into the one given, which
    // lives for the call; a failure leaves it zeroed.
    let ok = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    if ok && size.ws_col > 0 {
        usize::from(size.ws_col)
    } else {
        80
    }
}

/// `40/100`, or `40` without a total.
fn count(update: &Update) -> String {
    match update.total {
        Some(total) => format!("{}/{total}", update.done),
        None => update.done.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_with_and_without_a_total_and_messages_stay_on_one_line() {
        let update = |done, total| Update {
            done,
            total,
            message: None,
        };
        assert_eq!(count(&update(40, Some(100))), "40/100");
        assert_eq!(count(&update(7, None)), "7");
        assert_eq!(printable("two\nlines\x1b[2J"), "two lines [2J");
    }
}
