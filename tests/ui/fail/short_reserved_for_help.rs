use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = u32)]
struct Search {
    #[ipc(short = 'h')]
    height: u32,
}

impl Search {
    async fn handle(&mut self) -> u32 {
        self.height
    }
}

fn main() {}
