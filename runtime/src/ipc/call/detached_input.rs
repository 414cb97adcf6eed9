//! The stand-in for [`LiveInput`] when the `ipc` feature is off: no call
//! is served, so no input is live. The type has no values. Its method
//! mirrors the real one, so the stream's methods are written once.

use std::task::{Context, Poll};

/// No live input: only a served call has one.
pub(crate) enum LiveInput {}

impl LiveInput {
    pub(crate) fn poll_chunk(
        &mut self,
        _cx: &mut Context<'_>,
    ) -> Poll<(std::io::Result<Option<Vec<u8>>>, bool)> {
        match *self {}
    }
}
