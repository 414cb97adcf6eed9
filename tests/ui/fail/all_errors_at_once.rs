use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(name = "bad name", respons = String)]
struct Search {
    #[ipc(short = 'n')]
    limit: u32,
    #[ipc(short = 'n')]
    count: u32,
    #[ipc(stdin)]
    number: u64,
    #[ipc(sate)]
    #[serde(skip)]
    cache: Vec<String>,
}

fn main() {}
