//! Test commands for long calls: streamed output (`lines`, `generate`),
//! streamed input (`sum`), and progress (`work`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use gangway::IpcCommand;
use gangway::ipc::{CallContext, CommandResult, InputStream};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

/// What a held handler waits on until the test opens it, once per open.
#[derive(Clone)]
pub struct Gate(Arc<Semaphore>);

impl Default for Gate {
    fn default() -> Self {
        Gate(Arc::new(Semaphore::new(0)))
    }
}

impl Gate {
    /// Lets one waiting handler go on.
    pub fn open(&self) {
        self.0.add_permits(1);
    }

    async fn wait(&self) {
        if let Ok(permit) = self.0.acquire().await {
            permit.forget();
        }
    }
}

/// Write `count` numbered lines as they are made; with `--hold`, wait
/// after the first until the test releases the barrier (one permit).
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "lines", response = ())]
pub struct Lines {
    #[ipc(positional)]
    pub count: u64,
    /// Wait on the barrier after line 1.
    pub hold: bool,
    #[ipc(context)]
    #[serde(skip)]
    pub ctx: CallContext,
    #[ipc(state)]
    #[serde(skip)]
    pub barrier: Gate,
}

impl Lines {
    async fn handle(&mut self) {
        for n in 1..=self.count {
            if self.ctx.stdout(format!("line {n}\n")).await.is_err() {
                return;
            }
            if n == 1 && self.hold {
                self.barrier.wait().await;
            }
        }
    }
}

/// Write `bytes` bytes of `x` in 64 KiB chunks; count a run that stopped
/// before the end because its writes failed.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "generate", response = ())]
pub struct Generate {
    #[ipc(positional)]
    pub bytes: u64,
    #[ipc(context)]
    #[serde(skip)]
    pub ctx: CallContext,
    #[ipc(state)]
    #[serde(skip)]
    pub ended_early: Arc<AtomicU64>,
}

impl Generate {
    async fn handle(&mut self) {
        let chunk = vec![b'x'; 64 * 1024];
        let mut left = self.bytes;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            if self.ctx.stdout(&chunk[..n]).await.is_err() {
                self.ended_early.fetch_add(1, Ordering::SeqCst);
                return;
            }
            left -= n as u64;
        }
    }
}

/// The length and FNV-1a hash of the input, read as it streams in.
#[derive(Clone, Serialize, Deserialize, IpcCommand)]
#[ipc(name = "sum", response = CommandResult<String>)]
pub struct Sum {
    /// The input.
    #[ipc(stdin)]
    pub input: InputStream,
    #[ipc(state)]
    #[serde(skip)]
    pub largest_chunk: Arc<AtomicU64>,
    #[ipc(state)]
    #[serde(skip)]
    pub chunks: Arc<AtomicU64>,
}

/// FNV-1a, 64 bits: what `sum` reports, for the test to check.
pub fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// FNV-1a's starting value.
pub const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

impl Sum {
    async fn handle(&mut self) -> CommandResult<String> {
        let mut length = 0u64;
        let mut hash = FNV_START;
        while let Some(chunk) = self.input.next_chunk().await? {
            self.chunks.fetch_add(1, Ordering::SeqCst);
            self.largest_chunk
                .fetch_max(chunk.len() as u64, Ordering::SeqCst);
            length += chunk.len() as u64;
            hash = fnv1a(hash, &chunk);
        }
        Ok(format!("{length} {hash:016x}"))
    }
}

/// Report progress through `steps` steps; with `--hold`, wait on the
/// barrier after the first step.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "work", response = String)]
pub struct Work {
    #[ipc(positional)]
    pub steps: u64,
    pub hold: bool,
    #[ipc(context)]
    #[serde(skip)]
    pub ctx: CallContext,
    #[ipc(state)]
    #[serde(skip)]
    pub barrier: Gate,
}

impl Work {
    async fn handle(&mut self) -> String {
        for step in 1..=self.steps {
            self.ctx.progress(step, Some(self.steps), "building");
            if step == 1 && self.hold {
                self.barrier.wait().await;
            } else {
                // Time for the caller to show each step (not asserted).
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
        "done".to_owned()
    }
}
