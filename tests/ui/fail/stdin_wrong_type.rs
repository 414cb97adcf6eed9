use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = u32)]
struct Double {
    #[ipc(stdin)]
    number: u32,
}

impl Double {
    async fn handle(&mut self) -> u32 {
        self.number * 2
    }
}

fn main() {}
