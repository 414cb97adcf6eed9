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
    /// As a line on the terminal, redrawn in place.
    Line(LineState),
}

/// One progress report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Update {
    done: u64,
    total: Option<u64>,
    message: Option<String>,
}

/// The terminal line's state.
pub(super) struct LineState {
    /// The latest report, and when the first came (for the rate).
    latest: Option<(Update, Instant)>,
    /// When the line was last drawn; `None` while nothing is drawn.
    drawn: Option<Instant>,
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
            ProgressView::Line(LineState {
                latest: None,
                drawn: None,
            })
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
                    line.push_str(message);
                }
                line.push('\n');
                let _ = io::stderr().lock().write_all(line.as_bytes());
                *last = Some(update);
            }
            ProgressView::Line(state) => {
                let started = state.latest.as_ref().map_or_else(Instant::now, |l| l.1);
                state.latest = Some((update, started));
                // Redrawn at most every `REDRAW`; the latest value shows at
                // the next redraw.
                if state.drawn.is_none_or(|at| at.elapsed() >= REDRAW) {
                    state.draw();
                }
            }
        }
    }

    /// Runs `write` with the line out of the way (cleared, then drawn
    /// again), so output and the line do not garble each other.
    pub(super) fn suspend<R>(&mut self, write: impl FnOnce() -> R) -> R {
        let ProgressView::Line(state) = self else {
            return write();
        };
        if state.drawn.is_none() {
            return write();
        }
        let _ = io::stderr().lock().write_all(CLEAR_LINE.as_bytes());
        let result = write();
        state.draw();
        result
    }

    /// Clears the line: the call is over.
    pub(super) fn finish(&mut self) {
        if let ProgressView::Line(state) = self
            && state.drawn.take().is_some()
        {
            let _ = io::stderr().lock().write_all(CLEAR_LINE.as_bytes());
        }
    }
}

impl LineState {
    fn draw(&mut self) {
        let Some((update, started)) = &self.latest else {
            return;
        };
        let mut line = String::from(CLEAR_LINE);
        if let Some(message) = &update.message {
            line.push_str(message);
            line.push(' ');
        }
        line.push_str(&count(update));
        let elapsed = started.elapsed().as_secs_f64();
        if elapsed >= 0.5 {
            line.push_str(&format!(" ({:.1}/s)", update.done as f64 / elapsed));
        }
        let _ = io::stderr().lock().write_all(line.as_bytes());
        self.drawn = Some(Instant::now());
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
    fn counts_read_with_and_without_a_total() {
        let update = |done, total| Update {
            done,
            total,
            message: None,
        };
        assert_eq!(count(&update(40, Some(100))), "40/100");
        assert_eq!(count(&update(7, None)), "7");
    }
}
