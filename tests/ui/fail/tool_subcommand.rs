use gangway::tool::tool;

#[derive(clap::Subcommand)]
enum Action {
    Add,
    Remove,
}

#[tool]
struct Manage {
    #[command(subcommand)]
    action: Action,
}

fn main() {}
