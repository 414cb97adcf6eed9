use gangway::tool::tool;

#[tool]
struct Paint {
    #[arg(long, action = clap::ArgAction::SetFalse)]
    color: bool,
}

fn main() {}
