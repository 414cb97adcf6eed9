use gangway::tool::tool;

#[tool(verbatim)]
struct Cat {
    #[arg(long)]
    input: Vec<u8>,
}

fn main() {}
