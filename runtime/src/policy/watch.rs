//! Watching a rules file: a thread that looks at the file's metadata a few
//! times a second and reads the file again once a change (written in
//! place, or a new file renamed over it, as editors do) has held still for
//! a poll. It ends when the last clone of its policy is dropped.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::rules::stamp;
use super::state::State;

/// How often the file is looked at.
const POLL: Duration = Duration::from_millis(200);

/// What the file looked like when last read.
type Stamp = Option<[i64; 7]>;

/// Starts watching `path` for `state`'s policy, whose rules were read from
/// the file as `read` tells (taken before the reading, so that a change
/// made during it is seen).
pub(crate) fn start(state: &Arc<State>, path: PathBuf, read: Stamp) -> std::io::Result<()> {
    let weak = Arc::downgrade(state);
    std::thread::Builder::new()
        .name("gangway-policy-watch".to_owned())
        .spawn(move || watch(&weak, &path, read))?;
    Ok(())
}

fn watch(state: &Weak<State>, path: &Path, mut read: Stamp) {
    let mut seen = read;
    loop {
        std::thread::sleep(POLL);
        let Some(state) = state.upgrade() else {
            return;
        };
        let now = stamp(path);
        // Read a change once it has held still for a whole poll, so that
        // a file being written in place is not read half way.
        if now != read && now == seen {
            read = now;
            // A failure is kept in the state and logged; the rules before
            // it stay in force.
            let _ = state.reload();
        }
        seen = now;
    }
}
