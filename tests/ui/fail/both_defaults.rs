use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = u32)]
struct Search {
    #[ipc(default = 5)]
    #[serde(default)]
    limit: u32,
}

impl Search {
    async fn handle(&mut self) -> u32 {
        self.limit
    }
}

fn main() {}
