use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = String, timeout = "30 seconds")]
struct Slow {
    #[ipc(positional)]
    what: String,
}

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = String, timeout = "0s")]
struct Never {}

impl Slow {
    async fn handle(&mut self) -> String {
        self.what.clone()
    }
}

impl Never {
    async fn handle(&mut self) -> String {
        String::new()
    }
}

fn main() {}
