use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = usize)]
struct Count<'a> {
    #[ipc(positional)]
    text: String,
    #[ipc(state)]
    #[serde(skip)]
    prefix: &'a str,
}

fn main() {}
