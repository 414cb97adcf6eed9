use gangway::tool::tool;

#[tool(name = "grep; rm -rf /")]
struct Grep {
    pattern: String,
}

fn main() {}
