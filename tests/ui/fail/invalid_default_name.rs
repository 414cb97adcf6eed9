use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = u8)]
struct _Internal {
    n: u8,
}

impl _Internal {
    async fn handle(&mut self) -> u8 {
        self.n
    }
}

fn main() {}
