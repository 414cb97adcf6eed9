//! How the client shows a call's progress: one self-updating line on
//! standard error when it is a terminal (`indicatif`), cleared when the
//! call ends; nothing on a pipe, unless `GANGWAY_PROGRESS=lines` asks for
//! `progress: 40/100 building` lines (for agents reading stderr).

use std::io::{self, IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The variable that chooses how progress shows: `lines`, or `off`.
pub const ENV_PROGRESS: &str = "GANGWAY_PROGRESS";

/// Where a call's progress goes.
pub(super) enum ProgressView {
    /// Nowhere.
    Hidden,
    /// As lines on standard error, each new value once.
    Lines(Option<(u64, Option<u64>, Option<String>)>),
    /// As a bar on the terminal, made at the first update.
    Bar(Option<ProgressBar>),
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
            ProgressView::Bar(None)
        } else {
            ProgressView::Hidden
        }
    }

    /// Shows the latest progress.
    pub(super) fn update(&mut self, done: u64, total: Option<u64>, message: Option<String>) {
        match self {
            ProgressView::Hidden => {}
            ProgressView::Lines(last) => {
                let next = (done, total, message);
                if last.as_ref() == Some(&next) {
                    return;
                }
                let (done, total, message) = &next;
                let mut line = format!("progress: {done}");
                if let Some(total) = total {
                    line.push_str(&format!("/{total}"));
                }
                if let Some(message) = message {
                    line.push(' ');
                    line.push_str(message);
                }
                line.push('\n');
                let _ = io::stderr().lock().write_all(line.as_bytes());
                *last = Some(next);
            }
            ProgressView::Bar(bar) => {
                let bar = bar.get_or_insert_with(new_bar);
                if total.is_some() != bar.length().is_some() {
                    bar.set_style(style(total.is_some()));
                }
                match total {
                    Some(total) => bar.set_length(total),
                    None => bar.unset_length(),
                }
                bar.set_position(done);
                bar.set_message(message.unwrap_or_default());
            }
        }
    }

    /// Runs `write` with the bar out of the way, so output and the bar do
    /// not garble each other on the terminal.
    pub(super) fn suspend<R>(&self, write: impl FnOnce() -> R) -> R {
        match self {
            ProgressView::Bar(Some(bar)) => bar.suspend(write),
            _ => write(),
        }
    }

    /// Clears the bar: the call is over.
    pub(super) fn finish(&mut self) {
        if let ProgressView::Bar(Some(bar)) = self {
            bar.finish_and_clear();
        }
    }
}

fn new_bar() -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(style(false));
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// With a total: message, bar, count and rate; without: a spinner, the
/// count and rate.
fn style(with_total: bool) -> ProgressStyle {
    let template = if with_total {
        "{msg} [{bar:30}] {pos}/{len} ({per_sec}, {eta} left)"
    } else {
        "{spinner} {msg} {pos} ({per_sec})"
    };
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}
