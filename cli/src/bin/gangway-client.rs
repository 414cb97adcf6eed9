//! `gangway-client`: the program a wrapper runs for one call, and nothing
//! else, so a call costs little more than starting a minimal program.
//!
//! - As itself: `gangway-client call <command> [--stdin <arg>] -- <args...>`
//!   (what a script wrapper runs), `--version`, `--help`.
//! - Through a link named after a command (`search -> gangway`, what
//!   `gangway wrappers --style links` writes): `search <args...>`.
//!
//! [`gangway::caller`] is the whole of it: how responses print, when standard
//! input is read, and the exit codes.

fn main() {
    std::process::exit(gangway::caller::run(std::env::args_os()));
}
