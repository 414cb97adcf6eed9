//! `handler = method` names the inherent method that serves a call.
use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = gangway::ipc::CommandResult<u32>, handler = run)]
struct Half {
    #[ipc(positional)]
    n: u32,
}

impl Half {
    async fn run(&mut self) -> gangway::ipc::CommandResult<u32> {
        if self.n % 2 == 1 {
            return Err(gangway::ipc::CommandError::new("odd"));
        }
        Ok(self.n / 2)
    }
}

fn main() {
    let mut half = Half { n: 3 };
    let response = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(half.handle());
    let reply = Half::encode_reply(&response).unwrap();
    assert!(matches!(reply, gangway::ipc::Reply::Failure { ref message, .. } if message == "odd"));
}
