use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = usize)]
struct Count {
    #[ipc(positional, state)]
    #[serde(skip)]
    text: String,
}

impl Count {
    async fn handle(&mut self) -> usize {
        self.text.len()
    }
}

fn main() {}
