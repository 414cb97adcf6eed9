//! Writing the wrapper scripts of a manifest into a directory: atomically
//! (temporary file, then rename), idempotently (an up-to-date file is left
//! alone), mode 0755, and with wrappers of removed commands removed.
//!
//! ```no_run
//! use gangway_codegen::schema::{Manifest, ToolSchema};
//!
//! let manifest = Manifest::new(vec![ToolSchema::new("ping")]);
//! let report = gangway_codegen::write_wrappers(&manifest, std::path::Path::new("/tmp/wrappers"))?;
//! assert_eq!(report.written, ["ping"]);
//! # Ok::<(), gangway_codegen::wrappers::WrapperError>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::render::{RenderFailure, Renderer, WRAPPER_MARKER};
use crate::schema::{Manifest, is_valid_command_name};

/// What [`write_wrappers`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WrapperReport {
    /// Commands whose wrapper was written (new or changed).
    pub written: Vec<String>,
    /// Commands whose wrapper was already up to date.
    pub unchanged: Vec<String>,
    /// Wrappers removed because their command is gone.
    pub removed: Vec<String>,
}

/// Why wrappers could not be written or checked.
#[derive(Debug)]
#[non_exhaustive]
pub enum WrapperError {
    /// A command name that cannot be a file name.
    InvalidName(String),
    /// A template failure.
    Render(RenderFailure),
    /// A file-system failure, with the path.
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A file of a command's name that gangway did not write.
    NotOurs {
        /// The file.
        path: PathBuf,
    },
    /// A stdin argument name that cannot be one shell word.
    InvalidArgName {
        /// The command.
        command: String,
        /// The name.
        name: String,
    },
    /// `--check`: the directory differs from the manifest.
    OutOfDate {
        /// A unified diff from what is there to what should be.
        diff: String,
    },
}

impl fmt::Display for WrapperError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WrapperError::InvalidName(name) => write!(
                f,
                "command name `{name}` cannot be a wrapper's file name: it must match `[A-Za-z][A-Za-z0-9_-]*`"
            ),
            WrapperError::Render(error) => error.fmt(f),
            WrapperError::NotOurs { path } => write!(
                f,
                "refusing to replace {}: it is not a gangway wrapper; move it away or choose another directory",
                path.display()
            ),
            WrapperError::InvalidArgName { command, name } => write!(
                f,
                "command `{command}` reads stdin into `{name}`, which is not a plain argument name \
                 (letters, digits, `_` and `-`)"
            ),
            WrapperError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            WrapperError::OutOfDate { diff } => write!(f, "the wrappers are out of date:\n{diff}"),
        }
    }
}

impl std::error::Error for WrapperError {}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> WrapperError + '_ {
    move |source| WrapperError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Each command's wrapper file name and contents.
///
/// # Errors
///
/// [`WrapperError::InvalidName`] or [`WrapperError::Render`].
pub fn render_wrappers(manifest: &Manifest) -> Result<BTreeMap<String, String>, WrapperError> {
    let renderer = Renderer::new();
    let mut files = BTreeMap::new();
    for schema in &manifest.commands {
        if !is_valid_command_name(&schema.name) {
            return Err(WrapperError::InvalidName(schema.name.to_string()));
        }
        if let Some(stdin) = schema.stdin_param()
            && (stdin.name.is_empty()
                || !stdin
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                || stdin.name.starts_with('-'))
        {
            return Err(WrapperError::InvalidArgName {
                command: schema.name.to_string(),
                name: stdin.name.to_string(),
            });
        }
        let script = renderer.wrapper(schema).map_err(WrapperError::Render)?;
        files.insert(schema.name.to_string(), script);
    }
    Ok(files)
}

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

/// The wrappers gangway generated earlier in `dir`, by name: files in the
/// exact shape it writes. Anything else in the directory is left alone.
fn existing_wrappers(dir: &Path) -> Result<BTreeMap<String, String>, WrapperError> {
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
        if !entry.file_type().map_err(io_error(&path))?.is_file() || name.starts_with('.') {
            continue;
        }
        // Only a small text file can be one of ours.
        if entry.metadata().map_err(io_error(&path))?.len() > 64 * 1024 {
            continue;
        }
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        if is_generated(&text, &name) {
            found.insert(name, text);
        }
    }
    Ok(found)
}

/// Writes a wrapper script for every command of `manifest` into `dir`
/// (created if missing), removes the wrappers of commands no longer there,
/// and leaves up-to-date files alone.
///
/// # Errors
///
/// [`WrapperError`] for an invalid name, a template failure or a
/// file-system error.
pub fn write_wrappers(manifest: &Manifest, dir: &Path) -> Result<WrapperReport, WrapperError> {
    let wanted = render_wrappers(manifest)?;
    fs::create_dir_all(dir).map_err(io_error(dir))?;
    let existing = existing_wrappers(dir)?;
    // Never replace a file gangway did not write; look before writing
    // anything, so a refusal leaves the directory as it was.
    if let Some(path) = wanted
        .keys()
        .map(|name| dir.join(name))
        .find(|path| fs::symlink_metadata(path).is_ok() && !existing.contains_key(file_name(path)))
    {
        return Err(WrapperError::NotOurs { path });
    }
    let mut report = WrapperReport::default();
    for (name, script) in &wanted {
        let path = dir.join(name);
        let up_to_date = match fs::read(&path) {
            Ok(current) => {
                current == script.as_bytes()
                    && fs::metadata(&path)
                        .map_err(io_error(&path))?
                        .permissions()
                        .mode()
                        & 0o777
                        == 0o755
            }
            Err(_) => false,
        };
        if up_to_date {
            report.unchanged.push(name.clone());
            continue;
        }
        // Write beside the target and rename over it, so a shell never runs
        // a half-written script.
        let mut temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .tempfile_in(dir)
            .map_err(io_error(dir))?;
        temp.write_all(script.as_bytes())
            .map_err(io_error(temp.path()))?;
        temp.as_file().sync_all().map_err(io_error(temp.path()))?;
        fs::set_permissions(temp.path(), fs::Permissions::from_mode(0o755))
            .map_err(io_error(temp.path()))?;
        temp.persist(&path)
            .map_err(|error| io_error(&path)(error.error))?;
        report.written.push(name.clone());
    }
    for name in existing.keys().filter(|name| !wanted.contains_key(*name)) {
        let path = dir.join(name);
        fs::remove_file(&path).map_err(io_error(&path))?;
        report.removed.push(name.clone());
    }
    Ok(report)
}

fn file_name(path: &Path) -> &str {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
}

/// Checks that `dir` holds exactly the wrappers of `manifest`, writing
/// nothing.
///
/// # Errors
///
/// [`WrapperError::OutOfDate`] with a unified diff when it does not;
/// otherwise as [`write_wrappers`].
pub fn check_wrappers(manifest: &Manifest, dir: &Path) -> Result<(), WrapperError> {
    let wanted = render_wrappers(manifest)?;
    let existing = existing_wrappers(dir)?;
    let mut diff = String::new();
    for (name, script) in &wanted {
        let path = dir.join(name);
        let current = fs::read_to_string(&path).unwrap_or_default();
        let mode_ok = fs::metadata(&path).is_ok_and(|m| m.permissions().mode() & 0o777 == 0o755);
        if current != *script {
            diff.push_str(&unified(
                &format!("a/{name}"),
                &format!("b/{name}"),
                &current,
                script,
            ));
        } else if !mode_ok {
            diff.push_str(&format!("mode of {name}: want 0755\n"));
        }
    }
    for (name, current) in existing
        .iter()
        .filter(|(name, _)| !wanted.contains_key(*name))
    {
        diff.push_str(&unified(&format!("a/{name}"), "/dev/null", current, ""));
    }
    if diff.is_empty() {
        Ok(())
    } else {
        Err(WrapperError::OutOfDate { diff })
    }
}

fn unified(old_name: &str, new_name: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .header(old_name, new_name)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ParamSchema, ToolSchema, ValueKind};

    fn manifest(names: &[&str]) -> Manifest {
        Manifest::new(
            names
                .iter()
                .map(|n| {
                    ToolSchema::new(n.to_string())
                        .with_param(ParamSchema::new("in", ValueKind::Bytes).stdin())
                })
                .collect(),
        )
    }

    #[test]
    fn writes_checks_keeps_and_removes() {
        let dir = tempfile::tempdir().unwrap();
        let report = write_wrappers(&manifest(&["a", "b"]), dir.path()).unwrap();
        assert_eq!(report.written, ["a", "b"]);
        let mode = fs::metadata(dir.path().join("a"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o755);
        check_wrappers(&manifest(&["a", "b"]), dir.path()).unwrap();

        let again = write_wrappers(&manifest(&["a", "b"]), dir.path()).unwrap();
        assert_eq!(again.unchanged, ["a", "b"], "idempotent");
        assert!(again.written.is_empty());

        fs::write(dir.path().join("mine.sh"), "#!/bin/sh\necho not ours\n").unwrap();
        let lookalike = format!("#!/bin/sh\n{WRAPPER_MARKER}\n# my backup, keep\necho mine\n");
        fs::write(dir.path().join("backup-of-b"), &lookalike).unwrap();
        let err = check_wrappers(&manifest(&["a"]), dir.path()).unwrap_err();
        let WrapperError::OutOfDate { diff } = err else {
            panic!()
        };
        assert!(diff.contains("--- a/b\n+++ /dev/null"), "{diff}");

        let report = write_wrappers(&manifest(&["a"]), dir.path()).unwrap();
        assert_eq!(report.removed, ["b"]);
        assert!(!dir.path().join("b").exists());
        assert!(
            dir.path().join("mine.sh").exists(),
            "files that are not ours stay"
        );
        assert!(
            dir.path().join("backup-of-b").exists(),
            "a file that only mentions the marker stays"
        );

        fs::write(dir.path().join("a"), "changed").unwrap();
        let WrapperError::OutOfDate { diff } =
            check_wrappers(&manifest(&["a"]), dir.path()).unwrap_err()
        else {
            panic!()
        };
        assert!(diff.contains("-changed"), "{diff}");
        let err = write_wrappers(&manifest(&["a"]), dir.path()).unwrap_err();
        assert!(
            matches!(err, WrapperError::NotOurs { .. }),
            "a hand-edited file is not replaced: {err}"
        );
        assert_eq!(fs::read_to_string(dir.path().join("a")).unwrap(), "changed");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 3, "no temporary files left: {names:?}");
    }
}

#[cfg(test)]
mod names {
    use super::*;
    use crate::schema::{ParamSchema, ToolSchema, ValueKind};

    #[test]
    fn a_stdin_name_that_is_not_a_word_is_refused() {
        for bad in ["$HOME", "a b", "x\"$(id)\"", "", "-x"] {
            let manifest = Manifest::new(vec![
                ToolSchema::new("cmd").with_param(ParamSchema::new(bad, ValueKind::Bytes).stdin()),
            ]);
            assert!(
                matches!(
                    render_wrappers(&manifest),
                    Err(WrapperError::InvalidArgName { .. })
                ),
                "{bad:?}"
            );
        }
    }
}
