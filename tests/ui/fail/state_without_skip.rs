use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = usize)]
struct Count {
    #[ipc(positional)]
    text: String,
    #[ipc(state)]
    seen: Vec<String>,
}

impl Count {
    async fn handle(&mut self) -> usize {
        self.text.len() + self.seen.len()
    }
}

fn main() {}
