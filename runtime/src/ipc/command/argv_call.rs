//! A call from shell words as a guard would see it, made without a server:
//! the words bound by the command's schema exactly as a call binds them,
//! then shown as the guard is shown them (secrets redacted). What
//! `gangway policy explain` puts to a policy.

use super::argv::{BoundArgv, bind_argv};
use super::router::unknown_command;
use crate::ipc::authority::guard::{CallInfo, shown_args};
use crate::ipc::error::ipc_error::IpcError;
use crate::tool::Manifest;

impl CallInfo {
    /// The call `argv` (the words after the command's name) would make of
    /// `command`, one of `manifest`'s commands, as a [`CallGuard`](crate::ipc::CallGuard)
    /// would see it from `scope`: the words are bound as
    /// [`IpcRouter::dispatch_argv`](crate::ipc::IpcRouter::dispatch_argv)
    /// binds them (`stdin`, piped standard input, filling the command's
    /// stdin argument as it would), and the arguments are shown as a guard
    /// is shown them: secret ones read `"<redacted>"`, bytes their length,
    /// long text cut. `Ok(None)` when the words ask for the command's help
    /// (`-h`, `--help`): such a call prints help and reaches no guard.
    ///
    /// Only the schema is at hand, not the command's type: a value the
    /// schema accepts but the command's own decoding refuses (a number
    /// past its field's range) binds here, though a call would fail
    /// before the guard. A host's scopes are not known either: a command
    /// outside the caller's scope is refused before any guard.
    ///
    /// ```
    /// use gangway::IpcCommand;
    /// use gangway::ipc::{CallInfo, IpcRouter};
    ///
    /// /// Log in.
    /// #[derive(Clone, serde::Serialize, IpcCommand)]
    /// #[ipc(response = String)]
    /// struct Login {
    ///     #[ipc(positional)]
    ///     user: String,
    ///     #[ipc(secret)]
    ///     key: String,
    /// }
    /// impl Login {
    ///     async fn handle(&mut self) -> String { format!("hi {}", self.user) }
    /// }
    ///
    /// let manifest = IpcRouter::new()
    ///     .register(Login { user: String::new(), key: String::new() })
    ///     .manifest();
    /// let call = CallInfo::from_argv(&manifest, Some("agent-1"), "login", &["ann", "--key", "s3cret"], None)
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(call.args(), &serde_json::json!({ "user": "ann", "key": "<redacted>" }));
    ///
    /// let error = CallInfo::from_argv(&manifest, None, "logn", &["ann"], None).unwrap_err();
    /// assert_eq!(error.exit_code(), 2);
    /// assert!(error.to_string().contains("did you mean `login`?"), "{error}");
    /// ```
    ///
    /// # Errors
    ///
    /// What the call would end in before reaching a guard:
    /// [`IpcError::UnknownMethod`] (with the closest command) or
    /// [`IpcError::InvalidName`]; [`IpcError::Usage`] for words that do not
    /// fit the schema (naming the argument and the nearest valid spelling);
    /// [`IpcError::InvalidParams`] for standard input a text argument
    /// cannot take. Each exits [`USAGE`](crate::exit::USAGE).
    pub fn from_argv<S: AsRef<str>>(
        manifest: &Manifest,
        scope: Option<&str>,
        command: &str,
        argv: &[S],
        stdin: Option<Vec<u8>>,
    ) -> Result<Option<CallInfo>, IpcError> {
        let names = || manifest.commands.iter().map(|schema| &*schema.name);
        let schema = match crate::tool::is_valid_command_name(command) {
            true => manifest
                .commands
                .iter()
                .find(|schema| schema.name == command),
            false => None,
        };
        let Some(schema) = schema else {
            return Err(unknown_command(command, names()));
        };
        match bind_argv(schema, command, argv, stdin)? {
            BoundArgv::Help(_) => Ok(None),
            BoundArgv::Params(params) => Ok(Some(CallInfo::new(
                scope,
                command,
                shown_args(&params, schema),
            ))),
        }
    }
}
