use gangway::IpcCommand;
use gangway::ipc::CallContext;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = usize)]
struct Login {
    #[ipc(positional, secret)]
    user: String,
    #[ipc(secret, state)]
    #[serde(skip)]
    api_key: String,
    #[ipc(context, secret)]
    #[serde(skip)]
    ctx: CallContext,
}

impl Login {
    async fn handle(&mut self) -> usize {
        self.user.len() + self.api_key.len()
    }
}

fn main() {}
