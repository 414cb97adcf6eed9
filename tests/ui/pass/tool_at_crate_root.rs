//! `#[gangway::tool]` at the crate root, beside the `gangway::tool` module
//! (a macro and a module may share a name), and through `use gangway::tool`.
use gangway::tool::Tool;

/// Count the words given.
#[gangway::tool(name = "count")]
struct Count {
    /// The words.
    words: Vec<String>,
    /// Count characters instead.
    #[arg(short, long)]
    chars: bool,
}

mod imported {
    use gangway::tool;

    /// Say hello.
    #[tool]
    pub struct Hello {
        /// Who.
        pub name: String,
    }

    // The module of the same name is still reachable through the import.
    pub fn schema_name() -> &'static str {
        <Hello as tool::Tool>::schema().name.as_ref()
    }
}

fn main() {
    let count = Count::bind_words(&["-c", "a", "b"]).unwrap();
    assert!(count.chars);
    assert_eq!(count.words, ["a", "b"]);
    assert_eq!(Count::schema().name, "count");
    assert_eq!(imported::schema_name(), "hello");
    assert_eq!(imported::Hello::bind_words(&["x"]).unwrap().name, "x");
}
