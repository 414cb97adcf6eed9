//! A call's progress on its way to the client as `notifications/progress`:
//! latest wins (a handler reporting faster than the client reads never
//! queues more than one report), and the last report always goes out
//! before the call's result.

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// One progress report: done, total, message.
pub(super) type Report = (u64, Option<u64>, Option<String>);

/// Where a call's progress reports go, when its request asked for them.
pub(super) struct ProgressRelay {
    reports: watch::Sender<Option<Report>>,
    forwarder: JoinHandle<()>,
}

impl ProgressRelay {
    /// A relay for the request of `context`, or `None` when it carried no
    /// `progressToken` (the client does not want progress).
    pub(super) fn for_request(context: &RequestContext<RoleServer>) -> Option<Self> {
        let token = context.meta.get_progress_token()?;
        let (reports, latest) = watch::channel(None);
        let forwarder = tokio::spawn(forward(token, context.peer.clone(), latest));
        Some(ProgressRelay { reports, forwarder })
    }

    /// Reports progress, replacing a report not sent yet.
    pub(super) fn report(&self, report: Report) {
        self.reports.send_replace(Some(report));
    }

    /// Sends the last report, if any is still waiting, and stops. A client
    /// that does not take it within 5 seconds is not waited for longer.
    pub(super) async fn finish(self) {
        drop(self.reports);
        let abort = self.forwarder.abort_handle();
        if tokio::time::timeout(std::time::Duration::from_secs(5), self.forwarder)
            .await
            .is_err()
        {
            abort.abort();
        }
    }
}

/// Sends each latest report to the client until the relay is finished.
async fn forward(
    token: ProgressToken,
    peer: Peer<RoleServer>,
    mut latest: watch::Receiver<Option<Report>>,
) {
    // `changed` still yields a report sent just before the sender went.
    while latest.changed().await.is_ok() {
        let Some((done, total, message)) = latest.borrow_and_update().clone() else {
            continue;
        };
        #[allow(clippy::cast_precision_loss)]
        let mut param = ProgressNotificationParam::new(token.clone(), done as f64);
        if let Some(total) = total {
            #[allow(clippy::cast_precision_loss)]
            let total = total as f64;
            param = param.with_total(total);
        }
        if let Some(message) = message {
            param = param.with_message(message);
        }
        if peer.notify_progress(param).await.is_err() {
            return;
        }
    }
}
