//! A custom argument type says how it is written with `ArgType`.
use gangway::IpcCommand;
use gangway::tool::{ArgType, ValueKind};

#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Url(String);

impl ArgType for Url {
    const KIND: ValueKind = ValueKind::String;
}

/// Open URLs.
#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = usize)]
struct Open {
    #[ipc(positional)]
    urls: Vec<Url>,
}

impl Open {
    async fn handle(&mut self) -> usize {
        self.urls.len()
    }
}

fn main() {
    let param = Open::SCHEMA.unwrap().param("urls").unwrap().clone();
    assert_eq!(param.kind, ValueKind::String);
    assert!(param.repeatable);
}
