//! A transport's options: [`StdioBuilder`] and what it sets (timeouts,
//! limits, the cancel notice). Starting the transport from them is in
//! `spawn.rs`.

use std::time::Duration;

use tokio::sync::Semaphore;

/// What to tell the peer when a call times out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CancelNotice {
    /// Nothing.
    #[default]
    None,
    /// `$/cancelRequest` with `{"id": id}` (LSP, and ACP agents).
    CancelRequest,
    /// `notifications/cancelled` with `{"requestId": id, "reason": ...}`
    /// (MCP).
    Cancelled,
}

/// Options for a [`StdioTransport`](super::StdioTransport).
#[derive(Debug, Clone)]
#[must_use]
pub struct StdioBuilder {
    pub(super) rpc_timeout: Duration,
    pub(super) max_frame: usize,
    pub(super) write_queue: usize,
    pub(super) max_concurrent_requests: usize,
    pub(super) stderr_tail: usize,
    pub(super) cancel_notice: CancelNotice,
    pub(super) jsonrpc_field: bool,
}

impl Default for StdioBuilder {
    fn default() -> Self {
        StdioBuilder {
            rpc_timeout: Duration::from_secs(60),
            max_frame: 64 * 1024 * 1024,
            write_queue: 256,
            max_concurrent_requests: 64,
            stderr_tail: 64 * 1024,
            cancel_notice: CancelNotice::None,
            jsonrpc_field: true,
        }
    }
}

impl StdioBuilder {
    /// How long a call waits for room in the queue and its response
    /// together (60 seconds by default).
    pub fn rpc_timeout(mut self, timeout: Duration) -> Self {
        self.rpc_timeout = timeout;
        self
    }

    /// The longest line read from the peer (64 MiB by default); a longer
    /// one is dropped and logged.
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes.max(1);
        self
    }

    /// How many requests and notifications may wait to be written (256 by
    /// default); past that, `call` and `notify` wait.
    pub fn write_queue(mut self, messages: usize) -> Self {
        self.write_queue = messages.clamp(1, Semaphore::MAX_PERMITS);
        self
    }

    /// How many of the peer's requests the async handler runs at once (64
    /// by default); past that they wait their turn, and past 16 times that
    /// they are answered [`SERVER_BUSY`](super::SERVER_BUSY) without
    /// running.
    pub fn max_concurrent_requests(mut self, requests: usize) -> Self {
        self.max_concurrent_requests = requests.clamp(1, Semaphore::MAX_PERMITS);
        self
    }

    /// How much of the peer's standard error to keep for
    /// [`RpcError::Closed`](super::RpcError::Closed) (64 KiB by default).
    pub fn stderr_tail(mut self, bytes: usize) -> Self {
        self.stderr_tail = bytes;
        self
    }

    /// What to tell the peer when a call times out (nothing by default).
    pub fn cancel_notice(mut self, notice: CancelNotice) -> Self {
        self.cancel_notice = notice;
        self
    }

    /// Leave `"jsonrpc": "2.0"` out of every message, for peers that reject
    /// it.
    pub fn omit_jsonrpc_field(mut self, omit: bool) -> Self {
        self.jsonrpc_field = !omit;
        self
    }
}
