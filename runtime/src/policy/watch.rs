//! Watching a rules file: a thread that looks at the file's metadata a few
//! times a second and reads the file again when it changed (written in
//! place, or replaced by a rename, as editors do). It ends when the last
//! clone of its policy is dropped.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::state::State;

/// How often the file is looked at.
const POLL: Duration = Duration::from_millis(200);

/// What tells one version of a file from another without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    device: u64,
    inode: u64,
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        device: meta.dev(),
        inode: meta.ino(),
        len: meta.len(),
        modified: (meta.mtime(), meta.mtime_nsec()),
        changed: (meta.ctime(), meta.ctime_nsec()),
    })
}

/// Starts watching `path` for `state`'s policy.
pub(crate) fn start(state: &Arc<State>, path: PathBuf) -> std::io::Result<()> {
    let weak = Arc::downgrade(state);
    let first = stamp(&path);
    std::thread::Builder::new()
        .name("gangway-policy-watch".to_owned())
        .spawn(move || watch(&weak, &path, first))?;
    Ok(())
}

fn watch(state: &Weak<State>, path: &Path, mut last: Option<Stamp>) {
    loop {
        std::thread::sleep(POLL);
        let Some(state) = state.upgrade() else {
            return;
        };
        let now = stamp(path);
        if now != last {
            last = now;
            // A failure is kept in the state and logged; the rules before
            // it stay in force.
            let _ = state.reload();
        }
    }
}
