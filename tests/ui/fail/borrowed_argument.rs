use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = usize)]
struct Count {
    #[ipc(positional)]
    text: &'static str,
}

impl Count {
    async fn handle(&mut self) -> usize {
        self.text.len()
    }
}

fn main() {}
