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
//! Bind only what a sandbox must see. A sandbox that sees the host's whole
//! file system, even read-only, can still connect to every Unix socket on
//! it (a session bus, a container engine's socket) and go through them:
//! read-only does not stop `connect()`. [`Bwrap`] therefore binds the
//! system directories and the listed paths, not `/`.
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

use super::endpoint::Endpoint;
use super::env::SandboxEnv;

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
    ///
    /// The socket directory is bound read-write, so it must be a directory
    /// of its own: the server's private one is (a fresh 0700 directory
    /// holding only the socket); a socket placed straight in `/tmp` or a
    /// runtime directory would expose all of it. Relative paths are made
    /// absolute against the current directory, since a sandbox binds them
    /// at the same place.
    pub fn sandbox_paths(&self) -> Vec<SandboxPath> {
        let mut paths = Vec::with_capacity(3);
        if let Endpoint::Unix(socket) = self.endpoint()
            && let Some(dir) = socket.parent().and_then(absolute)
        {
            paths.push(SandboxPath {
                path: dir,
                access: Access::ReadWrite,
                purpose: "the socket directory: calls connect to the host here",
            });
        }
        if let Some(dir) = self.wrapper_dir().and_then(absolute) {
            paths.push(SandboxPath {
                path: dir,
                access: Access::ReadOnly,
                purpose: "the wrapper directory: one command per host command, first on PATH",
            });
        }
        // The binary alone, not its directory: a build directory holds much
        // more than the client.
        if let Some(bin) = self.client_bin().and_then(absolute) {
            paths.push(SandboxPath {
                path: bin,
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

/// A bubblewrap command line for a sandbox that can run the system's
/// programs and call the host's commands: the system directories (`/usr`,
/// `/etc`, and `/bin`, `/sbin`, `/lib*` as they are on the host, links or
/// directories) read-only; a fresh `/dev`, `/proc` and `/tmp`; every
/// namespace unshared (`--unshare-all`: no network, its own process ids);
/// killed with its parent; working directory `/`; and the paths of
/// [`SandboxEnv::sandbox_paths`] bound in. Nothing else of the host is
/// there: not its home directories, not `/run` or `/var` and the sockets in
/// them. Add what the session should work on with [`ro_bind`](Bwrap::ro_bind)
/// or [`bind`](Bwrap::bind).
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
        if self.share_net {
            argv.push("--share-net".into());
        }
        argv.extend(self.env.bwrap_args());
        argv.extend(self.extra.iter().cloned());
        argv.push("--".into());
        argv
    }

    /// A command running `program` with `args` in the sandbox, in a session
    /// of its own (`--new-session`, so it cannot push keystrokes into the
    /// host's terminal), with standard input on `/dev/null` and a clean
    /// environment: the sandbox variables (`GANGWAY_*`, and `PATH` with the
    /// wrapper directory first, then the system directories), `HOME=/tmp`,
    /// and the host's `TERM`, `LANG`, `LC_ALL` and `TZ` if set. Nothing else
    /// of the host's environment (its credentials among it) goes in; add
    /// what should with [`Command::env`].
    ///
    /// Why a null stdin: a sandboxed session that inherits the host's
    /// standard input hands it to every command that reads stdin, which
    /// then waits on the host's terminal or open pipe. Give the session a
    /// terminal of its own (a PTY, as `ShellController` does, with
    /// [`prefix`](Bwrap::prefix), which leaves the session alone so job
    /// control works) or `/dev/null`; replace it with [`Command::stdin`] to
    /// feed it input.
    pub fn command<I, S>(&self, program: impl AsRef<OsStr>, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let prefix = self.prefix();
        let mut command = Command::new(&prefix[0]);
        command
            .args(&prefix[1..prefix.len() - 1])
            .args(["--new-session", "--"])
            .arg(program)
            .args(args);
        command.env_clear();
        for key in ["TERM", "LANG", "LC_ALL", "TZ"] {
            if let Some(value) = std::env::var_os(key) {
                command.env(key, value);
            }
        }
        command.env("HOME", "/tmp").env(
            "PATH",
            "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
        );
        self.env.apply(&mut command);
        command.stdin(Stdio::null());
        command
    }
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

/// `path` made absolute against the current directory; `None` for an empty
/// path (a socket named without a directory has no directory to bind).
fn absolute(path: &Path) -> Option<PathBuf> {
    if path.as_os_str().is_empty() {
        return None;
    }
    std::path::absolute(path).ok()
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
        let tcp = SandboxEnv::new(Endpoint::Tcp("127.0.0.1:9".parse().unwrap()), "t".into());
        assert!(tcp.sandbox_paths().is_empty());
    }

    #[test]
    fn the_host_paths_come_after_the_fresh_tmp_and_the_network_follows_the_endpoint() {
        let prefix = Bwrap::new(&env()).ro_bind("/work").prefix();
        let prefix = text(&prefix);
        // Never the host's whole root: its sockets would be reachable.
        assert!(
            !prefix.windows(3).any(|w| w == ["--ro-bind", "/", "/"]),
            "{prefix:?}"
        );
        assert!(
            prefix
                .windows(3)
                .any(|w| w == ["--ro-bind", "/usr", "/usr"])
        );
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
