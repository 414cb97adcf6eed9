//! The one bounded runner every path that runs a handler goes through (the
//! socket server, and MCP in process): the call's deadline (its command's
//! `#[ipc(timeout)]`, else the server's), the cancel grace a stopped
//! handler gets to finish, and the handler dropped past it. A timeout ends
//! as [`IpcError::TimedOut`] everywhere, so the caller reads the same words
//! and a command line exits 124 whichever way it called.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::time::Sleep;

use crate::ipc::call::cancel::CancelReason;
use crate::ipc::call::context::CallContext;
use crate::ipc::error::ipc_error::IpcError;

/// A timer that may be unset: unset, it never passes (rather than a
/// far-off instant standing in for "never").
#[derive(Default)]
pub(crate) struct Deadline(Option<Pin<Box<Sleep>>>);

impl Deadline {
    /// Passes `limit` from now; never when `limit` is `None`.
    pub(crate) fn after(limit: Option<Duration>) -> Self {
        Deadline(limit.map(|limit| Box::pin(tokio::time::sleep(limit))))
    }

    /// (Re)sets it to pass `limit` from now.
    #[cfg(feature = "mcp")]
    pub(crate) fn set(&mut self, limit: Duration) {
        let at = tokio::time::Instant::now() + limit;
        match &mut self.0 {
            Some(sleep) => sleep.as_mut().reset(at),
            None => self.0 = Some(Box::pin(tokio::time::sleep_until(at))),
        }
    }

    /// Completes once it passes; never while unset.
    pub(crate) async fn passed(&mut self) {
        match &mut self.0 {
            Some(sleep) => sleep.as_mut().await,
            None => std::future::pending().await,
        }
    }
}

/// How long a call may run, and how long it may take to stop.
pub(crate) struct Bounds<'a> {
    /// The command called (for the timeout's message).
    pub(crate) method: &'a str,
    /// The call's timeout: the command's own, else the server's.
    pub(crate) limit: Option<Duration>,
    /// How long a cancelled handler may take to finish.
    pub(crate) grace: Duration,
}

/// How a bounded call ended.
pub(crate) enum Ran<T> {
    /// The handler finished: in time (`stopped` is `None`), or within its
    /// grace after it was stopped.
    Finished {
        outcome: T,
        // Only MCP reports it (a finished call's outcome is its answer on
        // a socket).
        #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
        stopped: Option<CancelReason>,
    },
    /// It ran past its deadline (whatever it did within its grace).
    TimedOut(IpcError),
    /// It was stopped for this reason and did not finish within its grace
    /// (or the host stopped everything first): dropped.
    Dropped(CancelReason),
}

impl Bounds<'_> {
    /// Runs `call` (a handler's future, with `context` its call's context)
    /// until it ends, its deadline passes, its context is cancelled, or
    /// `stop` completes with a reason to cancel it. A stopped handler is
    /// told through its context, then has the grace to finish, unless
    /// `hard_stop` completes first.
    pub(crate) async fn run<F: Future>(
        &self,
        context: &CallContext,
        call: F,
        stop: impl Future<Output = CancelReason>,
        hard_stop: impl Future<Output = ()>,
    ) -> Ran<F::Output> {
        tokio::pin!(call);
        let mut deadline = Deadline::after(self.limit);
        let (reason, by_deadline) = tokio::select! {
            biased;
            outcome = &mut call => return Ran::Finished { outcome, stopped: None },
            () = deadline.passed() => (CancelReason::TimedOut, true),
            () = context.cancelled() => (
                context.cancel_reason().unwrap_or(CancelReason::Interrupted),
                false,
            ),
            reason = stop => (reason, false),
        };
        // The context keeps the first reason it was given (a lapse, a
        // Ctrl-C landing with the deadline); the deadline, once it wins
        // the race, decides the answer all the same: a timeout.
        context.cancel(reason);
        let reason = match by_deadline {
            true => CancelReason::TimedOut,
            false => context.cancel_reason().unwrap_or(reason),
        };
        let finished = tokio::select! {
            biased;
            () = hard_stop => None,
            finished = tokio::time::timeout(self.grace, &mut call) => finished.ok(),
        };
        match (reason, finished) {
            (CancelReason::TimedOut, _) => Ran::TimedOut(IpcError::TimedOut {
                method: self.method.to_owned(),
                after: self.limit.unwrap_or_default(),
            }),
            (_, Some(outcome)) => Ran::Finished {
                outcome,
                stopped: Some(reason),
            },
            (_, None) => Ran::Dropped(reason),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(limit: Option<Duration>) -> Bounds<'static> {
        Bounds {
            method: "work",
            limit,
            grace: Duration::from_secs(1),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_deadline_that_wins_the_race_answers_a_timeout_whatever_else_cancelled() {
        let context = CallContext::served(None, None);
        let limit = Duration::from_millis(10);
        // The handler's own cancel lands in the same instant as the
        // deadline, and first: the context keeps it, the answer does not.
        let call = {
            let context = context.clone();
            async move {
                tokio::time::sleep(limit).await;
                context.cancel(CancelReason::Interrupted);
                std::future::pending::<()>().await;
            }
        };
        let ran = bounds(Some(limit))
            .run(
                &context,
                call,
                std::future::pending(),
                std::future::pending(),
            )
            .await;
        let Ran::TimedOut(error) = ran else {
            panic!("a timeout was expected");
        };
        assert_eq!(error.to_string(), "command `work` timed out after 10ms");
        assert_eq!(context.cancel_reason(), Some(CancelReason::Interrupted));
    }

    #[tokio::test(start_paused = true)]
    async fn a_stopped_handler_finishing_in_its_grace_gives_its_outcome_and_why() {
        let context = CallContext::served(None, None);
        let call = {
            let context = context.clone();
            async move {
                context.cancelled().await;
                tokio::time::sleep(Duration::from_millis(500)).await;
                7
            }
        };
        let stop = async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            CancelReason::CallerGone
        };
        let ran = bounds(None)
            .run(&context, call, stop, std::future::pending())
            .await;
        assert!(matches!(
            ran,
            Ran::Finished {
                outcome: 7,
                stopped: Some(CancelReason::CallerGone)
            }
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn past_its_grace_or_at_a_hard_stop_the_handler_is_dropped() {
        let stop = || async { CancelReason::Interrupted };
        let context = CallContext::served(None, None);
        let ran = bounds(None)
            .run(
                &context,
                std::future::pending::<()>(),
                stop(),
                std::future::pending(),
            )
            .await;
        assert!(matches!(ran, Ran::Dropped(CancelReason::Interrupted)));
        let started = tokio::time::Instant::now();
        let context = CallContext::served(None, None);
        let ran = bounds(None)
            .run(&context, std::future::pending::<()>(), stop(), async {})
            .await;
        assert!(matches!(ran, Ran::Dropped(CancelReason::Interrupted)));
        assert_eq!(started.elapsed(), Duration::ZERO, "no grace at a hard stop");
    }

    #[tokio::test(start_paused = true)]
    async fn a_handler_done_in_time_is_not_stopped_and_an_unset_deadline_never_passes() {
        let context = CallContext::served(None, None);
        let ran = bounds(None)
            .run(
                &context,
                async { 1 },
                std::future::pending(),
                std::future::pending(),
            )
            .await;
        assert!(matches!(
            ran,
            Ran::Finished {
                outcome: 1,
                stopped: None
            }
        ));
        let mut never = Deadline::after(None);
        let waited = tokio::time::timeout(Duration::from_secs(3600), never.passed()).await;
        assert!(waited.is_err());
    }
}
