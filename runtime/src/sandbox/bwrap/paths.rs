//! The host paths a sandbox must see to reach the host, and bubblewrap
//! arguments binding them, each read-only at its own path.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::ipc::endpoint::Endpoint;
use crate::sandbox::env::SandboxEnv;

/// How a sandbox must see a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Access {
    /// Read and write (`bwrap --bind`).
    ReadWrite,
    /// Read only (`bwrap --ro-bind`).
    ReadOnly,
}

/// A host path a sandbox must see, at the same place, for its calls to
/// reach the host.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxPath {
    /// The path, the same inside the sandbox as outside.
    pub path: PathBuf,
    /// How the sandbox must see it.
    pub access: Access,
    /// What it is for, for a person reading a sandbox's configuration.
    pub purpose: &'static str,
}

impl SandboxEnv {
    /// The host paths a sandbox must see for its calls to reach the host,
    /// every one read-only: the directory of its socket (a Unix socket
    /// endpoint; connecting works through a read-only bind, while renaming,
    /// replacing or planting files beside the socket does not) and of its
    /// token file, the wrapper directory and the client binary (those that
    /// are set). Bind each at the same path; a sandbox that hides them (a
    /// fresh `/tmp` over a build directory under `/tmp`, say) makes every
    /// call fail with "not found" (exit 127).
    ///
    /// A server gives each scope a directory of its own, holding only that
    /// scope's socket and token file, so a sandbox sees no other scope's.
    /// A TCP endpoint has no socket path: such a sandbox must keep the
    /// host's network (or a route to the address) instead. Relative paths
    /// are made absolute against the current directory, since a sandbox
    /// binds them at the same place.
    pub fn sandbox_paths(&self) -> Vec<SandboxPath> {
        let mut paths: Vec<SandboxPath> = Vec::with_capacity(4);
        let mut push = |path: Option<PathBuf>, purpose: &'static str| {
            if let Some(path) = path
                && !paths.iter().any(|seen| seen.path == path)
            {
                paths.push(SandboxPath {
                    path,
                    access: Access::ReadOnly,
                    purpose,
                });
            }
        };
        if let Endpoint::Unix(socket) = self.endpoint() {
            push(
                socket.parent().and_then(absolute),
                "the scope's socket directory: calls connect to the host here",
            );
        }
        push(
            self.token_file().and_then(Path::parent).and_then(absolute),
            "the directory of the scope's token file (GANGWAY_TOKEN_FILE)",
        );
        push(
            self.wrapper_dir().and_then(absolute),
            "the wrapper directory: one command per host command, first on PATH",
        );
        // The binary alone, not its directory: a build directory holds much
        // more than the client.
        push(
            self.client_bin().and_then(absolute),
            "the client binary (GANGWAY_BIN) the wrappers run",
        );
        paths
    }

    /// bubblewrap arguments binding [`sandbox_paths`](Self::sandbox_paths)
    /// at their own paths (`--ro-bind`). Put them after every other bind,
    /// since a later mount covers an earlier one. [`Bwrap`](super::Bwrap)
    /// does the whole command line.
    pub fn bwrap_args(&self) -> Vec<OsString> {
        let mut args = Vec::new();
        for entry in self.sandbox_paths() {
            let flag = match entry.access {
                Access::ReadWrite => "--bind",
                Access::ReadOnly => "--ro-bind",
            };
            args.extend([
                OsString::from(flag),
                entry.path.clone().into_os_string(),
                entry.path.into_os_string(),
            ]);
        }
        args
    }
}

/// `path` made absolute against the current directory; `None` for an empty
/// path (a socket named without a directory has no directory to bind).
pub(super) fn absolute(path: &Path) -> Option<PathBuf> {
    if path.as_os_str().is_empty() {
        return None;
    }
    std::path::absolute(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(args: &[OsString]) -> Vec<&str> {
        args.iter().map(|a| a.to_str().unwrap()).collect()
    }

    #[test]
    fn the_paths_are_the_scopes_directory_the_wrappers_and_the_client_all_read_only() {
        let env = SandboxEnv::new(Endpoint::Unix("/run/gw-x/3/s".into()), "t".into())
            .with_token_file(Some("/run/gw-x/3/token".into()))
            .with_wrapper_dir(Some("/opt/wrappers".into()))
            .with_client_bin(Some("/tmp/build/host".into()));
        let paths = env.sandbox_paths();
        let listed: Vec<(&Path, Access)> =
            paths.iter().map(|p| (p.path.as_path(), p.access)).collect();
        assert_eq!(
            listed,
            [
                (Path::new("/run/gw-x/3"), Access::ReadOnly),
                (Path::new("/opt/wrappers"), Access::ReadOnly),
                (Path::new("/tmp/build/host"), Access::ReadOnly),
            ]
        );
        assert_eq!(
            text(&env.bwrap_args()),
            [
                "--ro-bind",
                "/run/gw-x/3",
                "/run/gw-x/3",
                "--ro-bind",
                "/opt/wrappers",
                "/opt/wrappers",
                "--ro-bind",
                "/tmp/build/host",
                "/tmp/build/host"
            ]
        );
        // Nothing set, nothing to bind but the socket's directory.
        let bare = SandboxEnv::new(Endpoint::Unix("/s/sock".into()), "t".into());
        assert_eq!(text(&bare.bwrap_args()), ["--ro-bind", "/s", "/s"]);
        // A socket named without a directory has none to bind; relative
        // paths are bound where they really are.
        let relative = SandboxEnv::new(Endpoint::Unix("sock".into()), "t".into())
            .with_client_bin(Some("bin/client".into()));
        let here = std::env::current_dir().unwrap();
        assert_eq!(
            relative
                .sandbox_paths()
                .iter()
                .map(|p| p.path.clone())
                .collect::<Vec<_>>(),
            [here.join("bin/client")]
        );
        // Over TCP, only the token file's directory.
        let tcp = SandboxEnv::new(Endpoint::Tcp("127.0.0.1:9".parse().unwrap()), "t".into());
        assert!(tcp.sandbox_paths().is_empty());
        let tcp = tcp.with_token_file(Some("/run/gw-x/4/token".into()));
        assert_eq!(
            text(&tcp.bwrap_args()),
            ["--ro-bind", "/run/gw-x/4", "/run/gw-x/4"]
        );
    }
}
