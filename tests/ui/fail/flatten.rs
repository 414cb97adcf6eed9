use gangway::IpcCommand;

#[derive(Clone, serde::Serialize)]
struct Paging {
    page: u32,
}

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = u32)]
struct List {
    #[serde(flatten)]
    paging: Paging,
}

impl List {
    async fn handle(&mut self) -> u32 {
        self.paging.page
    }
}

fn main() {}
