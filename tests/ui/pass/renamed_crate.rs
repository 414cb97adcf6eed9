//! `crate = path` when the dependency is renamed.
extern crate gangway as gw;

use gw::IpcCommand;

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(crate = gw, response = u8)]
struct Tiny {
    #[ipc(default = 3)]
    n: u8,
}

impl Tiny {
    async fn handle(&mut self) -> u8 {
        self.n
    }
}

fn main() {
    let mut tiny = Tiny { n: 0 };
    tiny.apply_args(&[]).unwrap();
    assert_eq!(tiny.n, 3);
}
