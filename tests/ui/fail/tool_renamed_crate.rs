//! `#[tool(crate = ...)]` with a mistake: the one error, and no other. The
//! placeholder impl beside it names the crate by the path given (even when
//! the mistake comes first), so code using the tool still compiles.
//!
//! `gw` stands in for the `gangway` crate under another name. Its `Tool` is
//! a trait of its own, so a placeholder naming `::gangway` would leave
//! `uses::<Grep>()` unsatisfied: a second error.
mod gw {
    pub mod tool {
        pub use gangway::tool::{ToolArgs, ToolBindError, ToolSchema, tool};

        pub trait Tool: Sized {
            fn schema() -> &'static ToolSchema;
            fn bind(args: &ToolArgs) -> Result<Self, ToolBindError>;
        }
    }
}

use gw::tool::tool;

#[tool(nmae = "grep", crate = gw)]
struct Grep {
    pattern: String,
}

fn uses<T: gw::tool::Tool>() {}

fn main() {
    uses::<Grep>();
}
