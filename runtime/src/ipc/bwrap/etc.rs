//! What of `/etc` a sandbox may not read: what another user of the host
//! could not read either (a file without read permission for others, a
//! directory others may not enter), where the host's own user could. A
//! sandbox runs as the host's user (mapped, in a user namespace, without
//! capabilities): a host running as root gives it uid 0, which still owns,
//! and so may read, every root-owned file bound in: the password hashes in
//! `/etc/shadow`, TLS and SSH private keys, the credentials of services.
//! Each is covered (a file by `/dev/null`, which the sandbox may not open;
//! a directory by an empty read-only tmpfs), so the sandbox reads of
//! `/etc` what any user may. A host running as an ordinary user has
//! nothing there to cover, and pays nothing.
//!
//! The walk is made at most every few seconds per process, and bounded in
//! depth and entries.

use std::ffi::OsString;
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

/// bubblewrap arguments covering what of `/etc` others may not read.
pub(super) fn masks() -> Vec<OsString> {
    static LAST: Mutex<Option<(Instant, Vec<OsString>)>> = Mutex::new(None);
    let mut last = LAST
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((at, args)) = last.as_ref()
        && at.elapsed() < FRESH_FOR
    {
        return args.clone();
    }
    let args = covering(&private_to_us(Path::new("/etc"), &Identity::current()));
    *last = Some((Instant::now(), args.clone()));
    args
}

/// Who this process is, as file permissions see it.
pub(super) struct Identity {
    uid: u32,
    groups: Vec<u32>,
}

impl Identity {
    /// This process's effective user and groups.
    fn current() -> Identity {
        // SAFETY: these calls read the caller's credentials into memory
        // sized for them (`getgroups(0, NULL)` first asks how much).
        unsafe {
            let uid = libc::geteuid();
            let mut groups = vec![libc::getegid()];
            let count = libc::getgroups(0, std::ptr::null_mut());
            if count > 0 {
                let mut more = vec![0 as libc::gid_t; count as usize];
                let got = libc::getgroups(count, more.as_mut_ptr());
                more.truncate(got.max(0) as usize);
                groups.extend(more);
            }
            Identity { uid, groups }
        }
    }

    /// Whether this identity may read a file (enter a directory) with
    /// `meta`, by its permission bits (uid 0 may read anything).
    fn may_read(&self, meta: &std::fs::Metadata) -> bool {
        use std::os::unix::fs::MetadataExt;
        let (owner, group) = if meta.is_dir() {
            (0o100, 0o010)
        } else {
            (0o400, 0o040)
        };
        let mode = meta.mode();
        self.uid == 0
            || (meta.uid() == self.uid && mode & owner != 0)
            || (meta.uid() != self.uid && self.groups.contains(&meta.gid()) && mode & group != 0)
    }
}

/// What under `root` `us` may read and another user could not: files
/// without read permission for others, and directories others may not
/// enter (their content is not looked into). Links are not followed.
pub(super) fn private_to_us(root: &Path, us: &Identity) -> Vec<(PathBuf, bool)> {
    let mut found = Vec::new();
    let mut pending = vec![(root.to_path_buf(), 0usize)];
    let mut seen = 0usize;
    while let Some((dir, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return found;
            }
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            let mode = meta.permissions().mode();
            if meta.is_dir() {
                if mode & 0o001 == 0 {
                    if us.may_read(&meta) {
                        found.push((entry.path(), true));
                    }
                } else if depth < MAX_DEPTH {
                    pending.push((entry.path(), depth + 1));
                }
            } else if meta.is_file() && mode & 0o004 == 0 && us.may_read(&meta) {
                found.push((entry.path(), false));
            }
        }
    }
    found.sort();
    found
}

/// The bubblewrap arguments covering each of `paths` (`true`: a directory).
fn covering(paths: &[(PathBuf, bool)]) -> Vec<OsString> {
    let mut args = Vec::new();
    for (path, is_dir) in paths {
        let path = path.clone().into_os_string();
        if *is_dir {
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
    args
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let found = private_to_us(root, &Identity::current());
        assert_eq!(
            found,
            [
                (root.join("shadow"), false),
                (root.join("ssl/private"), true)
            ]
        );
        // Another user, without our files' groups, could read none of it:
        // there is nothing to cover from its sandbox.
        let stranger = Identity {
            uid: 4_000_000,
            groups: vec![4_000_000],
        };
        assert!(private_to_us(root, &stranger).is_empty());
        let args = covering(&found);
        let words: Vec<&str> = args.iter().map(|a| a.to_str().unwrap()).collect();
        let shadow = root.join("shadow");
        let private = root.join("ssl/private");
        assert_eq!(
            words,
            [
                "--ro-bind",
                "/dev/null",
                shadow.to_str().unwrap(),
                "--tmpfs",
                private.to_str().unwrap(),
                "--remount-ro",
                private.to_str().unwrap(),
            ]
        );
    }
}
