use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = String, handler = run)]
struct Search {
    #[ipc(positional)]
    query: String,
}

impl Search {
    async fn handle(&mut self) -> String {
        self.query.clone()
    }
}

fn main() {}
