use gangway::IpcCommand;

#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Point {
    x: i32,
    y: i32,
}

#[derive(Clone, serde::Serialize, IpcCommand)]
#[ipc(response = i32)]
struct Move {
    to: Point,
}

impl Move {
    async fn handle(&mut self) -> i32 {
        self.to.x + self.to.y
    }
}

fn main() {}
