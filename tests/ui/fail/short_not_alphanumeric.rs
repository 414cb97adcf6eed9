use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = u32)]
struct Search {
    #[ipc(short = '-')]
    limit: u32,
    #[ipc(short = 'é')]
    depth: u32,
}

impl Search {
    async fn handle(&mut self) -> u32 {
        self.limit + self.depth
    }
}

fn main() {}
