use gangway::tool::tool;

#[tool]
struct Grep(String);

fn main() {}
