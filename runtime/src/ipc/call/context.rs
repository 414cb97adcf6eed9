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

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

#[cfg(feature = "ipc")]
use crate::ipc::authority::guard::Admission;
use crate::ipc::call::cancel::{CallEnded, CancelReason};
#[cfg(not(feature = "ipc"))]
use crate::ipc::call::detached::{CancelWait, ContextState};
use crate::ipc::call::input::InputStream;
#[cfg(feature = "ipc")]
use crate::ipc::call::line::CallLine;
use crate::ipc::call::output_stream::OutputStream;
#[cfg(feature = "ipc")]
use crate::ipc::call::state::{CancelWait, ContextState};
use crate::ipc::error::ipc_error::IpcError;
use crate::tool::ToolSchema;

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
    /// `None`: detached (always, without the `ipc` feature, where
    /// [`ContextState`] is a stand-in with no values).
    shared: Option<Arc<ContextState>>,
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
        self.shared.is_none()
    }

    /// A fresh context for one call, its output, progress and input going
    /// through `line` (none: nowhere); `admission`, when there is one, asks
    /// the guard and keeps what the audit record needs.
    #[cfg(feature = "ipc")]
    pub(crate) fn served(
        line: Option<Arc<dyn CallLine>>,
        admission: Option<Arc<Admission>>,
    ) -> Self {
        CallContext {
            shared: Some(Arc::new(ContextState::new(line, admission))),
        }
    }

    /// Who calls, and what the call's admission saw.
    #[cfg(feature = "ipc")]
    pub(crate) fn admission(&self) -> Option<&Arc<Admission>> {
        self.shared.as_ref()?.admission()
    }

    /// Admits a bound call before its handler runs: its arguments are
    /// recorded and the server's guard asked, unless the call is cancelled
    /// first. `Ok` at once outside a served call.
    pub(crate) async fn admit(
        &self,
        command: &str,
        params: &[u8],
        schema: impl FnOnce() -> Cow<'static, ToolSchema>,
    ) -> Result<(), IpcError> {
        match &self.shared {
            Some(shared) => shared.admit(command, params, schema).await,
            None => Ok(()),
        }
    }

    /// Opens the caller's live input: credit goes to the caller, and the
    /// stream waits for the command in [`take_input`](CallContext::take_input).
    /// `false` when the call has no line to stream from.
    #[cfg(feature = "ipc")]
    pub(crate) fn open_input(&self) -> bool {
        self.shared
            .as_ref()
            .is_some_and(|shared| shared.open_input())
    }

    /// The caller's live standard input, once: what the derive puts in a
    /// stdin argument of type [`InputStream`] before the handler runs, and
    /// what a hand-written command whose
    /// [`STREAMS_STDIN`](crate::ipc::IpcCommand::STREAMS_STDIN) is `true`
    /// calls. `None` when the input was not streamed (it came whole, in
    /// the arguments) or was taken already.
    pub fn take_input(&self) -> Option<InputStream> {
        self.shared.as_ref()?.take_input()
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
        self.write(OutputStream::Stdout, bytes.as_ref()).await
    }

    /// Sends `bytes` to the caller's standard error now, as
    /// [`stdout`](CallContext::stdout) does to its standard output.
    ///
    /// # Errors
    ///
    /// As [`stdout`](CallContext::stdout).
    pub async fn stderr(&self, bytes: impl AsRef<[u8]>) -> Result<(), CallEnded> {
        self.write(OutputStream::Stderr, bytes.as_ref()).await
    }

    async fn write(&self, stream: OutputStream, bytes: &[u8]) -> Result<(), CallEnded> {
        match &self.shared {
            Some(shared) => shared.write(stream, bytes).await,
            None => Ok(()),
        }
    }

    /// Tells the caller how far the call has come: `done` units of `total`
    /// (when known), and what is going on. Never waits: when the caller is
    /// slow, only the latest value is sent. A terminal caller shows it as
    /// a self-updating line on standard error.
    pub fn progress(&self, done: u64, total: Option<u64>, message: impl Into<String>) {
        if let Some(shared) = &self.shared {
            shared.progress(done, total, message.into());
        }
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
        self.shared
            .as_ref()
            .is_some_and(|shared| shared.is_cancelled())
    }

    /// Why the call was cancelled, once it is.
    pub fn cancel_reason(&self) -> Option<CancelReason> {
        self.shared.as_ref()?.cancel_reason()
    }

    /// Completes once the call is cancelled; never for a detached context.
    /// Dropping it unregisters it, so racing it in a loop costs nothing.
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled {
            inner: self
                .shared
                .as_ref()
                .map(|shared| Box::pin(shared.cancelled())),
        }
    }

    /// Cancels the call (the first reason given stays) and wakes whoever
    /// awaits [`cancelled`](CallContext::cancelled).
    #[cfg(feature = "ipc")]
    pub(crate) fn cancel(&self, reason: CancelReason) {
        if let Some(shared) = &self.shared {
            shared.cancel(reason);
        }
    }
}

#[cfg(feature = "ipc")]
tokio::task_local! {
    static CURRENT: CallContext;
}

/// The future [`CallContext::cancelled`] returns.
#[must_use = "a future does nothing unless awaited"]
pub struct Cancelled<'a> {
    inner: Option<Pin<Box<CancelWait<'a>>>>,
}

impl fmt::Debug for Cancelled<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancelled").finish_non_exhaustive()
    }
}

impl Future for Cancelled<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.get_mut().inner {
            Some(inner) => inner.as_mut().poll(cx),
            None => Poll::Pending,
        }
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
            let ctx = CallContext::served(None, None);
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
