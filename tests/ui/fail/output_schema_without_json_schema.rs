use gangway::IpcCommand;
use gangway::ipc::CommandResult;

/// No `schemars::JsonSchema`: no output schema can be written.
#[derive(serde::Serialize, serde::Deserialize)]
struct Counts {
    words: usize,
}

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = Counts, output_schema)]
struct Count {
    #[ipc(positional)]
    text: String,
}

impl Count {
    async fn handle(&mut self) -> Counts {
        Counts { words: self.text.split_whitespace().count() }
    }
}

/// A `Result`'s success is what the schema describes.
#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = CommandResult<Counts>, output_schema)]
struct TryCount {
    #[ipc(positional)]
    text: String,
}

impl TryCount {
    async fn handle(&mut self) -> CommandResult<Counts> {
        Ok(Counts { words: self.text.split_whitespace().count() })
    }
}

fn main() {}
