use gangway::tool::tool;

#[tool]
struct Connect {
    #[arg(short, long)]
    host: String,
    #[arg(long)]
    help: bool,
}

fn main() {}
