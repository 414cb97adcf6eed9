//! What a sandboxed child needs to reach the host: the endpoint, the token,
//! the client binary, and the wrapper directory first on its `PATH`.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::ipc::endpoint::Endpoint;

/// The environment variable naming the endpoint.
pub const ENV_ENDPOINT: &str = "GANGWAY_ENDPOINT";
/// The environment variable holding the token.
pub const ENV_TOKEN: &str = "GANGWAY_TOKEN";
/// The environment variable naming a file that holds the token, read when
/// [`ENV_TOKEN`] is not set: how a sandbox started from an argv (a
/// [`Bwrap`](crate::ipc::Bwrap) prefix) gets its token, which must never
/// be in an argv (every user of the host can read those).
pub const ENV_TOKEN_FILE: &str = "GANGWAY_TOKEN_FILE";
/// The environment variable naming the client binary the wrappers run.
pub const ENV_BIN: &str = "GANGWAY_BIN";

/// What a child process needs to reach an [`IpcServer`](crate::ipc::IpcServer):
/// `GANGWAY_ENDPOINT`, the token (`GANGWAY_TOKEN`, and the file holding it,
/// `GANGWAY_TOKEN_FILE`, when there is one), `GANGWAY_BIN`, and the wrapper
/// directory prepended to `PATH`.
///
/// ```
/// use gangway::ipc::{Endpoint, SandboxEnv};
///
/// let env = SandboxEnv::new(Endpoint::Unix("/tmp/gangway-x/s".into()), "secret".into())
///     .with_wrapper_dir(Some("/opt/wrappers".into()));
/// let mut child = std::process::Command::new("sh");
/// env.apply(&mut child);
/// let vars: Vec<_> = child.get_envs().collect();
/// assert!(vars.contains(&("GANGWAY_ENDPOINT".as_ref(), Some("unix:/tmp/gangway-x/s".as_ref()))));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct SandboxEnv {
    endpoint: Endpoint,
    token: String,
    token_file: Option<PathBuf>,
    server_dir: Option<PathBuf>,
    client_bin: Option<PathBuf>,
    wrapper_dir: Option<PathBuf>,
}

impl SandboxEnv {
    /// The environment for reaching `endpoint` with `token`.
    pub fn new(endpoint: Endpoint, token: String) -> Self {
        SandboxEnv {
            endpoint,
            token,
            token_file: None,
            server_dir: None,
            client_bin: None,
            wrapper_dir: None,
        }
    }

    /// Names the client binary (`GANGWAY_BIN`).
    #[must_use]
    pub fn with_client_bin(mut self, path: Option<PathBuf>) -> Self {
        self.client_bin = path;
        self
    }

    /// Names the wrapper directory, put first on `PATH`.
    #[must_use]
    pub fn with_wrapper_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.wrapper_dir = dir;
        self
    }

    /// Names a file holding the token (`GANGWAY_TOKEN_FILE`), in a
    /// directory a sandbox may see (it is bound read-only, beside the
    /// socket). The server's environments have one; a sandbox started from
    /// an argv ([`Bwrap::prefix`](crate::ipc::Bwrap::prefix)) needs one.
    #[must_use]
    pub fn with_token_file(mut self, path: Option<PathBuf>) -> Self {
        self.token_file = path;
        self
    }

    /// Names the server's private directory, which holds every scope's
    /// socket and token: no sandbox may see it whole, and
    /// [`Bwrap`](crate::ipc::Bwrap) refuses a bind that would show it.
    #[must_use]
    pub fn with_server_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.server_dir = dir;
        self
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The file holding the token, if there is one.
    pub fn token_file(&self) -> Option<&Path> {
        self.token_file.as_deref()
    }

    /// The server's private directory, if known.
    pub fn server_dir(&self) -> Option<&Path> {
        self.server_dir.as_deref()
    }

    /// The client binary, if known.
    pub fn client_bin(&self) -> Option<&Path> {
        self.client_bin.as_deref()
    }

    /// The wrapper directory, if any.
    pub fn wrapper_dir(&self) -> Option<&Path> {
        self.wrapper_dir.as_deref()
    }

    /// The variables to set, with `PATH` built on `inherited_path`: the
    /// token itself as `GANGWAY_TOKEN`, and the file holding it as
    /// `GANGWAY_TOKEN_FILE` when there is one.
    pub fn vars(&self, inherited_path: Option<&OsStr>) -> Vec<(&'static str, OsString)> {
        let mut vars = self.vars_without_token(inherited_path);
        vars.insert(1, (ENV_TOKEN, OsString::from(&self.token)));
        vars
    }

    /// [`vars`](Self::vars) but the token itself: what may be written in
    /// an argv (`bwrap --setenv`), since the token file carries the token.
    pub(crate) fn vars_without_token(
        &self,
        inherited_path: Option<&OsStr>,
    ) -> Vec<(&'static str, OsString)> {
        let mut vars = vec![(ENV_ENDPOINT, OsString::from(self.endpoint.to_string()))];
        if let Some(file) = &self.token_file {
            vars.push((ENV_TOKEN_FILE, file.clone().into_os_string()));
        }
        if let Some(bin) = &self.client_bin {
            vars.push((ENV_BIN, bin.clone().into_os_string()));
        }
        if let Some(dir) = &self.wrapper_dir {
            let mut dirs = vec![dir.clone()];
            if let Some(path) = inherited_path {
                dirs.extend(std::env::split_paths(path).filter(|d| d != dir));
            }
            if let Ok(path) = std::env::join_paths(dirs) {
                vars.push(("PATH", path));
            }
        }
        vars
    }

    /// Sets the variables on a command about to be spawned
    /// (`std::process::Command` or `tokio::process::Command`). `PATH` starts
    /// with the wrapper directory, then the command's own `PATH` if it set
    /// one, else this process's.
    pub fn apply<C: CommandEnv + ?Sized>(&self, command: &mut C) {
        let inherited = command.explicit_path().or_else(|| std::env::var_os("PATH"));
        for (key, value) in self.vars(inherited.as_deref()) {
            command.set_env(key, &value);
        }
    }
}

// The token is a credential: keep it out of logs.
impl std::fmt::Debug for SandboxEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxEnv")
            .field("endpoint", &self.endpoint)
            .field("token", &"<redacted>")
            .field("token_file", &self.token_file)
            .field("server_dir", &self.server_dir)
            .field("client_bin", &self.client_bin)
            .field("wrapper_dir", &self.wrapper_dir)
            .finish()
    }
}

/// A command whose environment [`SandboxEnv::apply`] can set.
pub trait CommandEnv {
    /// Sets one variable.
    fn set_env(&mut self, key: &str, value: &OsStr);
    /// The `PATH` the command sets explicitly, if it does.
    fn explicit_path(&self) -> Option<OsString>;
}

impl CommandEnv for std::process::Command {
    fn set_env(&mut self, key: &str, value: &OsStr) {
        self.env(key, value);
    }

    fn explicit_path(&self) -> Option<OsString> {
        self.get_envs()
            .find(|(key, _)| *key == "PATH")
            .and_then(|(_, value)| value.map(OsStr::to_os_string))
    }
}

#[cfg(feature = "ipc")]
impl CommandEnv for tokio::process::Command {
    fn set_env(&mut self, key: &str, value: &OsStr) {
        self.env(key, value);
    }

    fn explicit_path(&self) -> Option<OsString> {
        self.as_std().explicit_path()
    }
}

/// The client program wrappers run: `GANGWAY_BIN` if it names an
/// executable file; else, next to the current executable, the statically
/// linked lean client `gangway-client-static` (what
/// `scripts/build-static-client` places; it starts in about a third less
/// time than the dynamic one) unless a `gangway-client` beside it was
/// built after it (a static client left over from before an upgrade), then
/// the lean `gangway-client`, then the `gangway` CLI (which also makes
/// calls); else the same three in each `PATH` directory in turn.
pub fn locate_client_bin() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os(ENV_BIN).map(PathBuf::from)
        && is_executable(&bin)
    {
        return Some(bin);
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    let on_path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default();
    beside.iter().chain(&on_path).find_map(|dir| client_in(dir))
}

/// The client program in `dir`, by [`locate_client_bin`]'s order.
fn client_in(dir: &Path) -> Option<PathBuf> {
    let dynamic = dir.join("gangway-client");
    let built = |path: &Path| {
        std::fs::metadata(path)
            .and_then(|meta| meta.modified())
            .ok()
    };
    let statically = dir.join("gangway-client-static");
    let stale = match (built(&statically), built(&dynamic)) {
        (Some(static_built), Some(dynamic_built)) => {
            static_built < dynamic_built && is_executable(&dynamic)
        }
        _ => false,
    };
    [statically, dynamic, dir.join("gangway")]
        .into_iter()
        .skip(usize::from(stale))
        .find(|path| is_executable(path))
}

/// A regular file someone may execute (what `PATH` lookup accepts).
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_never_shows_the_token() {
        let env = SandboxEnv::new(
            Endpoint::Unix("/tmp/s".into()),
            "hunter2-hunter2-hunter2".into(),
        );
        let shown = format!("{env:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(
            shown.contains("<redacted>") && shown.contains("/tmp/s"),
            "{shown}"
        );
    }

    #[test]
    fn only_executable_files_count_as_the_client() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("gangway");
        std::fs::write(&file, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(!is_executable(&file));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(is_executable(&file));
        assert!(!is_executable(dir.path()));
        assert!(!is_executable(&dir.path().join("missing")));
    }

    /// An executable file at `dir/name`, last modified `seconds` after the
    /// epoch.
    fn program(dir: &Path, name: &str, seconds: u64) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(when)
            .unwrap();
        path
    }

    #[test]
    fn the_static_client_is_preferred_unless_older_than_the_dynamic_one() {
        let dir = tempfile::tempdir().unwrap();
        let cli = program(dir.path(), "gangway", 1_000);
        assert_eq!(client_in(dir.path()), Some(cli));
        let dynamic = program(dir.path(), "gangway-client", 2_000);
        assert_eq!(client_in(dir.path()), Some(dynamic.clone()));
        // Built after the dynamic client: the one to run.
        let statically = program(dir.path(), "gangway-client-static", 3_000);
        assert_eq!(client_in(dir.path()), Some(statically.clone()));
        // The dynamic client rebuilt since (an upgrade): the static one is
        // left over, and passed by.
        program(dir.path(), "gangway-client", 4_000);
        assert_eq!(client_in(dir.path()), Some(dynamic.clone()));
        // With no dynamic client to compare with, the static one serves.
        std::fs::remove_file(&dynamic).unwrap();
        assert_eq!(client_in(dir.path()), Some(statically));
        assert_eq!(client_in(&dir.path().join("missing")), None);
    }
}
