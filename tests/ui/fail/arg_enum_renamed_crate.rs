//! `#[arg_enum(crate = ...)]` with a mistake: the one error, and no other.
//! The placeholder impl beside it names the crate by the path given, so code
//! using the type still compiles.
//!
//! `gw` stands in for the `gangway` crate under another name. Its `ArgType`
//! is a trait of its own, so a placeholder naming `::gangway` would leave
//! `uses::<Shape>()` unsatisfied: a second error.
mod gw {
    pub use gangway::ArgEnum;

    pub mod tool {
        pub use gangway::tool::ValueKind;

        pub trait ArgType {
            const KIND: ValueKind;
        }
    }
}

use gw::ArgEnum;

#[derive(serde::Deserialize, ArgEnum)]
#[arg_enum(crate = gw)]
enum Shape {
    Circle(f64),
    Dot,
}

fn uses<T: gw::tool::ArgType>() {}

fn main() {
    uses::<Shape>();
}
