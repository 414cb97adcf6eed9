use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = String)]
struct Search {
    #[ipc(short = 'n')]
    limit: u32,
    #[ipc(short = 'n')]
    name: String,
}

impl Search {
    async fn handle(&mut self) -> String {
        self.name.clone()
    }
}

fn main() {}
