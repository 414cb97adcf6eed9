use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = u8)]
struct Pick {
    #[ipc(default_text = "3")]
    n: u8,
}

impl Pick {
    async fn handle(&mut self) -> u8 {
        self.n
    }
}

fn main() {}
