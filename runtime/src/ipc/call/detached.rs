//! The stand-in for [`ContextState`] when the `ipc` feature is off: there
//! is no server, so no call is ever served and every context is detached.
//! The type has no values. Its methods mirror the real ones, so the
//! context's methods are written once, for both builds.

use std::borrow::Cow;
use std::convert::Infallible;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::ipc::call::cancel::{CallEnded, CancelReason};
use crate::ipc::call::input::InputStream;
use crate::ipc::call::output_stream::OutputStream;
use crate::ipc::error::ipc_error::IpcError;
use crate::tool::ToolSchema;

/// No served call's state: there are none without `ipc`.
pub(crate) enum ContextState {}

/// The future a cancel would complete: never made.
pub(crate) struct CancelWait<'a>(Infallible, PhantomData<&'a ()>);

impl Future for CancelWait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        match self.0 {}
    }
}

impl ContextState {
    pub(crate) fn is_cancelled(&self) -> bool {
        match *self {}
    }

    pub(crate) fn cancel_reason(&self) -> Option<CancelReason> {
        match *self {}
    }

    pub(crate) fn cancelled(&self) -> CancelWait<'_> {
        match *self {}
    }

    pub(crate) async fn admit(
        &self,
        _command: &str,
        _params: &[u8],
        _schema: impl FnOnce() -> Cow<'static, ToolSchema>,
    ) -> Result<(), IpcError> {
        match *self {}
    }

    pub(crate) async fn write(
        &self,
        _stream: OutputStream,
        _bytes: &[u8],
    ) -> Result<(), CallEnded> {
        match *self {}
    }

    pub(crate) fn progress(&self, _done: u64, _total: Option<u64>, _message: String) {
        match *self {}
    }

    pub(crate) fn take_input(&self) -> Option<InputStream> {
        match *self {}
    }
}
