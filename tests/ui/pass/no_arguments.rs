//! Commands with no arguments, as a unit struct and as an empty struct.
use gangway::IpcCommand;

/// Check the host is alive.
#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = String)]
struct Ping;

impl Ping {
    async fn handle(&mut self) -> String {
        "pong".to_owned()
    }
}

/// Report the time.
#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(name = "now", response = u64)]
struct Now {}

impl Now {
    async fn handle(&mut self) -> u64 {
        42
    }
}

fn main() {
    let mut ping = Ping;
    ping.apply_args(&[]).unwrap();
    assert_eq!(ping.name(), "ping");
    assert!(Ping::SCHEMA.unwrap().params.is_empty());
    let mut now = Now {};
    now.apply_args(&[0x80]).unwrap();
    assert_eq!(now.name(), "now");
}
