//! Host state behind an `Arc`, neither `Default` nor cheap to rebuild,
//! survives every call.
use std::sync::{Arc, Mutex};

use gangway::IpcCommand;
use gangway::ipc::IpcRouter;

struct Registry {
    names: Mutex<Vec<String>>,
}

/// Remember a name.
#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = usize)]
struct Remember {
    #[ipc(positional)]
    name: String,
    #[ipc(state)]
    #[serde(skip)]
    registry: Arc<Registry>,
}

impl Remember {
    async fn handle(&mut self) -> usize {
        let mut names = self.registry.names.lock().unwrap();
        names.push(self.name.clone());
        names.len()
    }
}

fn main() {
    let registry = Arc::new(Registry { names: Mutex::new(Vec::new()) });
    let router = IpcRouter::new().register(Remember { name: String::new(), registry: registry.clone() });
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        let params = rmp_serde::to_vec_named(&serde_json::json!({ "name": name })).unwrap();
        let reply = runtime.block_on(router.dispatch("remember", &params)).unwrap();
        assert_eq!(rmp_serde::from_slice::<usize>(&reply).unwrap(), i + 1);
    }
    assert_eq!(*registry.names.lock().unwrap(), ["a", "b", "c"]);
}
