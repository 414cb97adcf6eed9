//! Running one call: plan it (help, or a request for standard input, come
//! back without a call; a command that streams its input starts at once
//! and asks for the input as it goes), dispatch it to the router within the
//! call timeout, and answer with its result or its error, encoded and
//! within the frame limit.

use std::time::Duration;

use serde_bytes::ByteBuf;

use super::grants::{Grant, Lapse};
use super::outbox::answer_body;
use super::state::ServerState;
use crate::ipc::authority::audit::AuditOutcome;
use crate::ipc::authority::guard::Decision;
use crate::ipc::call::bounded::{Bounds, Ran};
use crate::ipc::call::cancel::CancelReason;
use crate::ipc::call::context::CallContext;
use crate::ipc::command::argv::{ArgvOutcome, ArgvPlan};
use crate::ipc::command::router::IpcRouter;
use crate::ipc::error::ipc_error::IpcError;
use crate::ipc::error::kind::ErrorKind;
use crate::ipc::exit;
use crate::ipc::protocol::{Request, Response, WireError};

/// A call's encoded answer, and how the call ended (`None` for an answer
/// asking for standard input: the call is made again with it), with the
/// exit code the answer gives the caller (`None` when the caller stopped
/// the call and exits as it chooses).
pub(super) struct Answered {
    pub(super) body: Vec<u8>,
    pub(super) ended: Option<(AuditOutcome, Option<i32>)>,
}

/// Runs one call and encodes its response; a response over the frame limit
/// is answered with a `response_too_large` error instead.
pub(super) async fn answer(
    shared: &ServerState,
    grant: &Grant,
    request: Request,
    context: CallContext,
) -> Answered {
    let watched = context.clone();
    let response = respond(shared, grant, request, context).await;
    let id = response.id;
    // A handler that honours its caller's cancel still answers, with what
    // it had or with an error: the call was cancelled all the same, and
    // the caller exits as its signal says. (A panic stays a panic.)
    let stopped_by_caller = watched.cancel_reason() == Some(CancelReason::Interrupted)
        && response
            .error
            .as_ref()
            .is_none_or(|error| error.kind == ErrorKind::Handler);
    let ended = ending(&response).map(|(outcome, exit)| {
        if stopped_by_caller {
            (AuditOutcome::Cancelled, None)
        } else {
            (outcome, Some(exit))
        }
    });
    // Only the encoded answer waits for room in the queue.
    let body = answer_body(response);
    if body.len() <= shared.max_frame {
        return Answered { body, ended };
    }
    let error = WireError::server(
        ErrorKind::ResponseTooLarge,
        format!(
            "the response is {} bytes, over the {}-byte frame limit",
            body.len(),
            shared.max_frame
        ),
        exit::FAILURE,
    );
    Answered {
        body: answer_body(Response::failure(id, error)),
        ended: Some((AuditOutcome::Error, Some(exit::FAILURE))),
    }
}

/// How a response ends its call, for the audit record.
fn ending(response: &Response) -> Option<(AuditOutcome, i32)> {
    if response.needs_stdin {
        return None;
    }
    let Some(error) = &response.error else {
        return Some((AuditOutcome::Ok, exit::OK));
    };
    Some((AuditOutcome::of_error(&error.kind), error.exit))
}

/// Refuses a call its grant does not allow, before anything of it is
/// decoded: `None` when it may go on.
fn refusal(
    shared: &ServerState,
    grant: &Grant,
    method: &str,
    context: &CallContext,
) -> Option<IpcError> {
    let deny = |reason: &str| {
        if let Some(admission) = context.admission() {
            admission.decided(Decision::Deny(reason.to_owned()));
        }
        Some(IpcError::Denied {
            command: method.to_owned(),
            reason: reason.to_owned(),
        })
    };
    if let Some(lapse) = grant.lapse() {
        return deny(lapse.reason());
    }
    let allowed = grant.commands()?;
    if allowed.contains(method) {
        return None;
    }
    if shared.router.contains(method) {
        return deny("not available in this sandbox");
    }
    // Suggest only what the sandbox may call.
    Some(IpcError::UnknownMethod {
        method: method.to_owned(),
        suggestion: crate::tool::closest(method, allowed.iter().map(String::as_str))
            .map(str::to_owned),
    })
}

/// What a successful call answers.
enum Answer {
    Result(Vec<u8>),
    Help(String),
    NeedsStdin,
}

impl From<ArgvOutcome> for Answer {
    fn from(outcome: ArgvOutcome) -> Self {
        match outcome {
            ArgvOutcome::Response(bytes) => Answer::Result(bytes),
            ArgvOutcome::Help(text) => Answer::Help(text),
        }
    }
}

/// Runs one call with `context` as its [`CallContext`], within its timeout:
/// the command's own, else the server's. Past it the context is cancelled,
/// the handler gets the cancel grace to finish, and the answer is a
/// `timeout` error (exit 124).
async fn respond(
    shared: &ServerState,
    grant: &Grant,
    request: Request,
    context: CallContext,
) -> Response {
    let id = request.id;
    if let Err(error) = admit(shared, grant, &request, &context) {
        return Response::failure(id, wire_error(error));
    }
    let method = request.method.clone();
    let info = shared.router.command(&method);
    let limit = info.and_then(|info| info.timeout).or(shared.call_timeout);
    let streams_stdin = info.is_some_and(|info| info.streams_stdin);
    let call = context
        .clone()
        .scope(dispatch(shared, request, streams_stdin, &context));
    let outcome = match within_limits(shared, &context, call, limit, &method).await {
        Ok(outcome) => outcome,
        Err(error) => return Response::failure(id, error),
    };
    // However the handler ended, a call whose access lapsed is answered as
    // denied.
    if let Some(lapse) = lapse_of(&context) {
        return Response::failure(id, lapse.error());
    }
    let mut response = Response::success(id);
    match outcome {
        Ok(Answer::Result(bytes)) => response.result = Some(ByteBuf::from(bytes)),
        Ok(Answer::Help(text)) => response.help = Some(text),
        Ok(Answer::NeedsStdin) => response.needs_stdin = true,
        Err(error) => return Response::failure(id, wire_error(error)),
    }
    response
}

/// Whether the call may be made as it came: a name that can be a
/// command's (checked before any look-up, and so before any "did you
/// mean"), one the caller's scope allows, and its arguments given one way.
fn admit(
    shared: &ServerState,
    grant: &Grant,
    request: &Request,
    context: &CallContext,
) -> Result<(), IpcError> {
    let method = &request.method;
    if !crate::tool::is_valid_command_name(method) {
        return Err(IpcError::invalid_name(method));
    }
    if let Some(error) = refusal(shared, grant, method, context) {
        return Err(error);
    }
    let kinds = [
        request.params.is_some(),
        request.argv.is_some(),
        request.json.is_some(),
    ];
    if kinds.into_iter().filter(|given| *given).count() > 1 {
        return Err(IpcError::InvalidParams {
            method: method.clone(),
            message: "a call carries its arguments one way: `params`, `argv` or `json`, \
                      not several"
                .to_owned(),
        });
    }
    Ok(())
}

/// Dispatches the call the way its arguments came: shell words (with
/// standard input given, or only offered), JSON, or MessagePack.
async fn dispatch(
    shared: &ServerState,
    request: Request,
    streams_stdin: bool,
    context: &CallContext,
) -> Result<Answer, IpcError> {
    let router = &shared.router;
    let method = request.method;
    match request.argv {
        Some(argv) if request.stdin.is_none() && request.stdin_ready => {
            dispatch_offered(router, &method, &argv, streams_stdin, context).await
        }
        Some(argv) => router
            .dispatch_argv(&method, &argv, request.stdin.map(ByteBuf::into_vec))
            .await
            .map(Answer::from),
        None if request.json.is_some() => {
            let text = request.json.unwrap_or_default();
            match serde_json::from_str::<serde_json::Value>(&text) {
                // Answered as an agent reads it (see `call_json`).
                Ok(args) => router
                    .dispatch_json(&method, &args)
                    .await
                    .map(|reply| Answer::Result(router.structured_reply(&method, reply))),
                Err(error) => Err(IpcError::InvalidParams {
                    method,
                    message: format!("the JSON arguments do not parse: {error}"),
                }),
            }
        }
        None => {
            let params = request.params.map(ByteBuf::into_vec).unwrap_or_default();
            router.dispatch(&method, &params).await.map(Answer::Result)
        }
    }
}

/// Shell words with standard input offered but not yet read: it is read
/// only if the command will take it (help, a usage error, or an explicit
/// value means it will not).
async fn dispatch_offered(
    router: &IpcRouter,
    method: &str,
    argv: &[String],
    streams_stdin: bool,
    context: &CallContext,
) -> Result<Answer, IpcError> {
    match router.plan_argv(method, argv)? {
        // The input streams as the handler reads it: the call starts now,
        // its stdin argument an empty placeholder the live stream replaces.
        ArgvPlan::NeedsStdin if streams_stdin && context.open_input() => router
            .dispatch_argv(method, argv, Some(Vec::new()))
            .await
            .map(Answer::from),
        ArgvPlan::NeedsStdin => Ok(Answer::NeedsStdin),
        ArgvPlan::Help(text) => Ok(Answer::Help(text)),
        _ => router
            .dispatch_argv(method, argv, None)
            .await
            .map(Answer::from),
    }
}

/// Runs `call` within its bounds: past its deadline it is a `timeout`
/// (exit 124); cancelled (the caller's Ctrl-C, or its scope lapsing) and
/// not finished within the cancel grace, it is answered as cancelled, or
/// as denied when its access lapsed.
async fn within_limits<F: Future>(
    shared: &ServerState,
    context: &CallContext,
    call: F,
    limit: Option<Duration>,
    method: &str,
) -> Result<F::Output, WireError> {
    let bounds = Bounds {
        method,
        limit,
        grace: shared.cancel_grace,
    };
    // A caller gone is the connection's to end: only the context stops it.
    let stop = std::future::pending();
    match bounds
        .run(context, call, stop, shared.hard.cancelled())
        .await
    {
        Ran::Finished { outcome, .. } => Ok(outcome),
        Ran::TimedOut(error) => Err(wire_error(error)),
        Ran::Dropped(reason) if let Some(lapse) = lapse_for(reason) => Err(lapse.error()),
        Ran::Dropped(_) => Err(wire_error(IpcError::Cancelled {
            method: method.to_owned(),
        })),
    }
}

/// A command's error as it travels.
fn wire_error(error: IpcError) -> WireError {
    let mut wire = WireError::server(error.kind(), error.to_string(), error.exit_code());
    match error {
        IpcError::Usage { error, .. } => {
            wire.argument = error.argument_name().map(str::to_owned);
            wire.suggestion = error.suggestion().map(str::to_owned);
        }
        IpcError::UnknownMethod { suggestion, .. } => wire.suggestion = suggestion,
        IpcError::Handler { data, .. } => wire.data = Some(ByteBuf::from(data)),
        _ => {}
    }
    wire
}

/// The lapse a call was cancelled for, if its access lapsed under it.
fn lapse_of(context: &CallContext) -> Option<Lapse> {
    lapse_for(context.cancel_reason()?)
}

/// The lapse a cancel `reason` stands for, if it is one.
fn lapse_for(reason: CancelReason) -> Option<Lapse> {
    match reason {
        CancelReason::Revoked => Some(Lapse::Revoked),
        CancelReason::Expired => Some(Lapse::Expired),
        _ => None,
    }
}
