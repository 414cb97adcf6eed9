use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = bool)]
struct Toggle {
    #[ipc(positional)]
    on: bool,
}

impl Toggle {
    async fn handle(&mut self) -> bool {
        self.on
    }
}

fn main() {}
