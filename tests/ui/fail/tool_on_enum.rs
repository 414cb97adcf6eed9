use gangway::tool::tool;

#[tool]
enum Grep {
    Fast,
    Slow,
}

fn main() {}
