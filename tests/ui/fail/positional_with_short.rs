use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = String)]
struct Search {
    #[ipc(positional, short = 'q')]
    query: String,
}

impl Search {
    async fn handle(&mut self) -> String {
        self.query.clone()
    }
}

fn main() {}
