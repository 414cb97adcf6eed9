use gangway::IpcCommand;
use gangway::ipc::CallContext;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = bool)]
struct Watch {
    #[ipc(context)]
    #[serde(skip_serializing)]
    ctx: CallContext,
}

impl Watch {
    async fn handle(&mut self) -> bool {
        self.ctx.is_cancelled()
    }
}

fn main() {}
