use gangway::IpcCommand;

#[derive(IpcCommand)]
#[ipc(response = u32)]
union Bits {
    a: u32,
    b: f32,
}

fn main() {}
