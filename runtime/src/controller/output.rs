//! Where a controller's output goes: to every subscriber, through bounded
//! channels (a slow subscriber slows the process, nothing is dropped), and
//! into a capped tail of recent output.

use std::collections::VecDeque;
use std::sync::Mutex;

use tokio::sync::mpsc;

use crate::sync::LockUnpoisoned;

/// Which stream output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputSource {
    /// A command's standard output.
    Stdout,
    /// A command's standard error.
    Stderr,
    /// A shell's terminal.
    Pty,
    /// An agent's messages: each `session/update` notification, and each
    /// prompt's answer, as one JSON line.
    Agent,
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExitInfo {
    /// Its exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
}

impl ExitInfo {
    pub(crate) fn from_status(status: std::process::ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        ExitInfo {
            code: status.code(),
            signal: status.signal(),
        }
    }
}

/// What a subscriber receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputEvent {
    /// Bytes the process wrote.
    Output {
        /// Where.
        stream: OutputSource,
        /// What.
        data: Vec<u8>,
    },
    /// The process ended; its output is complete.
    Exit(ExitInfo),
}

/// How many events a subscriber's channel holds before the process waits.
const SUBSCRIBER_CAPACITY: usize = 256;

/// The subscribers and the tail.
pub(crate) struct OutputHub {
    subscribers: Mutex<Vec<mpsc::Sender<OutputEvent>>>,
    tail: Mutex<VecDeque<u8>>,
    tail_max: usize,
}

impl OutputHub {
    pub(crate) fn new(tail_max: usize) -> Self {
        OutputHub {
            subscribers: Mutex::new(Vec::new()),
            tail: Mutex::new(VecDeque::new()),
            tail_max,
        }
    }

    /// A new subscriber: every event from now on.
    pub(crate) fn subscribe(&self) -> mpsc::Receiver<OutputEvent> {
        let (tx, rx) = mpsc::channel(SUBSCRIBER_CAPACITY);
        self.subscribers.lock_unpoisoned().push(tx);
        rx
    }

    /// Hands `event` to every subscriber, waiting for room; subscribers
    /// that have gone are forgotten.
    pub(crate) async fn publish(&self, event: OutputEvent) {
        if let OutputEvent::Output { data, .. } = &event {
            let max = self.tail_max;
            let mut tail = self.tail.lock_unpoisoned();
            let data = &data[data.len().saturating_sub(max)..];
            let overflow = (tail.len() + data.len()).saturating_sub(max);
            tail.drain(..overflow);
            tail.extend(data);
        }
        let subscribers = self.subscribers.lock_unpoisoned().clone();
        let mut gone = false;
        for subscriber in &subscribers {
            gone |= subscriber.send(event.clone()).await.is_err();
        }
        if gone {
            self.subscribers
                .lock_unpoisoned()
                .retain(|s| !s.is_closed());
        }
    }

    /// The most recent output, all streams together.
    pub(crate) fn tail(&self) -> Vec<u8> {
        let tail = self.tail.lock_unpoisoned();
        let (front, back) = tail.as_slices();
        [front, back].concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_subscriber_gets_every_event_and_the_tail_is_capped() {
        let hub = OutputHub::new(8);
        let mut first = hub.subscribe();
        let second = hub.subscribe();
        drop(second);
        for chunk in ["hello ", "world", "!"] {
            hub.publish(OutputEvent::Output {
                stream: OutputSource::Stdout,
                data: chunk.as_bytes().to_vec(),
            })
            .await;
        }
        hub.publish(OutputEvent::Exit(ExitInfo {
            code: Some(0),
            signal: None,
        }))
        .await;
        let mut got = Vec::new();
        while let Ok(event) = first.try_recv() {
            got.push(event);
        }
        assert_eq!(got.len(), 4);
        assert_eq!(hub.tail(), b"o world!");
        assert_eq!(
            hub.subscribers.lock().unwrap().len(),
            1,
            "the dropped one is gone"
        );
    }
}
