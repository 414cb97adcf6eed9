//! The `gangway` command; see the `gangway-cli` library for what it does.

fn main() {
    std::process::exit(gangway_cli::run(std::env::args_os()));
}
