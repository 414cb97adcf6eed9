//! The check of the bubblewrap options a user adds: none may undo the
//! profile (give back a capability, join another namespace, take options
//! from a descriptor, replace the filter, end the options early), and no
//! bind may cover gangway's own paths as it must not. A sandbox given a
//! read-write bind over the client binary, the wrapper directory or the
//! seccomp filter's file could replace what the host runs next or the
//! filter of the next sandbox, and one given any bind over the server's
//! private directory could read every scope's token and take over their
//! sockets. gangway's binds come last, so no bind of the user's can cover
//! them inside the sandbox; this check covers the rest (a bind at another
//! place, of a directory above them, or of a link's directory).

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};

use super::paths::absolute;
use crate::sandbox::env::SandboxEnv;

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
    /// An option of the user's would undo the profile.
    Undoes {
        /// The option.
        option: String,
        /// What it would undo.
        why: &'static str,
    },
    /// The `bwrap` program is not installed where it was looked for.
    NotInstalled {
        /// The program as named.
        program: PathBuf,
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
            BwrapError::Undoes { option, why } => write!(
                f,
                "`{option}`, among the bubblewrap arguments given to `Bwrap`, is refused: {why}"
            ),
            BwrapError::NotInstalled { program } => {
                let where_ = if program.components().count() > 1 {
                    "an executable file"
                } else {
                    "an executable on this process's PATH"
                };
                write!(
                    f,
                    "`{}` is not {where_}: install bubblewrap (Debian and Ubuntu: `apt-get \
                     install bubblewrap`), or name it with `Bwrap::program`",
                    program.display()
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

/// gangway's paths in `env` (and the directory of the seccomp filter's
/// files), each as written and with its links resolved, and how a bind may
/// not cover them.
fn protected(env: &SandboxEnv, filter_dir: Option<&Path>) -> Vec<Protected> {
    let mut paths = Vec::new();
    let mut add = |path: Option<&Path>, what, even_read_only| {
        for path in path.map(spellings).unwrap_or_default() {
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
    add(
        filter_dir,
        "the directory of the sandbox's seccomp filter",
        false,
    );
    paths
}

/// Refuses the first of the user's bubblewrap options in `args` that would
/// undo the profile, or bind over one of gangway's paths in `env` (or the
/// filter's directory) as it must not.
pub(super) fn check(
    args: &[OsString],
    env: &SandboxEnv,
    filter_dir: Option<&Path>,
) -> Result<(), BwrapError> {
    let options = options(args)?;
    if let Some((option, why)) = options.iter().find_map(|(name, _)| undoes(name)) {
        return Err(BwrapError::Undoes {
            option: option.to_owned(),
            why,
        });
    }
    let protected = protected(env, filter_dir);
    for (source, read_write) in binds(&options) {
        for source_path in spellings(Path::new(source)) {
            for path in &protected {
                if (read_write || path.even_read_only) && overlap(&source_path, &path.path) {
                    return Err(BwrapError::BindCovers {
                        bind: PathBuf::from(source),
                        read_write,
                        covered: path.path.clone(),
                        what: path.what,
                    });
                }
            }
        }
    }
    Ok(())
}

/// The binds in `args` (checked by [`check`] first) as (host path with its
/// links resolved, place in the sandbox); and the overlays' lower
/// directories, which no cover can reach, as (host path, none).
pub(super) fn bind_places(args: &[OsString]) -> Vec<(PathBuf, Option<PathBuf>)> {
    let Ok(options) = options(args) else {
        return Vec::new();
    };
    let mut places = Vec::new();
    for (name, operands) in options {
        let source = operands.first().map(Path::new);
        let source = source.and_then(|source| spellings(source).pop());
        match (name, source, operands.get(1)) {
            (
                "--bind" | "--bind-try" | "--dev-bind" | "--dev-bind-try" | "--ro-bind"
                | "--ro-bind-try",
                Some(source),
                Some(dest),
            ) => places.push((source, Some(PathBuf::from(dest)))),
            ("--overlay-src", Some(source), _) => places.push((source, None)),
            _ => {}
        }
    }
    places
}

/// The options that would undo the profile, and why.
fn undoes(option: &str) -> Option<(&str, &'static str)> {
    let why = match option {
        "--cap-add" => "it gives back a capability the profile drops",
        "--userns" | "--userns2" | "--pidns" => {
            "it joins an existing namespace instead of the sandbox's own"
        }
        "--args" | "--bind-fd" | "--ro-bind-fd" | "--file" | "--bind-data" | "--ro-bind-data"
        | "--add-seccomp-fd" | "--sync-fd" | "--block-fd" | "--userns-block-fd" | "--info-fd"
        | "--json-status-fd" => {
            "it takes a file descriptor, and gangway hands bubblewrap none of the host's (they \
             are closed on exec); bind a file instead"
        }
        "--seccomp" => "it replaces the profile's seccomp filter",
        "--" => {
            "it ends bubblewrap's options, turning gangway's own binds into the program's arguments"
        }
        _ => return None,
    };
    Some((option, why))
}

/// Whether one path is the other or lies within it.
fn overlap(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// The ways `path` may be named: made absolute as written, and with its
/// links resolved where it exists (a link's own directory and its
/// target's are both places a bind must keep off); the resolved one last.
fn spellings(path: &Path) -> Vec<PathBuf> {
    let mut names: Vec<PathBuf> = absolute(path).into_iter().collect();
    if let Ok(resolved) = std::fs::canonicalize(path)
        && !names.contains(&resolved)
    {
        names.push(resolved);
    }
    names
}

/// `args` as bubblewrap reads them: each option with its own arguments.
/// A word where an option belongs that is not one (bubblewrap would run
/// it as the program, gangway's binds becoming its arguments), and an
/// option short of its arguments (it would take gangway's as them), are
/// refused.
fn options(args: &[OsString]) -> Result<Vec<(&str, &[OsString])>, BwrapError> {
    let mut options = Vec::new();
    let mut index = 0;
    while index < args.len() {
        let word = &args[index];
        let name = match word.to_str() {
            Some(name) if name.starts_with("--") => name,
            _ => {
                return Err(BwrapError::Undoes {
                    option: word.to_string_lossy().into_owned(),
                    why: "it is not a bubblewrap option: bubblewrap would run it as the program, \
                          and gangway's own binds would become its arguments (the program goes \
                          to `Bwrap::command`, or after the prefix)",
                });
            }
        };
        let end = index + 1 + arity(name);
        if end > args.len() {
            return Err(BwrapError::Undoes {
                option: name.to_owned(),
                why: "it lacks its arguments, and would take gangway's own options as them",
            });
        }
        options.push((name, &args[index + 1..end]));
        index = end;
    }
    Ok(options)
}

/// The host paths the options bind and whether each is read-write.
fn binds<'a>(options: &[(&str, &'a [OsString])]) -> Vec<(&'a OsStr, bool)> {
    let mut found = Vec::new();
    for (name, operands) in options {
        let sources: &[OsString] = match *name {
            // The upper and work directories take the sandbox's writes.
            "--overlay" => &operands[..operands.len().min(2)],
            _ => &operands[..operands.len().min(1)],
        };
        let read_write = match *name {
            "--bind" | "--bind-try" | "--dev-bind" | "--dev-bind-try" | "--overlay" => true,
            "--ro-bind" | "--ro-bind-try" | "--overlay-src" => false,
            _ => continue,
        };
        found.extend(
            sources
                .iter()
                .map(|source| (source.as_os_str(), read_write)),
        );
    }
    found
}

/// How many arguments bubblewrap's option `option` takes (0 for one it
/// does not have: the word is then read as the next option).
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
    use std::os::unix::ffi::OsStringExt;

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
            None,
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
            None,
        )
        .unwrap();
        // A directory within the wrappers, read-write, elsewhere.
        let inside = root.join("wrappers/sub");
        assert!(matches!(
            check(
                &args(&["--dev-bind".as_ref(), inside.as_ref(), "/w".as_ref()]),
                &env,
                None,
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
            None,
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
                None,
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
                &env,
                None
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
                &env,
                None
            )
            .is_err()
        );
    }

    #[test]
    fn options_that_undo_the_profile_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let env = env(root.path());
        for words in [
            &["--cap-add", "ALL"][..],
            &["--userns", "3"],
            &["--pidns", "3"],
            &["--args", "3"],
            &["--bind-fd", "3", "/x"],
            &["--seccomp", "3"],
            &["--setenv", "A", "b", "--"],
        ] {
            let words: Vec<OsString> = words.iter().map(OsString::from).collect();
            let refusal = check(&words, &env, None).unwrap_err();
            assert!(
                matches!(&refusal, BwrapError::Undoes { option, .. } if words.iter().any(|w| w == option.as_str())),
                "{words:?}: {refusal:?}"
            );
        }
        // A word that is another option's value is not that option, and a
        // word that is not UTF-8 does not hide what follows it.
        let quoted: Vec<OsString> = ["--setenv", "X", "--cap-add"]
            .iter()
            .map(OsString::from)
            .collect();
        check(&quoted, &env, None).unwrap();
        let hidden = vec![
            OsString::from_vec(vec![0xff]),
            OsString::from("--cap-add"),
            OsString::from("ALL"),
        ];
        assert!(check(&hidden, &env, None).is_err());
        // A plain word would be the program, gangway's binds its arguments;
        // an option short of its arguments would take gangway's.
        for words in [
            &["/bin/sh"][..],
            &["--ro-bind", "/a", "/a", "x"],
            &["--setenv", "X"],
        ] {
            let words: Vec<OsString> = words.iter().map(OsString::from).collect();
            assert!(
                matches!(check(&words, &env, None), Err(BwrapError::Undoes { .. })),
                "{words:?}"
            );
        }
        // Descriptors: bubblewrap is handed none.
        for words in [
            &["--add-seccomp-fd", "3"][..],
            &["--file", "3", "/x"],
            &["--info-fd", "3"],
            &["--ro-bind-data", "3", "/x"],
        ] {
            let words: Vec<OsString> = words.iter().map(OsString::from).collect();
            let refusal = check(&words, &env, None).unwrap_err();
            assert!(refusal.to_string().contains("file descriptor"), "{refusal}");
        }
    }

    #[test]
    fn a_link_to_gangways_paths_is_covered_where_it_is_and_where_it_points() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        let real = root.join("real");
        std::fs::create_dir_all(&real).unwrap();
        std::fs::write(real.join("gangway-client"), b"").unwrap();
        let links = root.join("links");
        std::fs::create_dir_all(&links).unwrap();
        std::os::unix::fs::symlink(real.join("gangway-client"), links.join("gangway-client"))
            .unwrap();
        let env = env(root).with_client_bin(Some(links.join("gangway-client")));
        for dir in [&links, &real] {
            let refusal = check(
                &args(&["--bind".as_ref(), dir.as_ref(), dir.as_ref()]),
                &env,
                None,
            );
            assert!(
                matches!(
                    refusal,
                    Err(BwrapError::BindCovers {
                        read_write: true,
                        ..
                    })
                ),
                "{dir:?}: {refusal:?}"
            );
        }
    }

    #[test]
    fn the_filters_directory_is_kept_from_read_write_binds() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        let env = env(root);
        let filters = root.join("gangway-0");
        let refusal = check(
            &args(&["--bind".as_ref(), filters.as_ref(), "/r".as_ref()]),
            &env,
            Some(&filters),
        )
        .unwrap_err();
        assert!(refusal.to_string().contains("seccomp filter"), "{refusal}");
        check(
            &args(&[
                "--bind".as_ref(),
                root.join("elsewhere").as_ref(),
                "/r".as_ref(),
            ]),
            &env,
            Some(&filters),
        )
        .unwrap();
    }
}
