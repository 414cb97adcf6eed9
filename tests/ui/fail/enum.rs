use gangway::IpcCommand;

#[derive(serde::Serialize, IpcCommand)]
#[ipc(response = ())]
enum Command {
    Search { query: String },
    Fetch { url: String },
}

fn main() {}
