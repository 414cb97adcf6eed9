//! What the workspace's integration tests share.

// Each test file uses a part.
#![allow(dead_code)]

/// A runtime like a host's: several threads, timers and I/O.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A small deterministic generator (xorshift), so failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn chance(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

/// Say something back, under the name it was called by: one struct
/// serving several names (`#[ipc(method)]`).
#[derive(Clone, Default, serde::Serialize, gangway::IpcCommand)]
#[ipc(response = String)]
pub struct Echo {
    #[ipc(positional)]
    pub text: String,
    #[ipc(method)]
    #[serde(skip)]
    pub method: String,
}

impl Echo {
    async fn handle(&mut self) -> String {
        format!("{} {}", self.method, self.text)
    }
}

/// The processes on this machine, from `/proc` (a file of its own, which
/// `gangway-cli`'s tests include too).
pub mod processes;
