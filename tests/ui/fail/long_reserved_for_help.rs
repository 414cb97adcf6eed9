use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = bool)]
struct Search {
    help: bool,
}

impl Search {
    async fn handle(&mut self) -> bool {
        self.help
    }
}

fn main() {}
