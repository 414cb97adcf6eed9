use gangway::tool::tool;

#[tool]
struct Run {
    program: String,
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

fn main() {}
