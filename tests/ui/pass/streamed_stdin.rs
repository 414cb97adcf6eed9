use gangway::IpcCommand;
use gangway::ipc::{CallContext, CommandResult, InputStream};
use gangway::tool::ValueKind;

/// Print the lines of the input that hold a word, as they arrive.
#[derive(Clone, serde::Serialize, serde::Deserialize, IpcCommand)]
#[ipc(response = CommandResult<()>, timeout = "1h")]
struct HostGrep {
    #[ipc(positional)]
    word: String,
    /// The text to search.
    #[ipc(stdin)]
    input: InputStream,
    #[ipc(context)]
    #[serde(skip)]
    ctx: CallContext,
}

impl HostGrep {
    async fn handle(&mut self) -> CommandResult<()> {
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(&mut self.input).lines();
        while let Some(line) = lines.next_line().await? {
            if line.contains(&self.word) {
                self.ctx.stdout(format!("{line}\n")).await?;
            }
        }
        Ok(())
    }
}

/// A stdin argument taken whole does not stream.
#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = usize)]
struct Whole {
    #[ipc(stdin)]
    input: Vec<u8>,
}

impl Whole {
    async fn handle(&mut self) -> usize {
        self.input.len()
    }
}

fn main() {
    assert!(HostGrep::STREAMS_STDIN);
    assert!(!Whole::STREAMS_STDIN);
    let grep = HostGrep {
        word: String::new(),
        input: InputStream::new(),
        ctx: CallContext::detached(),
    };
    let input = grep.schema().params.iter().find(|p| p.name == "input").cloned();
    assert_eq!(input.map(|p| p.kind), Some(ValueKind::Bytes));
    assert_eq!(grep.stdin_arg().as_deref(), Some("input"));
}
