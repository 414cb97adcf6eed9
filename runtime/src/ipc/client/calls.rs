//! The calls an [`IpcClient`] makes: typed, raw MessagePack, JSON and
//! shell words (with standard input piped, streamed or offered), and the
//! list of what its token may call.

use std::io::{self, Read};

use super::blocking::{IpcClient, Outbound};
use super::error::ClientError;
use super::event::CallEvent;
use super::exchange::{
    argv_outcome, argv_request, json_request, manifest, payload, raw_request, typed, typed_request,
    unprompted_argv_outcome,
};
use crate::ipc::command::argv::ArgvOutcome;
use crate::ipc::command::ipc_command::IpcCommand;
use crate::tool::Manifest;

impl IpcClient {
    /// The commands this client's token may call, as the host's manifest
    /// of them (what `gangway list` prints): a scoped token sees only its
    /// scope's commands.
    ///
    /// # Errors
    ///
    /// As [`call_raw`](IpcClient::call_raw); [`ClientError::Protocol`] when
    /// the host's answer is not a manifest.
    pub fn list(&mut self) -> Result<Manifest, ClientError> {
        manifest(self.exchange_streaming(Outbound::List, &mut None, &mut |_| Ok(()))?)
    }

    /// Calls `method` with MessagePack-encoded `params`; returns the
    /// MessagePack-encoded response.
    ///
    /// # Errors
    ///
    /// [`ClientError::Remote`] for the host's errors; connection errors.
    pub fn call_raw(&mut self, method: &str, params: &[u8]) -> Result<Vec<u8>, ClientError> {
        let response = self.exchange(raw_request(method, params))?;
        Ok(payload(response))
    }

    /// Calls `method` with a JSON object of arguments, as an agent's tool
    /// call gives them; the host binds them by the command's schema (as
    /// [`IpcRouter::dispatch_json`](crate::ipc::IpcRouter::dispatch_json)
    /// does) and returns the MessagePack-encoded response, as an agent reads
    /// it: for a command with an output schema (`#[ipc(output_schema)]`),
    /// the JSON form of its success value (an `IpAddr` as its text).
    ///
    /// # Errors
    ///
    /// [`ClientError::Remote`] for the host's errors (a usage error names
    /// the argument and the nearest spelling); connection errors.
    pub fn call_json(
        &mut self,
        method: &str,
        args: &serde_json::Value,
    ) -> Result<Vec<u8>, ClientError> {
        let response = self.exchange(json_request(method, args))?;
        Ok(payload(response))
    }

    /// Calls a command with itself as the arguments, and decodes its
    /// response. A handler's `Err` comes back as an `Ok(Err(..))` response.
    ///
    /// # Errors
    ///
    /// As [`call_raw`](IpcClient::call_raw), and [`ClientError::Protocol`]
    /// when the response does not decode as `C::Response`.
    pub fn call<C: IpcCommand>(&mut self, command: &C) -> Result<C::Response, ClientError> {
        let request = typed_request(command)?;
        typed::<C>(self.exchange(request))
    }

    /// Calls `method` with shell words and, if given, piped standard input.
    ///
    /// # Errors
    ///
    /// [`ClientError::Remote`] (a usage error has exit code 2); connection
    /// errors.
    pub fn call_argv<S: AsRef<str>>(
        &mut self,
        method: &str,
        argv: &[S],
        stdin: Option<Vec<u8>>,
    ) -> Result<ArgvOutcome, ClientError> {
        let response = self.exchange(argv_request(method, argv, stdin, false))?;
        unprompted_argv_outcome(response)
    }

    /// Calls `method` with shell words, reporting the output and progress
    /// the handler streams to `on_event` as they arrive, then giving the
    /// result (what `gangway call` does).
    ///
    /// `stdin`, when given, is piped input offered to the command: read
    /// whole and sent with the call when the command takes its input
    /// whole (up to the frame limit, as
    /// [`call_argv_piped`](IpcClient::call_argv_piped)), streamed by a
    /// thread as the host asks for it when the command's stdin argument is
    /// an [`InputStream`](crate::ipc::InputStream), and never read when the
    /// call does not take it.
    ///
    /// An error from `on_event` (standard output closed: `cmd | head -1`)
    /// ends the call early: it is returned as [`ClientError::Io`], and
    /// dropping the client tells the host, whose handler sees its writes
    /// fail.
    ///
    /// # Errors
    ///
    /// As [`call_argv_piped`](IpcClient::call_argv_piped).
    pub fn call_argv_streaming<S: AsRef<str>>(
        &mut self,
        method: &str,
        argv: &[S],
        stdin: Option<Box<dyn Read + Send>>,
        on_event: &mut dyn FnMut(CallEvent) -> io::Result<()>,
    ) -> Result<ArgvOutcome, ClientError> {
        let mut stdin = stdin;
        let request = argv_request(method, argv, None, stdin.is_some());
        // A pump takes the input if the host streams it.
        let response = self.exchange_streaming(Outbound::Call(request), &mut stdin, on_event)?;
        if let Some(outcome) = argv_outcome(response)? {
            return Ok(outcome);
        }
        let Some(mut input) = stdin else {
            return Err(ClientError::Protocol(
                "the host asked for stdin unprompted".to_owned(),
            ));
        };
        let room = self.stdin_room(argv);
        let mut bytes = Vec::new();
        input
            .by_ref()
            .take(room as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(ClientError::Stdin)?;
        if bytes.len() > room {
            return Err(ClientError::StdinTooLarge { max: room });
        }
        let request = argv_request(method, argv, Some(bytes), false);
        let response = self.exchange_streaming(Outbound::Call(request), &mut None, on_event)?;
        unprompted_argv_outcome(response)
    }

    /// Room for piped input in one call with these words.
    fn stdin_room<S: AsRef<str>>(&self, argv: &[S]) -> usize {
        self.max_frame()
            .saturating_sub(argv.iter().map(|a| a.as_ref().len() + 8).sum::<usize>() + 1024)
    }

    /// Calls `method` with shell words when standard input is piped but not
    /// yet read: the host answers help, a usage error, or a call that does
    /// not take stdin without it being read; only when the command takes it
    /// is `read_stdin` called and the call sent again with the bytes. This
    /// is what `gangway call` does, so a pipe that never closes only blocks
    /// a command that reads it. `read_stdin` gets the room left in the
    /// frame; it may stop reading one byte past it, which is then refused
    /// as [`ClientError::StdinTooLarge`].
    ///
    /// # Errors
    ///
    /// As [`call_argv`](IpcClient::call_argv), and `read_stdin`'s error.
    pub fn call_argv_piped<S: AsRef<str>>(
        &mut self,
        method: &str,
        argv: &[S],
        read_stdin: impl FnOnce(usize) -> Result<Vec<u8>, ClientError>,
    ) -> Result<ArgvOutcome, ClientError> {
        let response = self.exchange(argv_request(method, argv, None, true))?;
        if let Some(outcome) = argv_outcome(response)? {
            return Ok(outcome);
        }
        // Room for the request around the bytes.
        let room = self.stdin_room(argv);
        let stdin = read_stdin(room)?;
        if stdin.len() > room {
            return Err(ClientError::StdinTooLarge { max: room });
        }
        self.call_argv(method, argv, Some(stdin))
    }
}
