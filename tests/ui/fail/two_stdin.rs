use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = usize)]
struct Diff {
    #[ipc(stdin)]
    left: String,
    #[ipc(stdin)]
    right: String,
}

impl Diff {
    async fn handle(&mut self) -> usize {
        self.left.len() + self.right.len()
    }
}

fn main() {}
