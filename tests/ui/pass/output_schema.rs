use gangway::IpcCommand;
use gangway::ipc::{CommandResult, IpcRouter};

/// A text's counts.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Counts {
    words: usize,
    longest: Option<String>,
}

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = Counts, output_schema)]
struct Count {
    #[ipc(positional)]
    text: String,
}

impl Count {
    async fn handle(&mut self) -> Counts {
        Counts { words: self.text.split_whitespace().count(), longest: None }
    }
}

/// A `Result`'s success, and a response that is not an object.
#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = CommandResult<Vec<u32>>, output_schema, read_only)]
struct Lengths {
    #[ipc(positional)]
    text: String,
}

impl Lengths {
    async fn handle(&mut self) -> CommandResult<Vec<u32>> {
        Ok(self.text.split_whitespace().map(|w| w.len() as u32).collect())
    }
}

fn main() {
    let router = IpcRouter::new()
        .register(Count { text: String::new() })
        .register(Lengths { text: String::new() });
    let count = router.command("count").unwrap();
    assert!(!count.schema.output_schema.as_ref().unwrap().wrapped);
    let lengths = router.command("lengths").unwrap();
    assert!(lengths.schema.output_schema.as_ref().unwrap().wrapped);
}
