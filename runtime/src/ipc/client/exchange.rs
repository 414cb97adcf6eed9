//! What both clients do the same way around the connection: the
//! endpoint from the environment, the hello and the host's answer to it,
//! requests within the host's frame limit, and responses turned into
//! results or errors.

use std::io;

use serde_bytes::ByteBuf;

use super::error::ClientError;
use crate::ipc::command::argv::ArgvOutcome;
use crate::ipc::command::ipc_command::{IpcCommand, Reply};
use crate::ipc::endpoint::Endpoint;
use crate::ipc::error::kind::ErrorKind;
use crate::ipc::exit;
use crate::ipc::protocol::{
    self, ClientFrame, Hello, HostFrame, Request, Response, Welcome, WireError,
};
use crate::sandbox::env::{ENV_ENDPOINT, ENV_TOKEN, ENV_TOKEN_FILE};

/// The endpoint and token from `GANGWAY_ENDPOINT` and `GANGWAY_TOKEN`
/// (or the file `GANGWAY_TOKEN_FILE` names).
pub(super) fn env_endpoint() -> Result<(Endpoint, String), ClientError> {
    let endpoint =
        std::env::var(ENV_ENDPOINT).map_err(|_| ClientError::MissingEnv { var: ENV_ENDPOINT })?;
    let token = env_token()?;
    let endpoint = endpoint.parse().map_err(ClientError::BadEndpoint)?;
    Ok((endpoint, token))
}

/// The token: `GANGWAY_TOKEN` (when set and not empty), else the first
/// line of the file `GANGWAY_TOKEN_FILE` names.
fn env_token() -> Result<String, ClientError> {
    if let Ok(token) = std::env::var(ENV_TOKEN)
        && !token.is_empty()
    {
        return Ok(token);
    }
    let Some(path) = std::env::var_os(ENV_TOKEN_FILE) else {
        return Err(ClientError::MissingEnv { var: ENV_TOKEN });
    };
    let path = std::path::PathBuf::from(path);
    // A token is at most 1 KiB: a larger file is not a token file.
    let mut text = String::new();
    let read = std::fs::File::open(&path)
        .and_then(|file| io::Read::read_to_string(&mut io::Read::take(file, 4096), &mut text));
    match read {
        Ok(_) => Ok(text.lines().next().unwrap_or_default().to_owned()),
        Err(source) if source.kind() == io::ErrorKind::NotFound => {
            Err(ClientError::AccessEnded { token_file: path })
        }
        Err(source) => Err(ClientError::TokenFile { path, source }),
    }
}

/// `error`, or [`ClientError::AccessEnded`] when it is a connection that
/// found no socket, or no one listening, while the token file the
/// environment names is gone: the host removes both when the sandbox's
/// access is revoked or expires.
pub(super) fn ended_access_or(error: ClientError) -> ClientError {
    let gone = |source: &io::Error| {
        matches!(
            source.kind(),
            io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
        )
    };
    match (&error, std::env::var_os(ENV_TOKEN_FILE)) {
        (ClientError::Connect { source, .. }, Some(path))
            if gone(source) && !std::path::Path::new(&path).exists() =>
        {
            ClientError::AccessEnded {
                token_file: path.into(),
            }
        }
        _ => error,
    }
}

/// A call of `method` with nothing else yet; its id is set when it is sent.
fn request(method: &str) -> Request {
    Request {
        id: 0,
        method: method.to_owned(),
        params: None,
        argv: None,
        json: None,
        stdin: None,
        stdin_ready: false,
    }
}

/// The hello frame's body, presenting `token`.
pub(super) fn hello(token: &str) -> Vec<u8> {
    protocol::encode(&Hello {
        v: protocol::VERSION,
        token: token.to_owned(),
    })
}

/// A frame read from the host (its body, or its length in a reused
/// buffer), or why there is none: the connection ended (closed), failed
/// (I/O), or sent something over the limit (protocol).
pub(super) fn frame<T>(read: Result<Option<T>, protocol::FrameError>) -> Result<T, ClientError> {
    match read {
        Ok(Some(body)) => Ok(body),
        Ok(None) => Err(closed()),
        Err(protocol::FrameError::Io(error)) => Err(ClientError::Io(error)),
        Err(error) => Err(ClientError::Protocol(error.to_string())),
    }
}

/// What the host's welcome says.
#[derive(Debug, Clone, Copy)]
pub(super) struct Greeting {
    /// The largest frame the host takes.
    pub(super) max_frame: usize,
    /// How long the host gives a cancelled call.
    pub(super) cancel_grace: Option<std::time::Duration>,
    /// How long the host lets the connection idle.
    pub(super) idle: Option<std::time::Duration>,
}

/// The host's answer to the hello, read whether or not the hello could be
/// sent: a host turning a client away (busy) may answer and close before
/// the hello lands, and its answer is the one worth reporting.
pub(super) fn hello_answer(
    read: Result<Option<Vec<u8>>, protocol::FrameError>,
    sent: io::Result<()>,
) -> Result<Greeting, ClientError> {
    let body = match (read, sent) {
        (Ok(Some(body)), _) => body,
        (_, Err(error)) => return Err(ClientError::Io(error)),
        (read, Ok(())) => frame(read)?,
    };
    welcome(&body)
}

/// The server's answer to the hello: its limits, or why it refused.
fn welcome(body: &[u8]) -> Result<Greeting, ClientError> {
    if let Ok(welcome) = protocol::decode::<Welcome>(body) {
        if welcome.v != protocol::VERSION {
            return Err(ClientError::Version {
                client: protocol::VERSION,
                host: welcome.v,
            });
        }
        return Ok(Greeting {
            max_frame: usize::try_from(welcome.max_frame).unwrap_or(usize::MAX),
            cancel_grace: welcome
                .cancel_grace_ms
                .map(std::time::Duration::from_millis),
            idle: welcome.idle_ms.map(std::time::Duration::from_millis),
        });
    }
    match protocol::decode::<Response>(body) {
        Ok(response) => Err(into_result(response).err().unwrap_or_else(|| {
            ClientError::Protocol("the host answered the hello with a success".to_owned())
        })),
        Err(error) => Err(ClientError::Protocol(format!(
            "the hello's answer does not decode: {error}"
        ))),
    }
}

/// An encoded request, refused when over the host's frame limit.
pub(super) fn checked(body: Vec<u8>, max_frame: usize) -> Result<Vec<u8>, ClientError> {
    if body.len() > max_frame {
        return Err(ClientError::TooLarge {
            bytes: body.len(),
            max: max_frame,
        });
    }
    Ok(body)
}

/// A response's payload, or its error.
pub(super) fn into_result(response: Response) -> Result<Response, ClientError> {
    if response.ok {
        return Ok(response);
    }
    let error = response.error.unwrap_or_else(|| {
        WireError::server(
            ErrorKind::Protocol,
            "a failed response without an error",
            exit::UNAVAILABLE,
        )
    });
    Err(ClientError::Remote(Box::new(error.into())))
}

/// An argv call's answer; `None` when the host asks for standard input.
pub(super) fn argv_outcome(response: Response) -> Result<Option<ArgvOutcome>, ClientError> {
    let response = into_result(response)?;
    if response.needs_stdin {
        return Ok(None);
    }
    match (response.help, response.result) {
        (Some(help), _) => Ok(Some(ArgvOutcome::Help(help))),
        (None, Some(result)) => Ok(Some(ArgvOutcome::Response(result.into_vec()))),
        (None, None) => Err(ClientError::Protocol(
            "a response with neither result nor help".to_owned(),
        )),
    }
}

/// A call of `method` with shell words, and piped standard input if given
/// (or only offered, with `stdin_ready`).
pub(super) fn argv_request<S: AsRef<str>>(
    method: &str,
    argv: &[S],
    stdin: Option<Vec<u8>>,
    stdin_ready: bool,
) -> Request {
    let mut request = request(method);
    request.argv = Some(argv.iter().map(|a| a.as_ref().to_owned()).collect());
    request.stdin = stdin.map(ByteBuf::from);
    request.stdin_ready = stdin_ready;
    request
}

/// A call with a JSON object of arguments, bound by the host.
pub(super) fn json_request(method: &str, args: &serde_json::Value) -> Request {
    let mut request = request(method);
    request.json = Some(args.to_string());
    request
}

/// A call with MessagePack-encoded `params`.
pub(super) fn raw_request(method: &str, params: &[u8]) -> Request {
    let mut request = request(method);
    request.params = Some(ByteBuf::from(params.to_vec()));
    request
}

/// A successful response's MessagePack payload (empty when it has none).
pub(super) fn payload(response: Response) -> Vec<u8> {
    response.result.map(ByteBuf::into_vec).unwrap_or_default()
}

/// The answer to an argv call that did not offer standard input.
pub(super) fn unprompted_argv_outcome(response: Response) -> Result<ArgvOutcome, ClientError> {
    argv_outcome(response)?
        .ok_or_else(|| ClientError::Protocol("the host asked for stdin unprompted".to_owned()))
}

/// A call of a typed command, with itself as the arguments.
pub(super) fn typed_request<C: IpcCommand>(command: &C) -> Result<Request, ClientError> {
    let params = rmp_serde::to_vec_named(command)
        .map_err(|error| ClientError::Protocol(format!("the command does not encode: {error}")))?;
    let mut request = request(&command.name());
    request.params = Some(ByteBuf::from(params));
    Ok(request)
}

/// A typed command's response from the host's answer: a success payload, or
/// a handler failure whose data rebuilds the command's own error value.
pub(super) fn typed<C: IpcCommand>(
    answer: Result<Response, ClientError>,
) -> Result<C::Response, ClientError> {
    let reply = match answer {
        Ok(response) => Reply::Success(response.result.map(ByteBuf::into_vec).unwrap_or_default()),
        Err(ClientError::Remote(remote))
            if remote.kind == ErrorKind::Handler && remote.data.is_some() =>
        {
            Reply::Failure {
                message: remote.message,
                data: remote.data.unwrap_or_default(),
            }
        }
        Err(error) => return Err(error),
    };
    C::decode_reply(&reply)
        .map_err(|error| ClientError::Protocol(format!("the response does not decode: {error}")))
}

pub(super) fn closed() -> ClientError {
    ClientError::Io(io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the connection to the host is closed",
    ))
}

/// A call as the frame that carries it.
pub(super) fn call_frame(request: Request) -> Vec<u8> {
    protocol::encode(&ClientFrame::Call(request))
}

/// A frame from the host after its welcome.
pub(super) fn host_frame(body: &[u8]) -> Result<HostFrame, ClientError> {
    protocol::decode(body).map_err(|error| {
        ClientError::Protocol(format!("a frame from the host does not decode: {error}"))
    })
}

/// The manifest a `list` exchange answers with.
pub(super) fn manifest(response: Response) -> Result<crate::tool::Manifest, ClientError> {
    let json = response.result.map(ByteBuf::into_vec).unwrap_or_default();
    serde_json::from_slice(&json).map_err(|error| {
        ClientError::Protocol(format!(
            "the host's list of commands does not decode: {error}"
        ))
    })
}
