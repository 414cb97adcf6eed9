//! `gangway list [--json]`: inside a sandbox, the commands it may call, as
//! the host answers for the sandbox's token (a scoped sandbox sees only its
//! scope's): one line per command with its description, or the manifest
//! as JSON.

use super::say::say;
use std::fmt::Write as _;

use super::print::write_stdout;
use super::say::report_error;
use crate::ipc::{IpcClient, exit};
use crate::tool::Manifest;

/// How to call `list`.
pub(super) const USAGE: &str = "list [--json]";

/// Runs `list` with the words after it.
pub(super) fn run_list(program: &str, words: &[String]) -> i32 {
    let json = match words {
        [] => false,
        [flag] if flag == "--json" => true,
        [flag] if flag == "--help" || flag == "-h" => {
            return write_stdout(
                format!(
                    "List the host commands this sandbox may call.\n\n\
                     Usage: {program} {USAGE}\n\n  --json  the manifest (every command's schema) as JSON\n"
                )
                .as_bytes(),
            );
        }
        _ => {
            say(format!(
                "{program} list: unexpected `{}`\nusage: {program} {USAGE}",
                words.join(" ")
            ));
            return exit::USAGE;
        }
    };
    let manifest = IpcClient::from_env_deferred().and_then(|mut client| client.list());
    let manifest = match manifest {
        Ok(manifest) => manifest,
        Err(error) => return report_error(&format!("{program} list"), &error),
    };
    if json {
        return match serde_json::to_string_pretty(&manifest) {
            Ok(text) => write_stdout(format!("{text}\n").as_bytes()),
            Err(error) => {
                say(format!("{program} list: {error}"));
                exit::FAILURE
            }
        };
    }
    // The host's descriptions, for a person: shown safely.
    write_stdout(super::say::shown(&table(&manifest)).as_bytes())
}

/// One line per command: its name, padded, and the first line of its
/// description.
fn table(manifest: &Manifest) -> String {
    let width = manifest
        .commands
        .iter()
        .map(|tool| tool.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for tool in &manifest.commands {
        let summary = tool.description.lines().next().unwrap_or("").trim();
        let line = format!("{:width$}  {summary}", tool.name);
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ToolSchema;

    #[test]
    fn the_table_aligns_descriptions_and_keeps_their_first_line() {
        let manifest = Manifest::new(vec![
            ToolSchema::new("search").with_description("Search the web.\nMore here."),
            ToolSchema::new("wc"),
        ]);
        assert_eq!(table(&manifest), "search  Search the web.\nwc\n");
    }
}
