//! Writing the wrappers of a manifest into a directory: atomically
//! (temporary file, then rename), idempotently (an up-to-date file is left
//! alone), mode 0755, and with wrappers of removed commands removed.
//!
//! Two styles ([`WrapperStyle`]): a shell script per command (the default,
//! rendered from the templates; it runs `$GANGWAY_BIN call <command>`), or
//! the client program itself in the directory with a symbolic link per
//! command ([`links`]), which makes a call one process start instead of
//! two. Either style replaces the other's wrappers, and neither replaces a
//! file gangway did not write.
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

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::render::Renderer;
use crate::schema::{Manifest, is_valid_command_name};

mod error;
mod existing;
pub mod links;
mod settle;

use error::io_error;
pub use error::{WrapperError, WrapperReport};
use existing::{Existing, existing_wrappers, refuse_foreign, remove_stale, stale_diff, unified};
pub use links::CLIENT_FILE;

/// How the wrappers of a directory call the host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum WrapperStyle {
    /// A shell script per command that runs `${GANGWAY_BIN:-gangway} call
    /// <command> -- "$@"`: two process starts per call; the only style for
    /// a host that cannot put a program into the sandbox.
    #[default]
    Scripts,
    /// The client program at `client`, copied into the directory as
    /// [`CLIENT_FILE`], and a symbolic link per command to it:
    /// the client takes the command from the name it was run as, and the
    /// host says whether the call takes standard input. One process start
    /// per call.
    Links {
        /// The client program to place: the lean `gangway-client`, the
        /// `gangway` CLI, or a host binary that is its own client.
        client: PathBuf,
    },
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

/// Writes the wrappers of `manifest` into `dir` in `style`: see
/// [`write_wrappers`] and [`links`].
///
/// # Errors
///
/// As [`write_wrappers`]; for links also [`WrapperError::ReservedName`] and
/// [`WrapperError::MissingClient`].
pub fn write_wrappers_with(
    manifest: &Manifest,
    dir: &Path,
    style: &WrapperStyle,
) -> Result<WrapperReport, WrapperError> {
    match style {
        WrapperStyle::Scripts => write_wrappers(manifest, dir),
        WrapperStyle::Links { client } => links::write_links(manifest, dir, client),
    }
}

/// Checks that `dir` holds exactly the wrappers of `manifest` in `style`,
/// writing nothing.
///
/// # Errors
///
/// As [`check_wrappers`]; for links also [`WrapperError::MissingClient`].
pub fn check_wrappers_with(
    manifest: &Manifest,
    dir: &Path,
    style: &WrapperStyle,
) -> Result<(), WrapperError> {
    match style {
        WrapperStyle::Scripts => check_wrappers(manifest, dir),
        WrapperStyle::Links { client } => links::check_links(manifest, dir, client),
    }
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
    refuse_foreign(dir, wanted.keys(), &existing)?;
    let mut report = WrapperReport::default();
    for (name, script) in &wanted {
        let path = dir.join(name);
        let up_to_date = match fs::read(&path) {
            // A link (to the client) reads as the client: not up to date.
            Ok(current) if existing.get(name) != Some(&Existing::Link) => {
                current == script.as_bytes()
                    && fs::metadata(&path)
                        .map_err(io_error(&path))?
                        .permissions()
                        .mode()
                        & 0o777
                        == 0o755
            }
            _ => false,
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
        // Closed before the rename, and renamed only once no child started
        // meanwhile still holds it open for writing: else its first run
        // could fail with "Text file busy".
        let temp = temp.into_temp_path();
        settle::until_no_writers(&temp);
        temp.persist(&path)
            .map_err(|error| io_error(&path)(error.error))?;
        report.written.push(name.clone());
    }
    remove_stale(
        dir,
        &existing,
        |name| wanted.contains_key(name),
        &mut report,
    )?;
    report.client_removed = links::remove_placed_client(dir)?;
    Ok(report)
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
        if existing.get(name) == Some(&Existing::Link) {
            diff.push_str(&format!("{name}: a link to {CLIENT_FILE}, want a script\n"));
            continue;
        }
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
    stale_diff(&existing, |name| wanted.contains_key(name), &mut diff);
    if links::placed_by_us(dir) {
        diff.push_str(&format!(
            "{CLIENT_FILE}: the client program link wrappers placed, to remove\n"
        ));
    }
    if diff.is_empty() {
        Ok(())
    } else {
        Err(WrapperError::OutOfDate { diff })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::WRAPPER_MARKER;
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
