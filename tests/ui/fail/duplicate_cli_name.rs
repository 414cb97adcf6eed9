use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = u32)]
struct Search {
    max_results: u32,
    #[serde(rename = "maxResults")]
    limit: u32,
}

impl Search {
    async fn handle(&mut self) -> u32 {
        self.max_results.min(self.limit)
    }
}

fn main() {}
