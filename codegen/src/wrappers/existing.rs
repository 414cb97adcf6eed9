//! The wrappers gangway wrote earlier in a directory (scripts in the
//! exact shape it writes, and links to the client), and what becomes of
//! them: the names others' files hold refused, stale ones removed or shown
//! as a diff.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

use super::error::{WrapperError, WrapperReport, io_error};
use crate::CLIENT_FILE;
use crate::render::WRAPPER_MARKER;
use crate::schema::is_valid_command_name;

/// Whether `text` is, to the letter of its shape, a wrapper gangway
/// generated for a command called `name`: what stale removal requires, so a
/// file that merely mentions the marker is never deleted.
fn is_generated(text: &str, name: &str) -> bool {
    let Some(word) = crate::render::shell_word(name) else {
        return false;
    };
    let lines: Vec<&str> = text.lines().collect();
    lines.len() == 4
        && text.ends_with('\n')
        && lines[0] == "#!/bin/sh"
        && lines[1] == WRAPPER_MARKER
        && lines[3].starts_with(&format!("exec \"${{GANGWAY_BIN:-gangway}}\" call {word} "))
        && lines[3].ends_with(" -- \"$@\"")
}

/// A wrapper gangway wrote earlier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Existing {
    /// A script, with its text.
    Script(String),
    /// A link to the client program.
    Link,
}

/// The wrappers gangway generated earlier in `dir`, by name: scripts in the
/// exact shape it writes, and links to [`CLIENT_FILE`]. Anything else in
/// the directory is left alone.
pub(super) fn existing_wrappers(dir: &Path) -> Result<BTreeMap<String, Existing>, WrapperError> {
    let mut found = BTreeMap::new();
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(found),
        Err(error) => return Err(io_error(dir)(error)),
    };
    for entry in entries {
        let entry = entry.map_err(io_error(dir))?;
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let kind = entry.file_type().map_err(io_error(&path))?;
        if kind.is_symlink() {
            if is_our_link(&path, &name) {
                found.insert(name, Existing::Link);
            }
            continue;
        }
        // Only a small text file can be one of our scripts.
        if !kind.is_file() || entry.metadata().map_err(io_error(&path))?.len() > 64 * 1024 {
            continue;
        }
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        if is_generated(&text, &name) {
            found.insert(name, Existing::Script(text));
        }
    }
    Ok(found)
}

/// Refuses, before anything is written, when a wanted name is taken by a
/// file gangway did not write.
pub(super) fn refuse_foreign<'a>(
    dir: &Path,
    names: impl IntoIterator<Item = &'a String>,
    existing: &BTreeMap<String, Existing>,
) -> Result<(), WrapperError> {
    match names
        .into_iter()
        .map(|name| dir.join(name))
        .find(|path| fs::symlink_metadata(path).is_ok() && !existing.contains_key(file_name(path)))
    {
        Some(path) => Err(WrapperError::NotOurs { path }),
        None => Ok(()),
    }
}

/// Removes the wrappers of commands no longer wanted.
pub(super) fn remove_stale(
    dir: &Path,
    existing: &BTreeMap<String, Existing>,
    wanted: impl Fn(&str) -> bool,
    report: &mut WrapperReport,
) -> Result<(), WrapperError> {
    for name in existing.keys().filter(|name| !wanted(name)) {
        let path = dir.join(name);
        fs::remove_file(&path).map_err(io_error(&path))?;
        report.removed.push(name.clone());
    }
    Ok(())
}

fn file_name(path: &Path) -> &str {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
}

/// The wrappers of commands no longer wanted, as a diff.
pub(super) fn stale_diff(
    existing: &BTreeMap<String, Existing>,
    wanted: impl Fn(&str) -> bool,
    diff: &mut String,
) {
    for (name, current) in existing.iter().filter(|(name, _)| !wanted(name)) {
        match current {
            Existing::Script(text) => {
                diff.push_str(&unified(&format!("a/{name}"), "/dev/null", text, ""));
            }
            Existing::Link => diff.push_str(&format!("{name}: a link to remove\n")),
        }
    }
}

pub(super) fn unified(old_name: &str, new_name: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .header(old_name, new_name)
        .to_string()
}

/// Whether `path` (named `name`) is a link wrapper gangway wrote: a
/// symbolic link to exactly [`CLIENT_FILE`], named like a command.
fn is_our_link(path: &Path, name: &str) -> bool {
    is_valid_command_name(name)
        && name != CLIENT_FILE
        && fs::read_link(path).is_ok_and(|target| target == Path::new(CLIENT_FILE))
}
