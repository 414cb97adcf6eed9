use gangway::IpcCommand;

#[derive(serde::Serialize, IpcCommand)]
#[ipc(response = String)]
struct Search(String, u32);

fn main() {}
