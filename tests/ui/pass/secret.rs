//! `#[ipc(secret)]` on every kind of argument: a positional, a stdin field,
//! a bool flag, an option with a default.

use gangway::IpcCommand;

/// Log in.
#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = String)]
struct Login {
    /// The session token.
    #[ipc(positional, secret)]
    token: String,
    /// The password, piped in.
    #[ipc(stdin, secret)]
    password: Option<String>,
    /// Skip the certificate check.
    #[ipc(secret)]
    insecure: bool,
    /// The PIN.
    #[ipc(secret, short = 'p', default = 1234)]
    pin: u32,
}

impl Login {
    async fn handle(&mut self) -> String {
        format!("{}{:?}{}{}", self.token, self.password, self.insecure, self.pin)
    }
}

fn main() {
    let schema = Login::SCHEMA.unwrap();
    assert!(schema.params.iter().all(|p| p.secret));
}
