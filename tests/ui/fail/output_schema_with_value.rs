use gangway::IpcCommand;

/// `output_schema` is a flag.
#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = String, output_schema = true)]
struct Echo {
    #[ipc(positional)]
    text: String,
}

impl Echo {
    async fn handle(&mut self) -> String {
        self.text.clone()
    }
}

fn main() {}
