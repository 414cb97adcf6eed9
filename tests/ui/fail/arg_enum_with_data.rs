use gangway::ArgEnum;

#[derive(serde::Deserialize, ArgEnum)]
enum Shape {
    Circle(f64),
    Square { side: f64 },
    Dot,
}

fn main() {}
