use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = String)]
struct Copy {
    #[ipc(positional)]
    from: Option<String>,
    #[ipc(positional)]
    to: String,
}

impl Copy {
    async fn handle(&mut self) -> String {
        self.to.clone()
    }
}

fn main() {}
