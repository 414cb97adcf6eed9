use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[serde(rename_all = "kebabcase")]
#[ipc(response = u32)]
struct Search {
    max_results: u32,
}

impl Search {
    async fn handle(&mut self) -> u32 {
        self.max_results
    }
}

fn takes_a_command<C: gangway::ipc::IpcCommand>() {}

// Using the command adds no error of its own: serde's is the only one.
fn main() {
    takes_a_command::<Search>();
}
