use gangway::IpcCommand;
use gangway::ipc::CallContext;

/// Waits until the call is cancelled.
#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = bool, timeout = "300ms")]
struct Wait {
    #[ipc(context)]
    #[serde(skip)]
    ctx: CallContext,
}

impl Wait {
    async fn handle(&mut self) -> bool {
        self.ctx.cancelled().await;
        self.ctx.is_cancelled()
    }
}

fn main() {
    assert_eq!(Wait::TIMEOUT, Some(std::time::Duration::from_millis(300)));
    let wait = Wait {
        ctx: CallContext::detached(),
    };
    assert!(wait.schema().params.is_empty(), "the context is not an argument");
}
