use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc]
struct Search {
    query: String,
}

fn main() {}
