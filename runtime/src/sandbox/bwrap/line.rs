//! The words of a sandbox's bubblewrap command line, in the order the
//! profile needs them: bubblewrap found on the host's `PATH`, no
//! privilege, the system directories, the user's options (checked), what
//! of `/etc` must stay unreadable (after the user's binds, so none shows it
//! again), gangway's own binds last.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::files::{self, FilterFile};
use super::user_args::{self, BwrapError};
use super::{etc, paths, seccomp, userns};
use crate::sandbox::env::SandboxEnv;

/// What a sandbox is made of, as a `Bwrap` holds it.
pub(super) struct Profile<'a> {
    pub(super) program: &'a Path,
    pub(super) env: &'a SandboxEnv,
    pub(super) share_net: bool,
    pub(super) seccomp: bool,
    pub(super) extra: &'a [OsString],
}

/// A profile checked and made ready: the `bwrap` to run, the filter's
/// file, and the covers of `/etc`.
pub(super) struct Resolved {
    pub(super) program: PathBuf,
    pub(super) filter: Option<FilterFile>,
    covers: Vec<OsString>,
}

/// Checks `profile` and readies what its command line needs.
///
/// # Errors
///
/// `bwrap` not installed, the filter not made, an option of the user's
/// refused.
pub(super) fn resolve(profile: &Profile) -> Result<Resolved, BwrapError> {
    let program = installed_program(profile.program)?;
    let filter = match profile.seccomp {
        true => Some(filter_file()?),
        false => None,
    };
    let filter_dir = filter.as_ref().map(|f| f.dir.as_path());
    user_args::check(profile.extra, profile.env, filter_dir)?;
    let private = etc::private_paths();
    let mut binds = Vec::new();
    for (source, dest) in user_args::bind_places(profile.extra) {
        match dest {
            Some(dest) => binds.push((source, dest)),
            // An overlay's lower directory: nothing can be covered in it.
            None => {
                if let Some((covered, _)) = private
                    .iter()
                    .find(|(path, _)| path.starts_with(&source) || source.starts_with(path))
                {
                    return Err(BwrapError::BindCovers {
                        bind: source,
                        read_write: false,
                        covered: covered.clone(),
                        what: "a file of /etc no other user may read, which an overlay of it \
                               would show",
                    });
                }
            }
        }
    }
    Ok(Resolved {
        program,
        filter,
        covers: etc::covering(&private, &binds),
    })
}

/// The command line through `--`: `environment` (bubblewrap options)
/// after the namespaces, the filter read from descriptor `filter_fd`.
pub(super) fn words(
    profile: &Profile,
    resolved: &Resolved,
    environment: &[OsString],
    filter_fd: Option<&str>,
) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![resolved.program.clone().into_os_string()];
    argv.extend(["--cap-drop", "ALL"].map(OsString::from));
    if userns::can_disable(&resolved.program) {
        argv.extend(["--unshare-user", "--disable-userns"].map(OsString::from));
    }
    argv.extend(system_dirs());
    let fixed: &[&str] = &[
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--unshare-all",
        "--die-with-parent",
        "--chdir",
        "/",
    ];
    argv.extend(fixed.iter().map(OsString::from));
    if profile.share_net {
        argv.push("--share-net".into());
    }
    argv.extend(environment.iter().cloned());
    if let Some(fd) = filter_fd.filter(|_| resolved.filter.is_some()) {
        argv.extend([OsString::from("--add-seccomp-fd"), OsString::from(fd)]);
    }
    argv.extend(profile.extra.iter().cloned());
    argv.extend(resolved.covers.iter().cloned());
    argv.extend(profile.env.bwrap_args());
    argv.push("--".into());
    argv
}

/// The `bwrap` program as an absolute path: as named when the name holds
/// a `/`, else found on this process's `PATH` (never the sandbox's, whose
/// first directory is the wrappers').
fn installed_program(program: &Path) -> Result<PathBuf, BwrapError> {
    let not_installed = || BwrapError::NotInstalled {
        program: program.to_path_buf(),
    };
    if program.components().count() > 1 || program.is_absolute() {
        return paths::absolute(program)
            .filter(|path| is_executable(path))
            .ok_or_else(not_installed);
    }
    let path = std::env::var_os("PATH").ok_or_else(not_installed)?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(not_installed)
}

/// The filter's file, in place.
fn filter_file() -> Result<FilterFile, BwrapError> {
    let program = seccomp::program().map_err(BwrapError::Seccomp)?;
    files::filter_file(program).map_err(|error| BwrapError::Seccomp(error.to_string()))
}

/// A regular file someone may execute.
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Read-only binds of the system directories: `/usr` and `/etc`, and each
/// of `/bin`, `/sbin`, `/lib`, `/lib32`, `/lib64` as the host has it (a
/// symbolic link on merged-`/usr` systems, recreated as one; a directory,
/// bound; absent, left out).
fn system_dirs() -> Vec<OsString> {
    let mut args = Vec::new();
    for dir in ["/usr", "/etc"] {
        args.extend(["--ro-bind", dir, dir].map(OsString::from));
    }
    for dir in ["/bin", "/sbin", "/lib", "/lib32", "/lib64"] {
        match std::fs::symlink_metadata(dir) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(dir) {
                    args.extend([
                        OsString::from("--symlink"),
                        target.into_os_string(),
                        OsString::from(dir),
                    ]);
                }
            }
            Ok(meta) if meta.is_dir() => {
                args.extend(["--ro-bind", dir, dir].map(OsString::from));
            }
            _ => {}
        }
    }
    args
}
