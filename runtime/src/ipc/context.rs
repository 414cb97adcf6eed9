//! [`CallContext`]: what a handler knows about the call it is serving,
//! today whether (and why) it was cancelled: the caller hung up, the call
//! timed out, or the server stopped.
//!
//! A handler gets its call's context through a field marked
//! `#[ipc(context)]` (with `#[serde(skip)]`, like `#[ipc(state)]`), or from
//! [`CallContext::current`] in a hand-written `IpcCommand`. Outside a call
//! served by an [`IpcServer`](crate::ipc::IpcServer) (the prototype, an
//! in-process `dispatch`), the context is detached: never cancelled.
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
use crate::sync::LockUnpoisoned;

/// Why a call was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CancelReason {
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
}

impl fmt::Display for CancelReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CancelReason::CallerGone => "the caller went away",
            CancelReason::TimedOut => "the call timed out",
            CancelReason::Shutdown => "the server is shutting down",
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
    shared: Option<Arc<Shared>>,
}

#[cfg(feature = "ipc")]
struct Shared {
    token: tokio_util::sync::CancellationToken,
    reason: Mutex<Option<CancelReason>>,
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

    /// A fresh context for one call the server runs.
    #[cfg(feature = "ipc")]
    pub(crate) fn for_call() -> Self {
        CallContext {
            shared: Some(Arc::new(Shared {
                token: tokio_util::sync::CancellationToken::new(),
                reason: Mutex::new(None),
            })),
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
            let ctx = CallContext::for_call();
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
