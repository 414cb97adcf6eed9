//! A command generic over its backend, with bounds on the struct.
use std::fmt::Display;
use std::sync::Arc;

use gangway::IpcCommand;
use gangway::ipc::IpcRouter;

trait Backend: Send + Sync + 'static {
    fn describe(&self, key: &str) -> String;
}

struct Memory;
impl Backend for Memory {
    fn describe(&self, key: &str) -> String {
        format!("memory:{key}")
    }
}

/// Look a key up.
#[derive(serde::Serialize, IpcCommand)]
#[ipc(response = String, bound = "N: std::fmt::Debug")]
struct Lookup<B: Backend, N = u32>
where
    N: Display + Clone,
{
    #[ipc(positional)]
    key: String,
    times: Option<N>,
    #[ipc(state)]
    #[serde(skip)]
    backend: Arc<B>,
}

impl<B: Backend, N: Display + Clone> Clone for Lookup<B, N> {
    fn clone(&self) -> Self {
        Lookup { key: self.key.clone(), times: self.times.clone(), backend: self.backend.clone() }
    }
}

impl<B: Backend, N: Display + Clone + Send + std::fmt::Debug> Lookup<B, N> {
    async fn handle(&mut self) -> String {
        match &self.times {
            Some(n) => format!("{} x{n}", self.backend.describe(&self.key)),
            None => self.backend.describe(&self.key),
        }
    }
}

fn main() {
    let cmd: Lookup<Memory> = Lookup { key: String::new(), times: None, backend: Arc::new(Memory) };
    let router = IpcRouter::new().register(cmd);
    let info = router.command("lookup").unwrap();
    assert_eq!(info.positional_args, ["key"]);
    assert_eq!(info.schema.param("times").unwrap().kind, gangway::tool::ValueKind::UInt);
}
