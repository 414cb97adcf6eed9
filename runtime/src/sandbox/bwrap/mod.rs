//! The sandbox profile: what a sandbox sees and may do, as one bubblewrap
//! (`bwrap`) command line ([`Bwrap`], the one place that decides it), and
//! the host paths a sandbox must see to reach the host
//! ([`SandboxEnv::sandbox_paths`]).
//!
//! ```no_run
//! # async fn demo(router: gangway::ipc::IpcRouter) -> Result<(), Box<dyn std::error::Error>> {
//! use gangway::ipc::{Bwrap, IpcServer};
//!
//! let server = IpcServer::builder()
//!     .client_bin(std::env::current_exe()?)
//!     .start(router)
//!     .await?;
//! let mut shell = Bwrap::new(&server.sandbox_env()).command("sh", ["-c", "web_search rust"])?;
//! let status = shell.status()?;
//! # Ok(()) }
//! ```

use std::ffi::{OsStr, OsString};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::ipc::endpoint::Endpoint;
use crate::sandbox::env::SandboxEnv;

mod etc;
mod files;
mod line;
mod paths;
mod seccomp;
mod user_args;
mod userns;

pub use paths::{Access, SandboxPath};
pub use user_args::BwrapError;

/// The first words of a filtered prefix: a shell opens the filter's file
/// as descriptor 8, then becomes bubblewrap, which reads it
/// (`--add-seccomp-fd`) and closes it before the sandboxed program runs.
/// A file gone (a stored prefix outliving it) makes no sandbox, saying so.
const FILTER_SHIM: &str = "filter=$1; shift; \
    if [ ! -r \"$filter\" ]; then \
    echo \"gangway: the sandbox's seccomp filter ($filter) is gone; make its command line \
    again (Bwrap::prefix)\" >&2; exit 126; fi; \
    exec \"$@\" 8<\"$filter\"";

/// A bubblewrap command line for a sandbox that can run the system's
/// programs and call the host's commands, and nothing more. Add what the
/// session should work on with [`ro_bind`](Bwrap::ro_bind) or
/// [`bind`](Bwrap::bind).
///
/// What every sandbox made from it gets:
/// - **No privilege.** `--cap-drop ALL` (a host running as root would
///   otherwise hand its sandbox every capability inside its namespaces:
///   remounting a read-only bind read-write among them), and no user
///   namespace of its own (`--unshare-user --disable-userns` where this
///   bubblewrap and kernel allow it; said once through `tracing`, target
///   `gangway::sandbox`, where they do not).
/// - **A seccomp filter** (see [`seccomp`](Bwrap::seccomp)): the keyrings,
///   `bpf`, `perf_event_open`, `userfaultfd`, `kexec`,
///   `open_by_handle_at`, terminal injection (`TIOCSTI`, `TIOCLINUX`), new
///   user and mount namespaces, `setns` and the mount calls refused;
///   `clone3` and io_uring absent (`ENOSYS`, so programs fall back).
/// - **Little of the host.** The system directories read-only, with what
///   of `/etc` no other user of the host may read (`shadow`, private keys,
///   services' credentials) made unreadable, since a root host's sandbox
///   runs as uid 0, their owner; a fresh `/dev`, `/proc` and `/tmp`; every
///   namespace unshared (no network, its own process ids, so no host
///   process can be named, let alone traced); none of the host's
///   environment (`--clearenv`, or a cleared [`Command`] environment) but
///   `TERM`, `LANG`, `LC_ALL`, `TZ`; from [`command`](Bwrap::command) (and a
///   `LaunchSpec`), none of its file descriptors but the standard three (a
///   runner of [`prefix`](Bwrap::prefix) of your own hands bwrap its own).
/// - **gangway's paths last and read-only:** the scope's own socket
///   directory (connecting works through a read-only bind; renaming,
///   replacing or planting beside the socket does not), the wrapper
///   directory and the client binary, bound after every bind of yours so
///   none covers them. A bind of yours that would reopen one (or the
///   filter's file) read-write, or show the server's private directory,
///   is refused with [`BwrapError::BindCovers`]; an option of yours that
///   would undo the profile (`--cap-add`, joining a namespace, options or
///   binds from a descriptor, `--seccomp`, `--`) with
///   [`BwrapError::Undoes`].
/// - **The real bubblewrap:** `bwrap` is looked up on this process's
///   `PATH` when the sandbox is made, never through the sandbox's (whose
///   first directory is the wrappers').
/// - **The token never in an argv** (which every user of the host can read
///   in `/proc`): a prefix's sandbox reads it from its token file
///   (`GANGWAY_TOKEN_FILE`, in the read-only scope directory).
///
/// Bind only what a sandbox must see: one that sees the host's whole file
/// system, even read-only, can still connect to every Unix socket on it (a
/// session bus, a container engine's socket) and go through them.
///
/// A TCP endpoint keeps the host's network (`--share-net`), since the
/// sandbox must reach it: the sandbox then also reaches every abstract Unix
/// socket of the host's network namespace and every port the host listens
/// on. Prefer the Unix socket.
#[derive(Debug, Clone)]
#[must_use]
pub struct Bwrap {
    program: PathBuf,
    env: SandboxEnv,
    share_net: bool,
    seccomp: bool,
    setenv: Vec<(OsString, OsString)>,
    extra: Vec<OsString>,
}

impl Bwrap {
    /// The sandbox for reaching the host through `env`.
    pub fn new(env: &SandboxEnv) -> Self {
        Bwrap {
            program: PathBuf::from("bwrap"),
            env: env.clone(),
            share_net: matches!(env.endpoint(), Endpoint::Tcp(_)),
            seccomp: true,
            setenv: Vec::new(),
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

    /// Whether the sandbox runs under gangway's seccomp filter (on by
    /// default; filters for x86_64, aarch64 and riscv64).
    ///
    /// Off, the sandbox keeps the kernel's whole surface: the keyrings it
    /// shares with the host's user, `bpf` and `perf_event_open` where the
    /// kernel lets unprivileged users at them, `userfaultfd` (a classic
    /// aid to kernel exploits), pushing keystrokes into a terminal it
    /// shares (`TIOCSTI`), io_uring, and new user namespaces wherever
    /// `--disable-userns` is not available. With the filter, a program
    /// making a system call through a foreign ABI (32-bit x86 on x86_64,
    /// 32-bit Arm on aarch64) is ended: turn it off for such programs.
    pub fn seccomp(mut self, on: bool) -> Self {
        self.seccomp = on;
        self
    }

    /// Sets a variable in the sandbox (`--setenv`). The value is part of
    /// the command line, which every user of the host can read: never a
    /// secret (bind a file holding it instead).
    pub fn setenv(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.setenv.push((key.into(), value.into()));
        self
    }

    /// Binds a host path read-only at the same place (a project directory
    /// to work on, say).
    pub fn ro_bind(self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref().as_os_str().to_owned();
        self.args([OsString::from("--ro-bind"), path.clone(), path])
    }

    /// Binds a host path read-write at the same place. One that holds the
    /// client binary or the wrapper directory is refused when the sandbox
    /// is made (the sandbox could replace what the host runs next): keep
    /// those outside it, or bind it read-only.
    pub fn bind(self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref().as_os_str().to_owned();
        self.args([OsString::from("--bind"), path.clone(), path])
    }

    /// Adds bubblewrap arguments of your own, whole options at a time,
    /// after the defaults and before gangway's own binds (which no mount
    /// of yours may cover). Their binds are checked as
    /// [`bind`](Bwrap::bind)'s are.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.extra
            .extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    /// The command line up to and including `--`: a prefix for whatever
    /// runs inside, self-contained, so any runner can use it
    /// (`LaunchSpec::prefix` of the `controller` feature, or an MCP
    /// client's server configuration). It starts the sandbox from an empty
    /// environment (`--clearenv`) and sets only the sandbox's variables
    /// (the token as its file, `GANGWAY_TOKEN_FILE`: never in the argv).
    /// With the seccomp filter on, it starts with `/bin/sh -c`, which opens
    /// the filter's file as descriptor 8 and becomes `bwrap`. The
    /// first sandbox made with a given `bwrap` program runs it once (a few
    /// milliseconds) to learn whether it can disable user namespaces.
    ///
    /// # Errors
    ///
    /// [`BwrapError::NoTokenFile`] for an environment without a token file
    /// (the server's have one); [`BwrapError::BindCovers`] for a bind over
    /// gangway's paths; [`BwrapError::Seccomp`] when the filter cannot be
    /// made (an unknown architecture) or written.
    pub fn prefix(&self) -> Result<Vec<OsString>, BwrapError> {
        if self.env.token_file().is_none() {
            return Err(BwrapError::NoTokenFile);
        }
        let mut vars = crate::clean_env::in_sandbox();
        vars.extend(
            self.env
                .vars_without_token(Some(OsStr::new(crate::clean_env::SYSTEM_PATH)))
                .into_iter()
                .map(|(key, value)| (OsString::from(key), value)),
        );
        vars.extend(self.setenv.iter().cloned());
        let mut environment = vec![OsString::from("--clearenv")];
        for (key, value) in vars {
            environment.extend([OsString::from("--setenv"), key, value]);
        }
        let profile = self.profile();
        let resolved = line::resolve(&profile)?;
        let bwrap = line::words(&profile, &resolved, &environment, Some(SHIM_FILTER_FD));
        let mut argv = Vec::with_capacity(bwrap.len() + 5);
        if let Some(file) = resolved.filter {
            argv.extend(["/bin/sh", "-c", FILTER_SHIM, "gangway-sandbox"].map(OsString::from));
            argv.push(file.path.into());
        }
        argv.extend(bwrap);
        Ok(argv)
    }

    /// A command running `program` with `args` in the sandbox, in a session
    /// of its own (`--new-session`, so it cannot push keystrokes into the
    /// host's terminal), with standard input on `/dev/null` and a clean
    /// environment: the sandbox variables (`GANGWAY_*`, and `PATH` with the
    /// wrapper directory first, then the system directories), `HOME=/tmp`,
    /// and the host's `TERM`, `LANG`, `LC_ALL` and `TZ` if set. Nothing else
    /// of the host's environment (its credentials among it) goes in; add
    /// what should with [`Command::env`] or [`setenv`](Bwrap::setenv).
    ///
    /// Why a null stdin: a sandboxed session that inherits the host's
    /// standard input hands it to every command that reads stdin, which
    /// then waits on the host's terminal or open pipe. Give the session a
    /// terminal of its own (a PTY, as `ShellController` does, with
    /// [`prefix`](Bwrap::prefix), which leaves the session alone so job
    /// control works) or `/dev/null`; replace it with [`Command::stdin`] to
    /// feed it input.
    ///
    /// With the seccomp filter on, the command holds the filter's file open
    /// and hands it to `bwrap` by its descriptor (no shell in between).
    ///
    /// # Errors
    ///
    /// As [`prefix`](Bwrap::prefix), but an environment without a token
    /// file is served: the token goes in the command's environment.
    pub fn command<I, S>(&self, program: impl AsRef<OsStr>, args: I) -> Result<Command, BwrapError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut environment = Vec::new();
        for (key, value) in &self.setenv {
            environment.extend([OsString::from("--setenv"), key.clone(), value.clone()]);
        }
        let profile = self.profile();
        let resolved = line::resolve(&profile)?;
        // The filter's file, opened here (close-on-exec, so no other child
        // gets it), handed to bwrap by its number: nothing is opened or
        // moved between fork and exec but that flag.
        let filter = match &resolved.filter {
            Some(file) => Some(std::fs::File::open(&file.path).map_err(|error| {
                BwrapError::Seccomp(format!("cannot open {}: {error}", file.path.display()))
            })?),
            None => None,
        };
        let fd = filter.as_ref().map(|file| file.as_raw_fd().to_string());
        let argv = line::words(&profile, &resolved, &environment, fd.as_deref());
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..argv.len() - 1])
            .args(["--new-session", "--"])
            .arg(program)
            .args(args);
        command.env_clear();
        command.envs(crate::clean_env::in_sandbox());
        self.env.apply(&mut command);
        command.stdin(Stdio::null());
        // SAFETY: the hook makes system calls only (async-signal-safe).
        unsafe {
            command.pre_exec(move || {
                crate::clean_env::seal_inherited_fds()?;
                if let Some(file) = &filter {
                    pass_on(file.as_raw_fd())?;
                }
                Ok(())
            });
        }
        Ok(command)
    }

    /// What the command line is made from.
    fn profile(&self) -> line::Profile<'_> {
        line::Profile {
            program: &self.program,
            env: &self.env,
            share_net: self.share_net,
            seccomp: self.seccomp,
            extra: &self.extra,
        }
    }
}

/// The descriptor a prefix's shell opens the filter's file as.
const SHIM_FILTER_FD: &str = "8";

/// Lets `fd` reach the program about to be executed (clears its
/// close-on-exec flag), read from its start, in a child between fork and
/// exec: system calls only. From the start: a command spawned again reads
/// through the same open file.
fn pass_on(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    // SAFETY: `fcntl` and `lseek` on a descriptor the command owns.
    unsafe {
        if libc::fcntl(fd, libc::F_SETFD, 0) < 0 || libc::lseek(fd, 0, libc::SEEK_SET) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
