//! The smallest tool: a unit struct and one with only a positional.
use gangway::tool::{Tool, tool};

/// Print the date.
#[tool]
struct Date;

/// Say hello.
#[tool(name = "hello")]
struct Greet {
    /// Who.
    name: Option<String>,
}

fn main() {
    Date::bind_words::<&str>(&[]).unwrap();
    assert_eq!(Date::schema().name, "date");
    let greet = Greet::bind_words(&["world"]).unwrap();
    assert_eq!(greet.name.as_deref(), Some("world"));
    assert!(Greet::schema().params[0].optional);
}
