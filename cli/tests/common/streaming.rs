//! Test commands for long calls: streamed output (`lines`, `generate`,
//! `flood`, `chatter`), streamed input (`sum`, `drip`), and progress
//! (`work`, `spin`); and a host serving them beside the usual router, with
//! the probes the tests watch them through.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use gangway::IpcCommand;
use gangway::ipc::{CallContext, CommandResult, InputStream, IpcRouter, IpcServerBuilder};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

pub use super::commands::{ByHand, Hook, Keep, Kept, Waiter};
use super::{GANGWAY_CLIENT, Host, Style, Tally};

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

    /// Lets `n` waiting handlers (or later waits) go on.
    pub fn open_many(&self, n: usize) {
        self.0.add_permits(n);
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
        if !write_xs(&self.ctx, self.bytes, |_| {}).await {
            self.ended_early.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// What `generate` and `flood` do: write `bytes` bytes of `x` to stdout in
/// 64 KiB chunks, telling `wrote` the size of each write handed over;
/// false if a write failed before the end.
async fn write_xs(ctx: &CallContext, bytes: u64, mut wrote: impl FnMut(u64)) -> bool {
    let chunk = vec![b'x'; 64 * 1024];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        if ctx.stdout(&chunk[..n]).await.is_err() {
            return false;
        }
        wrote(n as u64);
        left -= n as u64;
    }
    true
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

/// What `drip` shows the test: the bytes its handler has read, and how
/// many times it has stopped to wait on its gate.
#[derive(Clone, Default)]
pub struct DripProbe {
    pub read: Arc<AtomicU64>,
    pub holds: Arc<AtomicU64>,
    pub gate: Gate,
}

/// Read the input as `sum` does, stopping on the gate after the first
/// chunk and again each time another `step` bytes have been read.
#[derive(Clone, Serialize, Deserialize, IpcCommand)]
#[ipc(name = "drip", response = CommandResult<String>)]
pub struct Drip {
    #[ipc(positional)]
    pub step: u64,
    /// The input.
    #[ipc(stdin)]
    pub input: InputStream,
    #[ipc(state)]
    #[serde(skip)]
    pub probe: DripProbe,
}

impl Drip {
    async fn handle(&mut self) -> CommandResult<String> {
        let (mut length, mut hash) = (0u64, FNV_START);
        let mut next_hold = 0;
        while let Some(chunk) = self.input.next_chunk().await? {
            length += chunk.len() as u64;
            hash = fnv1a(hash, &chunk);
            self.probe.read.store(length, Ordering::SeqCst);
            if length >= next_hold {
                next_hold = (length / self.step.max(1) + 1) * self.step.max(1);
                self.probe.holds.fetch_add(1, Ordering::SeqCst);
                self.probe.gate.wait().await;
            }
        }
        Ok(format!("{length} {hash:016x}"))
    }
}

/// Write `bytes` bytes of `x` in 64 KiB chunks, counting in `written` the
/// bytes each write handed over.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "flood", response = ())]
pub struct Flood {
    #[ipc(positional)]
    pub bytes: u64,
    #[ipc(context)]
    #[serde(skip)]
    pub ctx: CallContext,
    #[ipc(state)]
    #[serde(skip)]
    pub written: Arc<AtomicU64>,
}

impl Flood {
    async fn handle(&mut self) {
        write_xs(&self.ctx, self.bytes, |n| {
            self.written.fetch_add(n, Ordering::SeqCst);
        })
        .await;
    }
}

/// Write `[o<n>` to stdout then `e<n>]` and a newline to stderr, `times`
/// times: read through one pipe (`2>&1`), each pair makes a line.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "chatter", response = ())]
pub struct Chatter {
    #[ipc(positional)]
    pub times: u64,
    #[ipc(context)]
    #[serde(skip)]
    pub ctx: CallContext,
}

impl Chatter {
    async fn handle(&mut self) {
        for n in 1..=self.times {
            if self.ctx.stdout(format!("[o{n}")).await.is_err()
                || self.ctx.stderr(format!("e{n}]\n")).await.is_err()
            {
                return;
            }
        }
    }
}

/// What `spin` shows the test: calls begun, and progress loops finished;
/// and the gate each waits on before it starts reporting.
#[derive(Clone, Default)]
pub struct SpinProbe {
    pub started: Arc<AtomicU64>,
    pub spun: Arc<AtomicU64>,
    pub gate: Gate,
}

/// Once the gate opens, report progress `times` times in a row (steps of
/// `spinning`), then count the loop done and answer `spun`.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "spin", response = String)]
pub struct Spin {
    #[ipc(positional)]
    pub times: u64,
    #[ipc(context)]
    #[serde(skip)]
    pub ctx: CallContext,
    #[ipc(state)]
    #[serde(skip)]
    pub probe: SpinProbe,
}

impl Spin {
    async fn handle(&mut self) -> String {
        self.probe.started.fetch_add(1, Ordering::SeqCst);
        self.probe.gate.wait().await;
        for step in 1..=self.times {
            self.ctx.progress(step, Some(self.times), "spinning");
            if step % 1024 == 0 {
                // Let the connection's writer run (on a loaded machine too).
                tokio::task::yield_now().await;
            }
        }
        self.probe.spun.fetch_add(1, Ordering::SeqCst);
        "spun".to_owned()
    }
}

/// What the probe commands share with a test.
#[derive(Clone, Default)]
pub struct Probes {
    pub drip: DripProbe,
    /// The bytes `flood` has handed over.
    pub flooded: Arc<AtomicU64>,
    pub spin: SpinProbe,
    /// The contexts of `keep` calls, in the order they began.
    pub kept: Kept,
    /// What `keep` runs as it begins.
    pub hook: Hook,
    /// The `keep` calls begun, and those dropped before they finished.
    pub keep: Waiter,
    /// The contexts `by_hand` calls found with `CallContext::current()`.
    pub by_hand: Kept,
}

/// The test router with the probed commands a derive makes (what the
/// source scanner finds in these files); `probed_host` adds the
/// hand-written one.
pub fn derived_router(tally: &Tally, probes: &Probes) -> IpcRouter {
    super::router(tally)
        .register(Drip {
            step: 0,
            input: InputStream::new(),
            probe: probes.drip.clone(),
        })
        .register(Flood {
            bytes: 0,
            ctx: CallContext::detached(),
            written: probes.flooded.clone(),
        })
        .register(Chatter {
            times: 0,
            ctx: CallContext::detached(),
        })
        .register(Spin {
            times: 0,
            ctx: CallContext::detached(),
            probe: probes.spin.clone(),
        })
        .register(Keep {
            stubborn: false,
            ctx: CallContext::detached(),
            kept: probes.kept.clone(),
            hook: probes.hook.clone(),
            waiter: probes.keep.clone(),
        })
}

/// A host serving the usual router and the probe commands (`drip`,
/// `flood`, `chatter`, `spin`, `keep`, `by_hand`), with wrappers of
/// `style` and a cancel grace of `grace`.
pub fn probed_host(builder: IpcServerBuilder, style: Style, grace: Duration) -> (Host, Probes) {
    let tally = Tally::default();
    let probes = Probes::default();
    let router = derived_router(&tally, &probes).register(ByHand {
        kept: probes.by_hand.clone(),
    });
    let builder = builder.client_bin(GANGWAY_CLIENT);
    (
        Host::start_router(builder, router, tally, style, grace),
        probes,
    )
}
