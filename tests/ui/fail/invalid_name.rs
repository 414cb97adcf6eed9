use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(name = "web search", response = String)]
struct Search {
    query: String,
}

impl Search {
    async fn handle(&mut self) -> String {
        self.query.clone()
    }
}

fn main() {}
