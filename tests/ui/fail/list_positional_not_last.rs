use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = usize)]
struct Copy {
    #[ipc(positional)]
    sources: Vec<String>,
    #[ipc(positional)]
    destination: String,
}

impl Copy {
    async fn handle(&mut self) -> usize {
        self.sources.len()
    }
}

fn main() {}
