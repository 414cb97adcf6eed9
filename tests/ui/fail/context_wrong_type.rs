use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = bool)]
struct Watch {
    #[ipc(context)]
    #[serde(skip)]
    ctx: String,
}

impl Watch {
    async fn handle(&mut self) -> bool {
        self.ctx.is_empty()
    }
}

fn main() {}
