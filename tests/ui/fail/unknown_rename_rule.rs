use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[serde(rename_all = "kebabcase")]
#[ipc(response = u32)]
struct Search {
    max_results: u32,
}

impl Search {
    async fn handle(&mut self) -> u32 {
        self.max_results
    }
}

fn main() {}
