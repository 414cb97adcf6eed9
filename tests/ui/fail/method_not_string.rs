use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = u32)]
struct Alias {
    #[ipc(method)]
    #[serde(skip)]
    method: u32,
}

impl Alias {
    async fn handle(&mut self) -> u32 {
        self.method
    }
}

fn main() {}
