//! [`CallContext`]: what a handler knows about the call it is serving,
//! today whether (and why) it was cancelled: the caller hung up, the call
//! timed out, or the server is shutting down.
//!
//! A handler gets its call's context through a field marked
//! `#[ipc(context)]` (with `#[serde(skip)]`, like `#[ipc(state)]`), or from
//! [`CallContext::current`] in a hand-written `IpcCommand`. Outside a call
//! served by an [`IpcServer`](crate::ipc::IpcServer) (the prototype, an
//! in-process `dispatch`), the context is detached: never cancelled.
//!
//! Std only (an atomic flag and the wakers of those awaiting it), so the
//! type exists whatever features are on; the server sets it for each call.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

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
    /// The server is shutting down.
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

/// The context of one call: see the [module docs](self).
///
/// Cheap to clone; every clone sees the same cancellation. A handler that
/// keeps working after cancellation is dropped once the server's cancel
/// grace has passed (`IpcServerBuilder::cancel_grace`, 2 s by default), so
/// a long loop checks [`is_cancelled`](CallContext::is_cancelled) or races
/// its work against [`cancelled`](CallContext::cancelled) to stop cleanly.
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
    shared: Option<Arc<Shared>>,
}

#[derive(Default)]
struct Shared {
    cancelled: AtomicBool,
    reason: Mutex<Option<CancelReason>>,
    waiters: Mutex<Vec<Waker>>,
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("detached", &self.shared.is_none())
            .field("cancelled", &self.cancel_reason())
            .finish()
    }
}

impl CallContext {
    /// A context that belongs to no call: never cancelled.
    pub fn detached() -> Self {
        CallContext { shared: None }
    }

    /// A fresh context for one call the server runs.
    pub(crate) fn for_call() -> Self {
        CallContext {
            shared: Some(Arc::new(Shared::default())),
        }
    }

    /// The context of the call this task is serving, or a detached one
    /// outside a served call (what a hand-written `IpcCommand` uses).
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
            .is_some_and(|shared| shared.cancelled.load(Ordering::Acquire))
    }

    /// Why the call was cancelled, once it is.
    pub fn cancel_reason(&self) -> Option<CancelReason> {
        *self.shared.as_ref()?.reason.lock_unpoisoned()
    }

    /// Completes once the call is cancelled; never for a detached context.
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled { context: self }
    }

    /// Cancels the call (the first reason given stays) and wakes whoever
    /// awaits [`cancelled`](CallContext::cancelled).
    pub(crate) fn cancel(&self, reason: CancelReason) {
        let Some(shared) = &self.shared else { return };
        {
            let mut kept = shared.reason.lock_unpoisoned();
            if kept.is_none() {
                *kept = Some(reason);
            }
        }
        shared.cancelled.store(true, Ordering::Release);
        for waker in std::mem::take(&mut *shared.waiters.lock_unpoisoned()) {
            waker.wake();
        }
    }
}

#[cfg(feature = "ipc")]
tokio::task_local! {
    static CURRENT: CallContext;
}

/// The future [`CallContext::cancelled`] returns.
#[derive(Debug)]
#[must_use = "a future does nothing unless awaited"]
pub struct Cancelled<'a> {
    context: &'a CallContext,
}

impl Future for Cancelled<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(shared) = &self.context.shared else {
            return Poll::Pending;
        };
        if shared.cancelled.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        {
            let mut waiters = shared.waiters.lock_unpoisoned();
            if !waiters.iter().any(|w| w.will_wake(cx.waker())) {
                waiters.push(cx.waker().clone());
            }
        }
        // Cancelled while registering: the waker may have been taken already.
        if shared.cancelled.load(Ordering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

#[cfg(test)]
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
