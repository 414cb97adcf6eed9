use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = String)]
struct Search {
    #[ipc(positional)]
    query: String,
}

fn main() {}
