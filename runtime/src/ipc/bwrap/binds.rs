//! The check that keeps a user's binds off gangway's own paths: a sandbox
//! given a read-write bind over the client binary or the wrapper directory
//! could replace what the host runs next, and one given any bind over the
//! server's private directory could read every scope's token and take over
//! their sockets. gangway's binds come last, so no bind of the user's can
//! cover them inside the sandbox; this check covers the rest (a bind at
//! another place, or of a directory above them).

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};

use super::paths::absolute;
use crate::ipc::env::SandboxEnv;

/// Why [`Bwrap::prefix`](super::Bwrap::prefix) or
/// [`Bwrap::command`](super::Bwrap::command) made no sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BwrapError {
    /// A bind of the user's would show the sandbox one of gangway's own
    /// paths in a way it must not see it.
    BindCovers {
        /// The host path the user binds.
        bind: PathBuf,
        /// Whether that bind is read-write.
        read_write: bool,
        /// gangway's path it covers (or lies within).
        covered: PathBuf,
        /// What that path is.
        what: &'static str,
    },
    /// The environment has no token file, and a sandbox started from an
    /// argv can receive its token no other way (an argv is readable by
    /// every user of the host).
    NoTokenFile,
    /// The seccomp filter could not be made or put in place.
    Seccomp(String),
}

impl fmt::Display for BwrapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BwrapError::BindCovers {
                bind,
                read_write,
                covered,
                what,
            } => {
                let (access, fix) = if *read_write {
                    (
                        "read-write ",
                        "bind it read-only (`ro_bind`), or keep gangway's paths outside it \
                         (`IpcServerBuilder::client_bin`, `wrapper_dir`, `socket_parent`)",
                    )
                } else {
                    (
                        "",
                        "bind a directory that does not hold it (`IpcServerBuilder::socket_parent` \
                         moves it)",
                    )
                };
                write!(
                    f,
                    "the {access}bind of {} covers {}, {what}; {fix}",
                    bind.display(),
                    covered.display()
                )
            }
            BwrapError::NoTokenFile => f.write_str(
                "this SandboxEnv has no token file, and a sandbox started from an argv can only \
                 read its token from one (an argv is readable by every user of the host); use \
                 the environment of `IpcServer::sandbox_env` or `IpcServer::scope`, or give one \
                 with `SandboxEnv::with_token_file`",
            ),
            BwrapError::Seccomp(message) => {
                write!(
                    f,
                    "cannot put the sandbox's seccomp filter in place: {message}"
                )
            }
        }
    }
}

impl std::error::Error for BwrapError {}

/// A path of gangway's that a user's bind must keep off.
struct Protected {
    path: PathBuf,
    what: &'static str,
    /// Refused under a read-only bind too (else only under a read-write one).
    even_read_only: bool,
}

/// gangway's paths in `env`, and how a bind may not cover them.
fn protected(env: &SandboxEnv) -> Vec<Protected> {
    let mut paths = Vec::new();
    let mut add = |path: Option<&Path>, what, even_read_only| {
        if let Some(path) = path.and_then(resolved) {
            paths.push(Protected {
                path,
                what,
                even_read_only,
            });
        }
    };
    add(
        env.server_dir(),
        "the server's private directory, which holds every scope's socket and token",
        true,
    );
    if let crate::ipc::Endpoint::Unix(socket) = env.endpoint() {
        add(socket.parent(), "the sandbox's socket directory", false);
    }
    add(
        env.token_file().and_then(Path::parent),
        "the directory of the sandbox's token file",
        false,
    );
    add(
        env.wrapper_dir(),
        "the wrapper directory the sandbox runs its commands from",
        false,
    );
    add(
        env.client_bin(),
        "the client binary the wrappers run (and the host may run next)",
        false,
    );
    paths
}

/// Refuses the first bind in `args` (bubblewrap options, as the user gave
/// them) that covers one of gangway's paths in `env` as it must not.
pub(super) fn check(args: &[OsString], env: &SandboxEnv) -> Result<(), BwrapError> {
    let protected = protected(env);
    for (source, read_write) in binds(args) {
        let Some(resolved_source) = resolved(Path::new(source)) else {
            continue;
        };
        for path in &protected {
            if (read_write || path.even_read_only) && overlap(&resolved_source, &path.path) {
                return Err(BwrapError::BindCovers {
                    bind: PathBuf::from(source),
                    read_write,
                    covered: path.path.clone(),
                    what: path.what,
                });
            }
        }
    }
    Ok(())
}

/// Whether one path is the other or lies within it.
fn overlap(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// `path` with its links resolved where it exists, else made absolute.
fn resolved(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok().or_else(|| absolute(path))
}

/// The host paths bound by `args` and whether each is read-write, read as
/// bubblewrap reads its options (each option's own arguments skipped).
fn binds(args: &[OsString]) -> Vec<(&OsStr, bool)> {
    let mut found = Vec::new();
    let mut index = 0;
    while let Some(option) = args.get(index).and_then(|arg| arg.to_str()) {
        let operands = &args[(index + 1).min(args.len())..];
        match option {
            "--bind" | "--bind-try" | "--dev-bind" | "--dev-bind-try" => {
                found.extend(operands.first().map(|source| (source.as_os_str(), true)));
            }
            "--ro-bind" | "--ro-bind-try" => {
                found.extend(operands.first().map(|source| (source.as_os_str(), false)));
            }
            // The upper directory takes the sandbox's writes.
            "--overlay" => {
                found.extend(operands.first().map(|upper| (upper.as_os_str(), true)));
            }
            "--overlay-src" => {
                found.extend(operands.first().map(|lower| (lower.as_os_str(), false)));
            }
            _ => {}
        }
        index += 1 + arity(option);
    }
    found
}

/// How many arguments bubblewrap's option `option` takes.
fn arity(option: &str) -> usize {
    match option {
        "--overlay" => 3,
        "--setenv" | "--bind" | "--bind-try" | "--dev-bind" | "--dev-bind-try" | "--ro-bind"
        | "--ro-bind-try" | "--file" | "--bind-data" | "--ro-bind-data" | "--symlink"
        | "--chmod" | "--bind-fd" | "--ro-bind-fd" => 2,
        "--args" | "--argv0" | "--userns" | "--userns2" | "--pidns" | "--uid" | "--gid"
        | "--hostname" | "--chdir" | "--unsetenv" | "--lock-file" | "--sync-fd"
        | "--remount-ro" | "--exec-label" | "--file-label" | "--proc" | "--dev" | "--tmpfs"
        | "--mqueue" | "--dir" | "--seccomp" | "--add-seccomp-fd" | "--block-fd"
        | "--userns-block-fd" | "--info-fd" | "--json-status-fd" | "--cap-add" | "--cap-drop"
        | "--perms" | "--size" | "--overlay-src" | "--tmp-overlay" | "--ro-overlay" => 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipc::Endpoint;

    fn env(root: &Path) -> SandboxEnv {
        SandboxEnv::new(
            Endpoint::Unix(root.join("server/3/s")),
            "0123456789abcdef".into(),
        )
        .with_token_file(Some(root.join("server/3/token")))
        .with_server_dir(Some(root.join("server")))
        .with_wrapper_dir(Some(root.join("wrappers")))
        .with_client_bin(Some(root.join("project/target/debug/gangway-client")))
    }

    fn args(words: &[&OsStr]) -> Vec<OsString> {
        words.iter().map(|w| w.to_os_string()).collect()
    }

    #[test]
    fn a_read_write_bind_over_the_client_or_the_wrappers_is_refused_naming_both() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        let env = env(root);
        let project = root.join("project");
        let refusal = check(
            &args(&["--bind".as_ref(), project.as_ref(), "/p".as_ref()]),
            &env,
        )
        .unwrap_err();
        let text = refusal.to_string();
        assert!(
            text.contains(&project.display().to_string())
                && text.contains("project/target/debug/gangway-client")
                && text.contains("read-only"),
            "{text}"
        );
        // Read-only, it is harmless: the client is bound read-only after it.
        check(
            &args(&["--ro-bind".as_ref(), project.as_ref(), project.as_ref()]),
            &env,
        )
        .unwrap();
        // A directory within the wrappers, read-write, elsewhere.
        let inside = root.join("wrappers/sub");
        assert!(matches!(
            check(
                &args(&["--dev-bind".as_ref(), inside.as_ref(), "/w".as_ref()]),
                &env
            ),
            Err(BwrapError::BindCovers {
                read_write: true,
                ..
            })
        ));
        // Unrelated paths, and words that are another option's value.
        let other = root.join("data");
        check(
            &args(&[
                "--bind".as_ref(),
                other.as_ref(),
                other.as_ref(),
                "--setenv".as_ref(),
                "X".as_ref(),
                "--bind".as_ref(),
                "--chdir".as_ref(),
                project.as_ref(),
            ]),
            &env,
        )
        .unwrap();
    }

    #[test]
    fn any_bind_showing_the_servers_directory_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        let env = env(root);
        for bind in [
            root.to_path_buf(),
            root.join("server"),
            root.join("server/7"),
        ] {
            let refusal = check(
                &args(&["--ro-bind".as_ref(), bind.as_ref(), bind.as_ref()]),
                &env,
            );
            assert!(
                matches!(&refusal, Err(BwrapError::BindCovers { read_write: false, what, .. })
                    if what.contains("every scope")),
                "{bind:?}: {refusal:?}"
            );
        }
        // Through a link, too.
        std::fs::create_dir_all(root.join("server")).unwrap();
        let link = root.join("link");
        std::os::unix::fs::symlink(root.join("server"), &link).unwrap();
        assert!(
            check(
                &args(&["--ro-bind".as_ref(), link.as_ref(), "/x".as_ref()]),
                &env
            )
            .is_err()
        );
        // The overlay's upper directory takes writes.
        assert!(
            check(
                &args(&[
                    "--overlay".as_ref(),
                    root.join("wrappers").as_ref(),
                    "/work".as_ref(),
                    "/w".as_ref()
                ]),
                &env
            )
            .is_err()
        );
    }
}
