//! What to run: the program, its arguments and environment, and how it is
//! wrapped (a sandbox prefix, the host's [`SandboxEnv`]).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

#[cfg(feature = "ipc")]
use crate::ipc::SandboxEnv;

/// What a controller runs, kept so that a forced
/// [`start`](super::Controller::start) can run it again.
///
/// ```
/// use gangway::controller::LaunchSpec;
///
/// let spec = LaunchSpec::new("python3")
///     .args(["-m", "http.server"])
///     .env("PYTHONUNBUFFERED", "1")
///     .cwd("/srv")
///     .prefix(["bwrap", "--ro-bind", "/", "/", "--unshare-net", "--"]);
/// assert_eq!(spec.argv()[0], "bwrap");
/// assert_eq!(spec.argv().last().unwrap(), "http.server");
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct LaunchSpec {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    cwd: Option<PathBuf>,
    #[cfg(feature = "ipc")]
    sandbox: Option<SandboxEnv>,
    prefix: Vec<OsString>,
    stop_grace: Duration,
    output_tail: usize,
}

impl LaunchSpec {
    /// Runs `program` (looked up on `PATH`).
    pub fn new(program: impl Into<OsString>) -> Self {
        LaunchSpec {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            #[cfg(feature = "ipc")]
            sandbox: None,
            prefix: Vec::new(),
            stop_grace: Duration::from_secs(5),
            output_tail: 256 * 1024,
        }
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable: on top of the host's environment, or,
    /// once a [`prefix`](LaunchSpec::prefix) or a sandbox environment is
    /// set, of the clean one the process then starts from. Under a
    /// `Bwrap` prefix it reaches `bwrap`, not the sandbox, which starts
    /// from an empty environment: give the sandbox a variable with
    /// `Bwrap::setenv`.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The working directory.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Gives the process what it needs to reach an
    /// [`IpcServer`](crate::ipc::IpcServer): endpoint, token, client binary,
    /// and the wrapper directory first on `PATH`. The process then starts
    /// from a clean environment, not the host's (see
    /// [`env_vars`](LaunchSpec::env_vars)).
    #[cfg(feature = "ipc")]
    #[cfg_attr(docsrs, doc(cfg(feature = "ipc")))]
    pub fn sandbox_env(mut self, env: &SandboxEnv) -> Self {
        self.sandbox = Some(env.clone());
        self
    }

    /// Runs the program under this argv prefix (say `bwrap ... --`, as
    /// `Bwrap::prefix` writes it): the prefix's first word is what is
    /// executed, the program and its arguments follow the prefix. The
    /// process then starts from a clean environment, not the host's (see
    /// [`env_vars`](LaunchSpec::env_vars)): a sandbox runner must not be
    /// handed the host's credentials.
    pub fn prefix<I, S>(mut self, prefix: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.prefix = prefix.into_iter().map(Into::into).collect();
        self
    }

    /// How long a graceful [`stop`](super::Controller::stop) waits before
    /// killing (5 seconds by default).
    pub fn stop_grace(mut self, grace: Duration) -> Self {
        self.stop_grace = grace;
        self
    }

    /// How much recent output the controller keeps (256 KiB by default).
    pub fn output_tail(mut self, bytes: usize) -> Self {
        self.output_tail = bytes;
        self
    }

    /// The whole command line: the prefix, the program, its arguments.
    pub fn argv(&self) -> Vec<OsString> {
        let mut argv = self.prefix.clone();
        argv.push(self.program.clone());
        argv.extend(self.args.iter().cloned());
        argv
    }

    /// Whether the process starts from a clean environment rather than the
    /// host's: once a prefix or a sandbox environment is set.
    pub fn clears_env(&self) -> bool {
        #[cfg(feature = "ipc")]
        if self.sandbox.is_some() {
            return true;
        }
        !self.prefix.is_empty()
    }

    /// The variables set on the process. Without a prefix or a sandbox
    /// environment, the spec's own, on top of the host's environment.
    /// With either, the whole environment, as `Bwrap::command` makes it:
    /// the host's `TERM`, `LANG`, `LC_ALL`, `TZ` and `HOME` if set (`HOME`
    /// stays the host's: the process runs on the host, where `/tmp` is
    /// anyone's to write), `PATH` on the system directories; then the
    /// spec's own; then the sandbox environment's (with `PATH` led by the
    /// wrapper directory, built on the spec's `PATH` if it sets one). Such
    /// a process also gets none of the host's file descriptors but the
    /// standard three.
    pub fn env_vars(&self) -> Vec<(OsString, OsString)> {
        if !self.clears_env() {
            return self.env.clone();
        }
        #[cfg_attr(not(feature = "ipc"), allow(unused_mut))]
        let mut vars = crate::clean_env::on_host();
        vars.extend(self.env.iter().cloned());
        #[cfg(feature = "ipc")]
        if let Some(sandbox) = &self.sandbox {
            let path = vars
                .iter()
                .rev()
                .find(|(key, _)| key == "PATH")
                .map(|(_, value)| value.clone());
            for (key, value) in sandbox.vars(path.as_deref()) {
                vars.push((OsString::from(key), value));
            }
        }
        vars
    }

    pub(crate) fn working_dir(&self) -> Option<&PathBuf> {
        self.cwd.as_ref()
    }

    pub(crate) fn grace(&self) -> Duration {
        self.stop_grace
    }

    pub(crate) fn tail_bytes(&self) -> usize {
        self.output_tail
    }

    /// The executable's name, for errors.
    pub(crate) fn shown_program(&self) -> String {
        self.argv()
            .first()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// A tokio command for this spec, with nothing about its stdio set.
    pub(crate) fn command(&self) -> tokio::process::Command {
        let argv = self.argv();
        let mut command = tokio::process::Command::new(&argv[0]);
        command.args(&argv[1..]);
        if self.clears_env() {
            command.env_clear();
            // SAFETY: the hook makes system calls only (async-signal-safe).
            unsafe {
                command.pre_exec(crate::clean_env::seal_inherited_fds);
            }
        }
        for (key, value) in self.env_vars() {
            command.env(key, value);
        }
        if let Some(dir) = &self.cwd {
            command.current_dir(dir);
        }
        command
    }
}

#[cfg(all(test, feature = "ipc"))]
mod tests {
    use super::*;
    use crate::ipc::Endpoint;

    #[test]
    fn the_sandbox_path_leads_with_the_wrappers_on_the_specs_own_path() {
        let sandbox = SandboxEnv::new(Endpoint::Unix("/tmp/s".into()), "0123456789abcdef".into())
            .with_wrapper_dir(Some("/opt/wrappers".into()));
        let spec = LaunchSpec::new("sh")
            .env("PATH", "/usr/bin:/bin")
            .sandbox_env(&sandbox);
        let vars = spec.env_vars();
        let path = vars
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .unwrap();
        assert_eq!(path, "/opt/wrappers:/usr/bin:/bin");
        assert!(
            vars.iter()
                .any(|(k, v)| k == "GANGWAY_ENDPOINT" && v == "unix:/tmp/s")
        );
    }

    #[test]
    fn a_prefix_or_a_sandbox_starts_the_process_from_a_clean_environment() {
        let plain = LaunchSpec::new("sh").env("A", "1");
        assert!(!plain.clears_env());
        assert_eq!(plain.env_vars(), [("A".into(), "1".into())]);
        let sandbox = SandboxEnv::new(Endpoint::Unix("/tmp/s".into()), "0123456789abcdef".into());
        let kept = [
            "TERM",
            "LANG",
            "LC_ALL",
            "TZ",
            "HOME",
            "PATH",
            "A",
            "GANGWAY_ENDPOINT",
            "GANGWAY_TOKEN",
        ];
        for spec in [
            plain.clone().prefix(["bwrap", "--"]),
            plain.clone().sandbox_env(&sandbox),
        ] {
            assert!(spec.clears_env());
            let vars = spec.env_vars();
            for (key, _) in &vars {
                assert!(kept.contains(&key.to_str().unwrap()), "{key:?} in {vars:?}");
            }
            // HOME stays the host's: this process runs on the host.
            let home = std::env::var_os("HOME");
            assert_eq!(
                vars.iter()
                    .find(|(key, _)| key == "HOME")
                    .map(|(_, v)| v.clone()),
                home
            );
            assert!(vars.contains(&("A".into(), "1".into())));
        }
    }
}
