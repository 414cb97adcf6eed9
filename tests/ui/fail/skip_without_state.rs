use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = usize)]
struct Count {
    #[ipc(positional)]
    text: String,
    #[serde(skip)]
    cache: Vec<String>,
}

impl Count {
    async fn handle(&mut self) -> usize {
        self.text.len() + self.cache.len()
    }
}

fn main() {}
