use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = bool)]
struct Paint {
    #[ipc(default = true)]
    color: bool,
}

impl Paint {
    async fn handle(&mut self) -> bool {
        self.color
    }
}

fn main() {}
