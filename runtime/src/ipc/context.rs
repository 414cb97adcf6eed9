//! [`CallContext`]: a handler's line to the call it is serving: output
//! streamed to the caller as it is produced (`stdout`, `stderr`, back-
//! pressured), progress (`progress`, latest value wins), the caller's live
//! standard input (`take_input`, for a hand-written command), and whether
//! (and why) the call was cancelled: the caller pressed Ctrl-C or hung up,
//! the call timed out, or the server stopped.
//!
//! A handler gets its call's context through a field marked
//! `#[ipc(context)]` (with `#[serde(skip)]`, like `#[ipc(state)]`), or from
//! [`CallContext::current`] in a hand-written `IpcCommand`. Outside a call
//! served by an [`IpcServer`](crate::ipc::IpcServer) (the prototype, an
//! in-process `dispatch`), the context is detached: writes are discarded,
//! progress goes nowhere, and it is never cancelled.
//!
//! The type exists whatever features are on; without `ipc` there is no
//! server, so every context is detached.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
#[cfg(feature = "ipc")]
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

#[cfg(feature = "ipc")]
use crate::ipc::guard::Admission;
use crate::ipc::input::InputStream;
#[cfg(feature = "ipc")]
use crate::ipc::protocol::OutputStream;
#[cfg(feature = "ipc")]
use crate::ipc::server::CallIo;
#[cfg(feature = "ipc")]
use crate::sync::LockUnpoisoned;

/// Why output could not be sent: the call is over for the handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallEnded {
    reason: CancelReason,
}

impl CallEnded {
    /// Why the call ended.
    pub fn reason(&self) -> CancelReason {
        self.reason
    }
}

impl fmt::Display for CallEnded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the output was not sent: {}", self.reason)
    }
}

impl std::error::Error for CallEnded {}

impl From<CallEnded> for std::io::Error {
    fn from(ended: CallEnded) -> Self {
        std::io::Error::new(std::io::ErrorKind::BrokenPipe, ended)
    }
}

/// Why a call was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CancelReason {
    /// The caller asked: it got SIGINT (Ctrl-C), SIGTERM or SIGHUP, or an
    /// in-process caller gave up on a streaming call.
    Interrupted,
    /// The caller went away (closed the connection: Ctrl-C, a killed
    /// process, `cmd | head` closing early).
    CallerGone,
    /// The call ran past its timeout (`#[ipc(timeout = "...")]`, else the
    /// server's call timeout).
    TimedOut,
    /// The server stopped at its shutdown deadline: the handler itself is
    /// dropped at once, so only work it handed a clone of the context sees
    /// this.
    Shutdown,
    /// The host revoked the sandbox's scope
    /// ([`IpcServer::revoke`](crate::ipc::IpcServer::revoke)).
    Revoked,
    /// The sandbox's scope expired
    /// ([`Scope::expires_in`](crate::ipc::Scope::expires_in)).
    Expired,
}

impl fmt::Display for CancelReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CancelReason::Interrupted => "the caller interrupted it",
            CancelReason::CallerGone => "the caller went away",
            CancelReason::TimedOut => "the call timed out",
            CancelReason::Shutdown => "the server is shutting down",
            CancelReason::Revoked => "the sandbox's access was revoked",
            CancelReason::Expired => "the sandbox's access expired",
        })
    }
}

/// The context of one call: see the module docs of `gangway::ipc`'s
/// `context` (re-exported here as [`CallContext`]).
///
/// Cheap to clone; every clone sees the same cancellation. A handler that
/// keeps working after its caller left or its call timed out is dropped
/// once the server's cancel grace has passed
/// (`IpcServerBuilder::cancel_grace`, 2 s by default), and at once when the
/// server stops; so a long loop checks
/// [`is_cancelled`](CallContext::is_cancelled) or races its work against
/// [`cancelled`](CallContext::cancelled) to stop cleanly.
///
/// ```
/// use gangway::ipc::CallContext;
///
/// # async fn demo() {
/// let ctx = CallContext::detached();
/// assert!(!ctx.is_cancelled());
/// // In a handler: stop when the call is cancelled.
/// tokio::select! {
///     () = ctx.cancelled() => {}
///     () = async {} => {}
/// }
/// # }
/// ```
#[derive(Clone, Default)]
pub struct CallContext {
    /// `None`: detached.
    #[cfg(feature = "ipc")]
    shared: Option<Arc<ContextState>>,
}

/// What the clones of a call's context share: the cancel and its reason, the
/// connection's side, the live input, the admission, and the sink.
#[cfg(feature = "ipc")]
struct ContextState {
    token: tokio_util::sync::CancellationToken,
    reason: Mutex<Option<CancelReason>>,
    /// The connection's side: `None` for a call served without one.
    io: Option<Arc<CallIo>>,
    /// The caller's live input, until the command takes it.
    input: Mutex<Option<InputStream>>,
    /// Who calls, the guard, and what they saw: `None` for a call served
    /// without a server.
    admission: Option<Arc<Admission>>,
    /// Where output and progress go for a call served without a socket
    /// (an MCP request).
    sink: Option<Arc<dyn CallSink>>,
}

/// Where a call served without a socket (an MCP request) sends what its
/// handler writes and reports.
#[cfg(feature = "ipc")]
pub(crate) trait CallSink: Send + Sync {
    /// Output the handler wrote; `false` when no more is taken (the call
    /// is over, or its output is over the limit).
    fn output(&self, stream: OutputStream, bytes: &[u8]) -> bool;
    /// How far the call has come.
    fn progress(&self, done: u64, total: Option<u64>, message: Option<String>);
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("detached", &self.is_detached())
            .field("cancelled", &self.cancel_reason())
            .finish()
    }
}

impl CallContext {
    /// A context that belongs to no call: never cancelled.
    pub fn detached() -> Self {
        CallContext::default()
    }

    /// Whether this context belongs to no call.
    pub fn is_detached(&self) -> bool {
        #[cfg(feature = "ipc")]
        return self.shared.is_none();
        #[cfg(not(feature = "ipc"))]
        true
    }

    /// A fresh context for one call the server runs, with the
    /// connection's side of its traffic.
    #[cfg(feature = "ipc")]
    pub(crate) fn for_call(io: Option<Arc<CallIo>>, admission: Option<Arc<Admission>>) -> Self {
        CallContext {
            shared: Some(Arc::new(ContextState {
                token: tokio_util::sync::CancellationToken::new(),
                reason: Mutex::new(None),
                io,
                input: Mutex::new(None),
                admission,
                sink: None,
            })),
        }
    }

    /// A fresh context for one call served without a socket: its output
    /// and progress go to `sink`; `admission`, when there is one, asks the
    /// guard and keeps what the audit record needs.
    #[cfg(feature = "mcp")]
    pub(crate) fn for_sink(sink: Arc<dyn CallSink>, admission: Option<Arc<Admission>>) -> Self {
        CallContext {
            shared: Some(Arc::new(ContextState {
                token: tokio_util::sync::CancellationToken::new(),
                reason: Mutex::new(None),
                io: None,
                input: Mutex::new(None),
                admission,
                sink: Some(sink),
            })),
        }
    }

    /// Who calls, and what the call's admission saw.
    #[cfg(feature = "ipc")]
    pub(crate) fn admission(&self) -> Option<&Arc<Admission>> {
        self.shared.as_ref()?.admission.as_ref()
    }

    /// Admits a bound call before its handler runs: its arguments are
    /// recorded and the server's guard asked, unless the call is cancelled
    /// first. `Ok` at once outside a served call.
    pub(crate) async fn admit(
        &self,
        command: &str,
        params: &[u8],
        schema: impl FnOnce() -> std::borrow::Cow<'static, crate::tool::ToolSchema>,
    ) -> Result<(), crate::ipc::IpcError> {
        #[cfg(feature = "ipc")]
        if let Some(shared) = &self.shared
            && let Some(admission) = &shared.admission
        {
            if !admission.wants_args() {
                admission.decided(crate::ipc::Decision::Allow);
                return Ok(());
            }
            let schema = schema();
            return tokio::select! {
                biased;
                () = shared.token.cancelled() => Err(crate::ipc::IpcError::Cancelled {
                    method: command.to_owned(),
                }),
                admitted = admission.admit(command, params, &schema) => admitted,
            };
        }
        let _ = (command, params, schema);
        Ok(())
    }

    /// The connection's side of the call.
    #[cfg(feature = "ipc")]
    pub(crate) fn io(&self) -> Option<&Arc<CallIo>> {
        self.shared.as_ref()?.io.as_ref()
    }

    /// Opens the caller's live input: credit goes to the caller, and the
    /// stream waits for the command in [`take_input`](CallContext::take_input).
    /// `false` when the call has no connection to stream from.
    #[cfg(feature = "ipc")]
    pub(crate) fn open_input(&self) -> bool {
        let Some(shared) = &self.shared else {
            return false;
        };
        let Some(io) = &shared.io else { return false };
        let stream = InputStream::live(io.open_input(), io.clone(), shared.token.clone());
        *shared.input.lock_unpoisoned() = Some(stream);
        true
    }

    /// The caller's live standard input, once: what the derive puts in a
    /// stdin argument of type [`InputStream`] before the handler runs, and
    /// what a hand-written command whose
    /// [`STREAMS_STDIN`](crate::ipc::IpcCommand::STREAMS_STDIN) is `true`
    /// calls. `None` when the input was not streamed (it came whole, in
    /// the arguments) or was taken already.
    pub fn take_input(&self) -> Option<InputStream> {
        #[cfg(feature = "ipc")]
        return self.shared.as_ref()?.input.lock_unpoisoned().take();
        #[cfg(not(feature = "ipc"))]
        None
    }

    /// Sends `bytes` to the caller's standard output now, ahead of the
    /// answer and in the order written. Waits while the caller is not
    /// reading (a window of 1 MiB per call is queued at most), so a
    /// producer never outruns its consumer. Discarded when detached.
    ///
    /// # Errors
    ///
    /// [`CallEnded`] once the call is cancelled or its caller is gone: stop
    /// producing.
    pub async fn stdout(&self, bytes: impl AsRef<[u8]>) -> Result<(), CallEnded> {
        #[cfg(feature = "ipc")]
        return self.write(OutputStream::Stdout, bytes.as_ref()).await;
        #[cfg(not(feature = "ipc"))]
        {
            let _ = bytes;
            Ok(())
        }
    }

    /// Sends `bytes` to the caller's standard error now, as
    /// [`stdout`](CallContext::stdout) does to its standard output.
    ///
    /// # Errors
    ///
    /// As [`stdout`](CallContext::stdout).
    pub async fn stderr(&self, bytes: impl AsRef<[u8]>) -> Result<(), CallEnded> {
        #[cfg(feature = "ipc")]
        return self.write(OutputStream::Stderr, bytes.as_ref()).await;
        #[cfg(not(feature = "ipc"))]
        {
            let _ = bytes;
            Ok(())
        }
    }

    #[cfg(feature = "ipc")]
    async fn write(&self, stream: OutputStream, bytes: &[u8]) -> Result<(), CallEnded> {
        if let Some(shared) = &self.shared {
            let ended = || CallEnded {
                reason: self.cancel_reason().unwrap_or(CancelReason::CallerGone),
            };
            let Some(io) = &shared.io else {
                if let Some(sink) = &shared.sink
                    && (shared.token.is_cancelled() || !sink.output(stream, bytes))
                {
                    return Err(ended());
                }
                return Ok(());
            };
            if !io.write(stream, bytes, &shared.token).await {
                return Err(ended());
            }
        }
        Ok(())
    }

    /// Tells the caller how far the call has come: `done` units of `total`
    /// (when known), and what is going on. Never waits: when the caller is
    /// slow, only the latest value is sent. A terminal caller shows it as
    /// a self-updating line on standard error.
    pub fn progress(&self, done: u64, total: Option<u64>, message: impl Into<String>) {
        #[cfg(feature = "ipc")]
        if let Some(shared) = &self.shared {
            let message = message.into();
            let message = (!message.is_empty()).then_some(message);
            if let Some(io) = &shared.io {
                io.progress(done, total, message);
            } else if let Some(sink) = &shared.sink {
                sink.progress(done, total, message);
            }
        }
        #[cfg(not(feature = "ipc"))]
        let _ = (done, total, message.into());
    }

    /// The context of the call this task is serving, or a detached one
    /// outside a served call (what a hand-written `IpcCommand` uses). A task
    /// the handler spawns is outside it: pass it a clone instead.
    pub fn current() -> Self {
        #[cfg(feature = "ipc")]
        if let Ok(context) = CURRENT.try_with(Clone::clone) {
            return context;
        }
        CallContext::detached()
    }

    /// Runs `future` with this context as [`current`](CallContext::current).
    #[cfg(feature = "ipc")]
    pub(crate) fn scope<F: Future>(self, future: F) -> impl Future<Output = F::Output> {
        CURRENT.scope(self, future)
    }

    /// Whether the call is cancelled.
    pub fn is_cancelled(&self) -> bool {
        #[cfg(feature = "ipc")]
        return self
            .shared
            .as_ref()
            .is_some_and(|shared| shared.token.is_cancelled());
        #[cfg(not(feature = "ipc"))]
        false
    }

    /// Why the call was cancelled, once it is.
    pub fn cancel_reason(&self) -> Option<CancelReason> {
        #[cfg(feature = "ipc")]
        return *self.shared.as_ref()?.reason.lock_unpoisoned();
        #[cfg(not(feature = "ipc"))]
        None
    }

    /// Completes once the call is cancelled; never for a detached context.
    /// Dropping it unregisters it, so racing it in a loop costs nothing.
    pub fn cancelled(&self) -> Cancelled<'_> {
        #[cfg(feature = "ipc")]
        return Cancelled {
            inner: self
                .shared
                .as_ref()
                .map(|shared| Box::pin(shared.token.cancelled())),
        };
        #[cfg(not(feature = "ipc"))]
        Cancelled {
            _context: std::marker::PhantomData,
        }
    }

    /// Cancels the call (the first reason given stays) and wakes whoever
    /// awaits [`cancelled`](CallContext::cancelled).
    #[cfg(feature = "ipc")]
    pub(crate) fn cancel(&self, reason: CancelReason) {
        let Some(shared) = &self.shared else { return };
        {
            let mut kept = shared.reason.lock_unpoisoned();
            if kept.is_none() {
                *kept = Some(reason);
            }
        }
        shared.token.cancel();
    }
}

#[cfg(feature = "ipc")]
tokio::task_local! {
    static CURRENT: CallContext;
}

/// The future [`CallContext::cancelled`] returns.
#[must_use = "a future does nothing unless awaited"]
pub struct Cancelled<'a> {
    #[cfg(feature = "ipc")]
    inner: Option<Pin<Box<tokio_util::sync::WaitForCancellationFuture<'a>>>>,
    #[cfg(not(feature = "ipc"))]
    _context: std::marker::PhantomData<&'a CallContext>,
}

impl fmt::Debug for Cancelled<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancelled").finish_non_exhaustive()
    }
}

impl Future for Cancelled<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        #[cfg(feature = "ipc")]
        if let Some(inner) = &mut self.get_mut().inner {
            return inner.as_mut().poll(_cx);
        }
        Poll::Pending
    }
}

#[cfg(all(test, feature = "ipc"))]
mod tests {
    use super::*;

    #[test]
    fn a_detached_context_is_never_cancelled_and_a_call_context_wakes_its_waiters() {
        let detached = CallContext::detached();
        detached.cancel(CancelReason::TimedOut);
        assert!(!detached.is_cancelled());
        assert_eq!(detached.cancel_reason(), None);

        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let ctx = CallContext::for_call(None, None);
            let waiter = tokio::spawn({
                let ctx = ctx.clone();
                async move {
                    ctx.cancelled().await;
                    ctx.cancel_reason()
                }
            });
            tokio::task::yield_now().await;
            assert!(!ctx.is_cancelled());
            ctx.cancel(CancelReason::CallerGone);
            ctx.cancel(CancelReason::TimedOut);
            assert_eq!(waiter.await.unwrap(), Some(CancelReason::CallerGone));
            assert!(ctx.is_cancelled());
        });
    }
}
