use gangway::IpcCommand;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct MyError {
    code: u32,
}

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = Result<u32, MyError>)]
struct Lookup {
    #[ipc(positional)]
    key: String,
}

impl Lookup {
    async fn handle(&mut self) -> Result<u32, MyError> {
        Err(MyError { code: self.key.len() as u32 })
    }
}

fn main() {}
