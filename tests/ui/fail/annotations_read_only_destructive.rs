use gangway::IpcCommand;

/// Claims to change nothing, and to destroy data.
#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = String, read_only, idempotent)]
#[ipc(destructive)]
struct Wipe {
    #[ipc(positional)]
    path: String,
}

impl Wipe {
    async fn handle(&mut self) -> String {
        self.path.clone()
    }
}

fn main() {}
