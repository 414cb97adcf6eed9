use gangway::tool::tool;

#[tool]
struct Grep<T: Clone + Send + Sync + 'static> {
    pattern: String,
    #[arg(skip)]
    extra: Option<T>,
}

fn main() {}
