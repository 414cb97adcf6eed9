use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = char)]
struct First {
    #[ipc(stdin)]
    letter: char,
}

impl First {
    async fn handle(&mut self) -> char {
        self.letter
    }
}

fn main() {}
