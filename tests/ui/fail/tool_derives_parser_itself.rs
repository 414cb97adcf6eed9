use gangway::tool::tool;

#[tool]
#[derive(clap::Parser)]
struct Grep {
    pattern: String,
}

fn main() {}
