//! Test hooks: a transport with no process and no tasks, whose messages
//! arrive on a channel, fed the peer's side by hand. Built for this
//! crate's tests and, with the `test-util` feature, for a host's.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::StdioTransport;
use super::builder::StdioBuilder;
use super::outbox::Outbox;
use super::state::TransportState;

impl StdioTransport {
    /// A transport with no process and no background tasks: every message
    /// it sends arrives on `write_tx`'s receiver as one JSON string (no
    /// newline); feed it the peer's side with
    /// [`receive_line`](StdioTransport::receive_line) and
    /// [`receive_close`](StdioTransport::receive_close).
    ///
    /// For tests only, with the `test-util` feature; kept from the seed
    /// API with its signature, `new_for_testing(write_tx, rpc_timeout)`.
    #[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
    pub fn new_for_testing(write_tx: mpsc::UnboundedSender<String>, rpc_timeout: Duration) -> Self {
        StdioTransport::new_for_testing_with(
            write_tx,
            StdioTransport::builder().rpc_timeout(rpc_timeout),
        )
    }

    /// Like [`new_for_testing`](StdioTransport::new_for_testing) with these
    /// options. For tests only, with the `test-util` feature.
    #[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
    pub fn new_for_testing_with(
        write_tx: mpsc::UnboundedSender<String>,
        options: StdioBuilder,
    ) -> Self {
        StdioTransport {
            shared: Arc::new(TransportState::new(
                options,
                Outbox::Testing(write_tx),
                None,
            )),
        }
    }

    /// Handles one line as if the peer had written it. For tests only,
    /// with the `test-util` feature.
    #[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
    pub async fn receive_line(&self, line: &str) {
        self.shared.receive(line.as_bytes()).await;
    }

    /// Acts as if the peer had gone away, for `reason`. For tests only,
    /// with the `test-util` feature.
    #[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
    pub fn receive_close(&self, reason: impl Into<String>) {
        self.shared.close(reason.into());
    }
}
