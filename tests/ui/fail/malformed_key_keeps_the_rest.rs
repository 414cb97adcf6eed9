use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(respons = Result<u32, String>, name = "bad name")]
struct Search {
    #[ipc(short = 'n', stdn)]
    limit: u32,
}

fn main() {}
