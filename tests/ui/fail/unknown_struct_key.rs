use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(nmae = "search", response = String)]
struct Search {
    query: String,
}

impl Search {
    async fn handle(&mut self) -> String {
        self.query.clone()
    }
}

fn main() {}
