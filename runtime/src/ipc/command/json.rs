//! Calls made with a JSON object of arguments, as an agent's tool call
//! gives them: bound by the command's schema (the binder shell words go
//! through, with the same checks and "did you mean" messages), then
//! encoded as the command's MessagePack params. JSON has no bytes: a bytes
//! argument takes a string (its UTF-8 bytes) or `{"base64": "..."}`.

use super::argv::encode_params;
use super::router::IpcRouter;
use crate::ipc::error::ipc_error::IpcError;

impl IpcRouter {
    /// Calls a command with a JSON object of arguments (keys are wire
    /// names, aliases or long flags; values are checked against each
    /// argument's type), as an agent's tool call gives them, and returns
    /// the MessagePack-encoded response like
    /// [`dispatch`](IpcRouter::dispatch). A stdin argument is an ordinary
    /// argument here. A bytes argument (`Vec<u8>`, `ByteBuf`, and a stdin
    /// [`InputStream`](crate::ipc::InputStream), which gets the value whole
    /// and then ends) takes a string (its UTF-8 bytes) or, for bytes that
    /// are not text, `{"base64": "..."}` (standard base64 with padding);
    /// the command's JSON Schema offers both.
    ///
    /// ```
    /// use gangway::IpcCommand;
    /// use gangway::ipc::IpcRouter;
    ///
    /// /// Repeat a word.
    /// #[derive(Clone, serde::Serialize, IpcCommand)]
    /// #[ipc(response = String)]
    /// struct Repeat {
    ///     #[ipc(positional)]
    ///     word: String,
    ///     #[ipc(short = 'n', default = 2)]
    ///     times: usize,
    /// }
    /// impl Repeat {
    ///     async fn handle(&mut self) -> String { self.word.repeat(self.times) }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let router = IpcRouter::new().register(Repeat { word: String::new(), times: 0 });
    /// let reply = router
    ///     .dispatch_json("repeat", &serde_json::json!({"word": "ab", "times": 3}))
    ///     .await
    ///     .unwrap();
    /// assert_eq!(rmp_serde::from_slice::<String>(&reply).unwrap(), "ababab");
    ///
    /// let error = router
    ///     .dispatch_json("repeat", &serde_json::json!({"word": "ab", "tims": 3}))
    ///     .await
    ///     .unwrap_err();
    /// assert_eq!(error.to_string(), "repeat: unknown argument `tims`; did you mean `times`?");
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`IpcError::UnknownMethod`]; [`IpcError::Usage`] for arguments that do
    /// not fit the schema (naming the argument and the nearest valid
    /// spelling); then whatever [`dispatch`](IpcRouter::dispatch) returns.
    pub async fn dispatch_json(
        &self,
        method: &str,
        args: &serde_json::Value,
    ) -> Result<Vec<u8>, IpcError> {
        let Some(info) = self.command(method) else {
            return Err(self.unknown_method(method));
        };
        let schema = &info.schema;
        let usage = |error| IpcError::Usage {
            method: method.to_owned(),
            error,
        };
        let args = schema.parse_json(args).map_err(usage)?;
        schema.check_required_json(&args).map_err(usage)?;
        let params = encode_params(schema, &args).map_err(|message| IpcError::InvalidParams {
            method: method.to_owned(),
            message,
        })?;
        self.dispatch(method, &params).await
    }
}
