//! [`ContextState`]: what the clones of one served call's context share
//! (the cancel and its reason, the line to whoever serves the call, the
//! live input, the admission), and the operations the context's methods
//! are written over. Without the `ipc` feature, `detached.rs` stands in.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use crate::ipc::authority::guard::{Admission, Decision};
use crate::ipc::call::cancel::{CallEnded, CancelReason};
use crate::ipc::call::input::InputStream;
use crate::ipc::call::line::CallLine;
use crate::ipc::call::output_stream::OutputStream;
use crate::ipc::error::ipc_error::IpcError;
use crate::sync::LockUnpoisoned;
use crate::tool::ToolSchema;

/// The future [`ContextState::cancelled`] returns.
pub(crate) type CancelWait<'a> = WaitForCancellationFuture<'a>;

/// What the clones of a call's context share.
pub(crate) struct ContextState {
    token: CancellationToken,
    reason: Mutex<Option<CancelReason>>,
    /// Whoever serves the call: `None` for a call served without output
    /// going anywhere.
    line: Option<Arc<dyn CallLine>>,
    /// The caller's live input, until the command takes it.
    input: Mutex<Option<InputStream>>,
    /// Who calls, the guard, and what they saw: `None` for a call served
    /// without a server.
    admission: Option<Arc<Admission>>,
}

impl ContextState {
    pub(crate) fn new(line: Option<Arc<dyn CallLine>>, admission: Option<Arc<Admission>>) -> Self {
        ContextState {
            token: CancellationToken::new(),
            reason: Mutex::new(None),
            line,
            input: Mutex::new(None),
            admission,
        }
    }

    pub(crate) fn admission(&self) -> Option<&Arc<Admission>> {
        self.admission.as_ref()
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    pub(crate) fn cancel_reason(&self) -> Option<CancelReason> {
        *self.reason.lock_unpoisoned()
    }

    pub(crate) fn cancelled(&self) -> CancelWait<'_> {
        self.token.cancelled()
    }

    /// Cancels the call; the first reason given stays.
    pub(crate) fn cancel(&self, reason: CancelReason) {
        {
            let mut kept = self.reason.lock_unpoisoned();
            if kept.is_none() {
                *kept = Some(reason);
            }
        }
        self.token.cancel();
    }

    /// Asks the guard about a bound call, unless it is cancelled first.
    pub(crate) async fn admit(
        &self,
        command: &str,
        params: &[u8],
        schema: impl FnOnce() -> Cow<'static, ToolSchema>,
    ) -> Result<(), IpcError> {
        let Some(admission) = &self.admission else {
            return Ok(());
        };
        if !admission.wants_args() {
            admission.decided(Decision::Allow);
            return Ok(());
        }
        let schema = schema();
        tokio::select! {
            biased;
            () = self.token.cancelled() => Err(IpcError::Cancelled {
                method: command.to_owned(),
            }),
            admitted = admission.admit(command, params, &schema) => admitted,
        }
    }

    pub(crate) async fn write(&self, stream: OutputStream, bytes: &[u8]) -> Result<(), CallEnded> {
        let Some(line) = &self.line else {
            return Ok(());
        };
        let sent = match line.try_write(stream, bytes, &self.token) {
            Some(sent) => sent,
            None => line.write(stream, bytes, &self.token).await,
        };
        if sent {
            return Ok(());
        }
        Err(CallEnded {
            reason: self.cancel_reason().unwrap_or(CancelReason::CallerGone),
        })
    }

    pub(crate) fn progress(&self, done: u64, total: Option<u64>, message: String) {
        if let Some(line) = &self.line {
            let message = (!message.is_empty()).then_some(message);
            line.progress(done, total, message);
        }
    }

    /// Opens the caller's live input for [`take_input`](Self::take_input);
    /// `false` when the line carries none.
    pub(crate) fn open_input(&self) -> bool {
        let Some(line) = &self.line else { return false };
        let Some(chunks) = line.open_input() else {
            return false;
        };
        let stream = InputStream::live(chunks, line.clone(), self.token.clone());
        *self.input.lock_unpoisoned() = Some(stream);
        true
    }

    pub(crate) fn take_input(&self) -> Option<InputStream> {
        self.input.lock_unpoisoned().take()
    }
}
