//! What a sandbox must see to reach the host, and bubblewrap (`bwrap`)
//! arguments that give it exactly that.
//!
//! A sandboxed call needs three things from the host's file system: the
//! socket directory (read-write: connecting to a Unix socket needs write
//! permission on it), the wrapper directory and the client binary (both
//! read-only). [`SandboxEnv::sandbox_paths`] lists them for any sandbox;
//! [`Bwrap`] turns them into a bubblewrap command line, the sandbox most
//! hosts reach for.
//!
//! ```no_run
//! # async fn demo(router: gangway::ipc::IpcRouter) -> std::io::Result<()> {
//! use gangway::ipc::{Bwrap, IpcServer};
//!
//! let server = IpcServer::builder()
//!     .client_bin(std::env::current_exe()?)
//!     .start(router)
//!     .await?;
//! let mut shell = Bwrap::new(&server.sandbox_env()).command("sh", ["-c", "web_search rust"]);
//! let status = shell.status()?;
//! # Ok(()) }
//! ```

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{Endpoint, SandboxEnv};

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
    /// The host paths a sandbox must see for its calls to reach the host:
    /// the socket directory read-write (for a Unix socket endpoint), the
    /// wrapper directory and the client binary read-only (those that are
    /// set). Bind each at the same path; a sandbox that hides them (a
    /// fresh `/tmp` over a build directory under `/tmp`, say) makes every
    /// call fail with "not found" (exit 127).
    ///
    /// A TCP endpoint has no path: such a sandbox must keep the host's
    /// network (or a route to the address) instead.
    pub fn sandbox_paths(&self) -> Vec<SandboxPath> {
        let mut paths = Vec::with_capacity(3);
        if let Endpoint::Unix(socket) = self.endpoint()
            && let Some(dir) = socket.parent()
        {
            paths.push(SandboxPath {
                path: dir.to_path_buf(),
                access: Access::ReadWrite,
                purpose: "the socket directory: calls connect to the host here",
            });
        }
        if let Some(dir) = self.wrapper_dir() {
            paths.push(SandboxPath {
                path: dir.to_path_buf(),
                access: Access::ReadOnly,
                purpose: "the wrapper directory: one command per host command, first on PATH",
            });
        }
        if let Some(bin) = self.client_bin() {
            paths.push(SandboxPath {
                path: bin.to_path_buf(),
                access: Access::ReadOnly,
                purpose: "the client binary (GANGWAY_BIN) the wrappers run",
            });
        }
        paths
    }

    /// bubblewrap arguments binding [`sandbox_paths`](Self::sandbox_paths)
    /// at their own paths (`--bind` or `--ro-bind`). Put them after the
    /// arguments that set up the sandbox's root and `/tmp`, since a later
    /// mount covers an earlier one. [`Bwrap`] does the whole command line.
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

/// A bubblewrap command line for a sandbox that can call the host's
/// commands and nothing else of the host: the host's root read-only, a
/// fresh `/dev`, `/proc` and `/tmp`, every namespace unshared
/// (`--unshare-all`: no network, its own process ids), killed with its
/// parent, and the paths of [`SandboxEnv::sandbox_paths`] bound in.
///
/// A TCP endpoint keeps the host's network (`--share-net`), since the
/// sandbox must reach it.
#[derive(Debug, Clone)]
#[must_use]
pub struct Bwrap {
    program: PathBuf,
    env: SandboxEnv,
    share_net: bool,
    extra: Vec<OsString>,
}

impl Bwrap {
    /// The sandbox for reaching the host through `env`.
    pub fn new(env: &SandboxEnv) -> Self {
        Bwrap {
            program: PathBuf::from("bwrap"),
            env: env.clone(),
            share_net: matches!(env.endpoint(), Endpoint::Tcp(_)),
            extra: Vec::new(),
        }
    }

    /// The `bwrap` program to run (default: `bwrap` on `PATH`).
    pub fn program(mut self, program: impl Into<PathBuf>) -> Self {
        self.program = program.into();
        self
    }

    /// Keeps the host's network in the sandbox (`--share-net`). Off by
    /// default for a Unix socket, on for a TCP endpoint.
    pub fn share_net(mut self, share: bool) -> Self {
        self.share_net = share;
        self
    }

    /// Binds a host path read-only at the same place (a project directory
    /// to work on, say).
    pub fn ro_bind(self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref().as_os_str().to_owned();
        self.args([OsString::from("--ro-bind"), path.clone(), path])
    }

    /// Binds a host path read-write at the same place.
    pub fn bind(self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref().as_os_str().to_owned();
        self.args([OsString::from("--bind"), path.clone(), path])
    }

    /// Adds bubblewrap arguments of your own, after the defaults and the
    /// host's paths (so a mount here covers theirs).
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.extra
            .extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    /// The command line up to and including `--`, with `bwrap` first: a
    /// prefix for whatever runs inside
    /// (`LaunchSpec::prefix` of the `controller` feature takes it).
    pub fn prefix(&self) -> Vec<OsString> {
        let mut argv: Vec<OsString> = vec![self.program.clone().into_os_string()];
        let fixed: &[&str] = &[
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--unshare-all",
            "--die-with-parent",
        ];
        argv.extend(fixed.iter().map(OsString::from));
        if self.share_net {
            argv.push("--share-net".into());
        }
        argv.extend(self.env.bwrap_args());
        argv.extend(self.extra.iter().cloned());
        argv.push("--".into());
        argv
    }

    /// A command running `program` with `args` in the sandbox, with the
    /// sandbox environment set (`GANGWAY_*` and the wrapper directory first
    /// on `PATH`) and standard input on `/dev/null`.
    ///
    /// Why a null stdin: a sandboxed session that inherits the host's
    /// standard input hands it to every command that reads stdin, which
    /// then waits on the host's terminal or open pipe. Give the session a
    /// terminal of its own (a PTY, as `ShellController` does) or
    /// `/dev/null`; replace it with [`Command::stdin`] to feed it input.
    pub fn command<I, S>(&self, program: impl AsRef<OsStr>, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let prefix = self.prefix();
        let mut command = Command::new(&prefix[0]);
        command.args(&prefix[1..]).arg(program).args(args);
        self.env.apply(&mut command);
        command.stdin(Stdio::null());
        command
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> SandboxEnv {
        SandboxEnv::new(Endpoint::Unix("/run/gw-x/s".into()), "t".into())
            .with_wrapper_dir(Some("/opt/wrappers".into()))
            .with_client_bin(Some("/tmp/build/host".into()))
    }

    fn text(args: &[OsString]) -> Vec<&str> {
        args.iter().map(|a| a.to_str().unwrap()).collect()
    }

    #[test]
    fn the_paths_are_the_socket_directory_the_wrappers_and_the_client() {
        let paths = env().sandbox_paths();
        let listed: Vec<(&Path, Access)> =
            paths.iter().map(|p| (p.path.as_path(), p.access)).collect();
        assert_eq!(
            listed,
            [
                (Path::new("/run/gw-x"), Access::ReadWrite),
                (Path::new("/opt/wrappers"), Access::ReadOnly),
                (Path::new("/tmp/build/host"), Access::ReadOnly),
            ]
        );
        assert_eq!(
            text(&env().bwrap_args()),
            [
                "--bind",
                "/run/gw-x",
                "/run/gw-x",
                "--ro-bind",
                "/opt/wrappers",
                "/opt/wrappers",
                "--ro-bind",
                "/tmp/build/host",
                "/tmp/build/host"
            ]
        );
        // Nothing set, nothing to bind but the socket.
        let bare = SandboxEnv::new(Endpoint::Unix("/s/sock".into()), "t".into());
        assert_eq!(text(&bare.bwrap_args()), ["--bind", "/s", "/s"]);
        let tcp = SandboxEnv::new(Endpoint::Tcp("127.0.0.1:9".parse().unwrap()), "t".into());
        assert!(tcp.sandbox_paths().is_empty());
    }

    #[test]
    fn the_host_paths_come_after_the_fresh_tmp_and_the_network_follows_the_endpoint() {
        let prefix = Bwrap::new(&env()).ro_bind("/work").prefix();
        let prefix = text(&prefix);
        let tmp = prefix.iter().position(|a| *a == "/tmp").unwrap();
        let client = prefix.iter().position(|a| *a == "/tmp/build/host").unwrap();
        assert!(tmp < client, "{prefix:?}");
        assert_eq!(prefix.first(), Some(&"bwrap"));
        assert_eq!(prefix.last(), Some(&"--"));
        assert!(prefix.contains(&"--unshare-all"));
        assert!(!prefix.contains(&"--share-net"));
        assert_eq!(
            &prefix[prefix.len() - 4..],
            ["--ro-bind", "/work", "/work", "--"]
        );

        let tcp = SandboxEnv::new(Endpoint::Tcp("127.0.0.1:9".parse().unwrap()), "t".into());
        assert!(text(&Bwrap::new(&tcp).prefix()).contains(&"--share-net"));
    }
}
