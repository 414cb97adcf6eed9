use gangway::tool::tool;

#[tool(nmae = "grep")]
struct Grep {
    pattern: String,
}

fn main() {}
