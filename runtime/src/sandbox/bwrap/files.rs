//! Where the seccomp filter waits for bubblewrap: bwrap reads a filter
//! from a file descriptor, and an argv prefix cannot carry one, so the
//! prefix opens the filter's file itself (`sh -c 'exec "$@" 8<...'`) just
//! before it becomes bwrap. The files live in a directory only this
//! user may enter (`$XDG_RUNTIME_DIR/gangway`, else
//! `$TMPDIR/gangway-<uid>`), named after their content: a file another
//! user could have written would be a filter an attacker chose.

use std::hash::{Hash, Hasher};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Where the filter's program waits for bwrap.
pub(super) struct FilterFile {
    /// The private directory holding it.
    pub(super) dir: PathBuf,
    /// The file.
    pub(super) path: PathBuf,
}

/// The file holding `program`, written if missing or different.
pub(super) fn filter_file(program: &[u8]) -> io::Result<FilterFile> {
    let dir = private_dir()?;
    Ok(FilterFile {
        path: ensure(&dir, "seccomp", program)?,
        dir,
    })
}

/// This user's private directory for gangway's files, created if missing
/// and checked if not: a directory (not a link), owned by this user, that
/// no one else may enter.
fn private_dir() -> io::Result<PathBuf> {
    // SAFETY: `geteuid` reads the caller's effective uid; it cannot fail.
    let uid = unsafe { libc::geteuid() };
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(runtime) if owned_private_dir(&runtime, uid) => runtime.join("gangway"),
        _ => std::env::temp_dir().join(format!("gangway-{uid}")),
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => return Ok(dir),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => {
            return Err(io::Error::new(
                error.kind(),
                format!("cannot create {}: {error}", dir.display()),
            ));
        }
    }
    if owned_private_dir(&dir, uid) {
        Ok(dir)
    } else {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is not a private directory of uid {uid} (a directory it owns, mode 0700, \
                 not a link): another user may have made it to plant files; remove it",
                dir.display()
            ),
        ))
    }
}

/// Whether `dir` is a directory, not a symbolic link, owned by `uid`, that
/// no one else may read, write or enter.
fn owned_private_dir(dir: &Path, uid: u32) -> bool {
    std::fs::symlink_metadata(dir).is_ok_and(|meta| {
        meta.is_dir() && meta.uid() == uid && meta.permissions().mode() & 0o077 == 0
    })
}

/// `<dir>/<stem>-<hash of content>.bpf`, holding `content`: kept when it
/// already does, else written whole (a temporary file renamed into place,
/// so a reader never sees half of it).
fn ensure(dir: &Path, stem: &str, content: &[u8]) -> io::Result<PathBuf> {
    let mut hasher = std::hash::DefaultHasher::new();
    content.hash(&mut hasher);
    let path = dir.join(format!("{stem}-{:016x}.bpf", hasher.finish()));
    if std::fs::read(&path).is_ok_and(|held| held == content) {
        return Ok(path);
    }
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(content)?;
    file.persist(&path).map_err(|error| error.error)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_file_is_written_once_and_rewritten_when_changed() {
        let dir = tempfile::tempdir().unwrap();
        let first = ensure(dir.path(), "f", b"12345678").unwrap();
        assert_eq!(std::fs::read(&first).unwrap(), b"12345678");
        let modified = std::fs::metadata(&first).unwrap().modified().unwrap();
        assert_eq!(ensure(dir.path(), "f", b"12345678").unwrap(), first);
        assert_eq!(
            std::fs::metadata(&first).unwrap().modified().unwrap(),
            modified
        );
        // Damaged: written again.
        std::fs::write(&first, b"1234").unwrap();
        assert_eq!(ensure(dir.path(), "f", b"12345678").unwrap(), first);
        assert_eq!(std::fs::read(&first).unwrap(), b"12345678");
        // Another content, another file.
        assert_ne!(ensure(dir.path(), "f", b"87654321").unwrap(), first);
    }

    #[test]
    fn only_a_private_directory_of_this_user_is_trusted() {
        // SAFETY: as above.
        let uid = unsafe { libc::geteuid() };
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("private");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&private)
            .unwrap();
        assert!(owned_private_dir(&private, uid));
        assert!(!owned_private_dir(&private, uid + 1));
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!owned_private_dir(&private, uid));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&private, &link).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(!owned_private_dir(&link, uid));
        assert!(!owned_private_dir(&dir.path().join("missing"), uid));
    }
}
