// The handler named here exists nowhere (not even as a trait method of a
// dependency, which rustc would suggest).
use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = String, handler = run_search)]
struct Search {
    #[ipc(positional)]
    query: String,
}

impl Search {
    async fn handle(&mut self) -> String {
        self.query.clone()
    }
}

fn main() {}
