use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = u8)]
struct Odd {
    #[serde(rename = "a b=c")]
    spaced: u8,
    #[serde(rename = "")]
    empty: u8,
}

impl Odd {
    async fn handle(&mut self) -> u8 {
        self.spaced + self.empty
    }
}

fn main() {}
