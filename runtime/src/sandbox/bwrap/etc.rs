//! What of `/etc` a sandbox may not read: what another user of the host
//! could not read either (a file without read permission for others, a
//! directory others may not enter), where the host's own user can. A
//! sandbox runs as the host's user (mapped, in a user namespace, without
//! capabilities): a host running as root gives it uid 0, which still owns,
//! and so may read, every root-owned file bound in: the password hashes in
//! `/etc/shadow`, TLS and SSH private keys, the credentials of services.
//! Each is covered (a file by `/dev/null`, which the sandbox may not open;
//! a directory by an empty read-only tmpfs), at `/etc` and wherever a bind
//! of the user's shows it again, so the sandbox reads of `/etc` what any
//! user may. A host running as an ordinary user finds little or nothing to
//! cover (files of its own groups, say).
//!
//! The walk is made at most every few seconds per user, bounded in depth
//! and entries (what lies past a bound is covered whole); a path it found
//! is looked at again before each use, so a file gone since is not covered
//! (bwrap could not mount over it). An argv prefix holds the covers of its
//! moment.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a walk's answer is used before `/etc` is walked again.
const FRESH_FOR: Duration = Duration::from_secs(10);
/// The deepest directory looked into, below `/etc`.
const MAX_DEPTH: usize = 12;
/// The most entries looked at in one walk.
const MAX_ENTRIES: usize = 50_000;

/// A path to cover, and whether it is a directory.
pub(super) type Private = (PathBuf, bool);

/// What of `/etc` this process's user may read and others may not, as it
/// is now.
pub(super) fn private_paths() -> Vec<Private> {
    type Walked = (u32, Instant, Vec<Private>);
    static LAST: Mutex<Option<Walked>> = Mutex::new(None);
    // SAFETY: `geteuid` reads the caller's effective uid; it cannot fail.
    let uid = unsafe { libc::geteuid() };
    let mut last = LAST
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let fresh = last
        .as_ref()
        .filter(|(walked_for, at, _)| *walked_for == uid && at.elapsed() < FRESH_FOR);
    let found = match fresh {
        Some((_, _, found)) => found.clone(),
        None => {
            let found = private_to_us(Path::new("/etc"), &|path| readable_by_us(path));
            *last = Some((uid, Instant::now(), found.clone()));
            found
        }
    };
    // Gone since, or no longer what it was: bwrap cannot mount over it.
    found
        .into_iter()
        .filter(|(path, is_dir)| {
            std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir() == *is_dir)
        })
        .collect()
}

/// Whether this process may read `path` (enter it, for a directory), as
/// the kernel decides it (its permission bits and access lists).
fn readable_by_us(path: &Path) -> bool {
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c_path` is a valid C string; `faccessat` only reads it.
    unsafe {
        libc::faccessat(
            libc::AT_FDCWD,
            c_path.as_ptr(),
            libc::R_OK,
            libc::AT_EACCESS,
        ) == 0
    }
}

/// What under `root` `may_read` says we may read and another user could
/// not: files without read permission for others, and directories others
/// may not enter (their content is not looked into). Links are not
/// followed. A directory past the depth or entry bound is listed whole.
pub(super) fn private_to_us(root: &Path, may_read: &dyn Fn(&Path) -> bool) -> Vec<Private> {
    let mut found = Vec::new();
    let mut pending = vec![(root.to_path_buf(), 0usize)];
    let mut seen = 0usize;
    while let Some((dir, depth)) = pending.pop() {
        if depth > MAX_DEPTH || seen > MAX_ENTRIES {
            found.push((dir, true));
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let mode = meta.permissions().mode();
            if meta.is_dir() {
                if mode & 0o001 == 0 {
                    if may_read(&path) {
                        found.push((path, true));
                    }
                } else {
                    pending.push((path, depth + 1));
                }
            } else if meta.is_file() && mode & 0o004 == 0 && may_read(&path) {
                found.push((path, false));
            }
        }
    }
    found.sort();
    found
}

/// The bubblewrap arguments covering each of `private` where it is, and
/// where each bind of `binds` (host path, place in the sandbox) shows it
/// again: under a bind of a directory above it, at the matching place; a
/// bind of it, or of something within it, whole.
pub(super) fn covering(private: &[Private], binds: &[(PathBuf, PathBuf)]) -> Vec<OsString> {
    let mut args = Vec::new();
    for (path, is_dir) in private {
        cover(&mut args, path, *is_dir);
        for (source, dest) in binds {
            if let Ok(rest) = path.strip_prefix(source) {
                cover(&mut args, &dest.join(rest), *is_dir);
            } else if source.starts_with(path) {
                cover(&mut args, dest, source.is_dir());
            }
        }
    }
    args
}

/// Covers `path`: a file by `/dev/null` (on a `nodev` mount, so it cannot
/// even be opened), a directory by an empty read-only tmpfs.
fn cover(args: &mut Vec<OsString>, path: &Path, is_dir: bool) {
    let path = path.as_os_str().to_owned();
    if is_dir {
        args.extend([OsString::from("--tmpfs"), path.clone()]);
        args.extend([OsString::from("--remount-ro"), path]);
    } else {
        args.extend([
            OsString::from("--ro-bind"),
            OsString::from("/dev/null"),
            path,
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(args: &[OsString]) -> Vec<&str> {
        args.iter().map(|a| a.to_str().unwrap()).collect()
    }

    #[test]
    fn what_others_may_not_read_is_found_and_covered() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        let mode = |path: &Path, mode: u32| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        std::fs::write(root.join("passwd"), "public").unwrap();
        mode(&root.join("passwd"), 0o644);
        std::fs::write(root.join("shadow"), "hashes").unwrap();
        mode(&root.join("shadow"), 0o640);
        std::fs::create_dir_all(root.join("ssl/private")).unwrap();
        std::fs::write(root.join("ssl/private/key.pem"), "key").unwrap();
        mode(&root.join("ssl/private"), 0o700);
        std::fs::create_dir_all(root.join("ssl/certs")).unwrap();
        std::fs::write(root.join("ssl/certs/ca.pem"), "ca").unwrap();
        mode(&root.join("ssl/certs/ca.pem"), 0o644);
        std::os::unix::fs::symlink(root.join("shadow"), root.join("link")).unwrap();
        let found = private_to_us(root, &|_| true);
        let (shadow, private) = (root.join("shadow"), root.join("ssl/private"));
        assert_eq!(found, [(shadow.clone(), false), (private.clone(), true)]);
        // What we may not read ourselves is nothing to cover.
        assert!(private_to_us(root, &|_| false).is_empty());
        let shown_at = PathBuf::from("/mnt/etc");
        let args = covering(&found, &[(root.to_path_buf(), shown_at.clone())]);
        let (s, p) = (shadow.to_str().unwrap(), private.to_str().unwrap());
        assert_eq!(
            words(&args),
            [
                "--ro-bind",
                "/dev/null",
                s,
                "--ro-bind",
                "/dev/null",
                "/mnt/etc/shadow",
                "--tmpfs",
                p,
                "--remount-ro",
                p,
                "--tmpfs",
                "/mnt/etc/ssl/private",
                "--remount-ro",
                "/mnt/etc/ssl/private",
            ]
        );
        // A bind of something within a covered directory is covered whole.
        let inside = covering(
            &[(private.clone(), true)],
            &[(private.join("key.pem"), "/k".into())],
        );
        assert_eq!(words(&inside)[4..], ["--ro-bind", "/dev/null", "/k"]);
    }

    #[test]
    fn past_the_depth_bound_a_directory_is_covered_whole() {
        let root = tempfile::tempdir().unwrap();
        let mut deep = root.path().to_path_buf();
        for level in 0..=MAX_DEPTH + 1 {
            deep.push(format!("d{level}"));
        }
        std::fs::create_dir_all(&deep).unwrap();
        let found = private_to_us(root.path(), &|_| true);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].1 && deep.starts_with(&found[0].0), "{found:?}");
    }
}
