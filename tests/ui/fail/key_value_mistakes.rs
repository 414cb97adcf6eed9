use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = u8, handler)]
struct Keys {
    #[ipc(positional = true)]
    a: u8,
    #[ipc(default)]
    b: u8,
    #[ipc(short = "ab")]
    c: u8,
    #[ipc(short = 5)]
    d: u8,
    #[ipc(= 3)]
    e: u8,
}

fn main() {}
