use gangway::tool::tool;

#[tool]
struct Grep {
    #[arg(short, long)]
    count: bool,
    #[arg(short, long = "count")]
    color: bool,
}

fn main() {}
