//! An "always" answer, written down: an `allow` rule for the command and
//! the argument values the answer covers, which `approves` the rules that
//! asked, added at the end of the rules file with the file's comments and
//! layout kept, and the file replaced in one step (a new file renamed over
//! it), so no reader ever sees half of it.

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::Path;
use std::time::SystemTime;

use serde_json::Value as Json;
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, Value};

use super::pin::{Covered, Pinned};

/// Who answered, for the comment above the rule.
pub(crate) struct Answered {
    /// The scope the call came from.
    pub(crate) scope: Option<String>,
}

/// `text` (a rules file) with an allow rule for what `covered` holds
/// added at its end; `is_secret` tells which arguments are secrets (left
/// free: no one saw them). `Err` says why no such rule can be written.
pub(crate) fn with_rule_added(
    text: &str,
    covered: &Covered,
    answered: &Answered,
    is_secret: &dyn Fn(&str) -> bool,
) -> Result<String, String> {
    let mut document: DocumentMut = text
        .parse()
        .map_err(|error| format!("the rules file is not valid TOML: {error}"))?;
    let taken: HashSet<String> = rule_ids(&document);
    let id = (1..)
        .map(|n| format!("approved-{}-{n}", covered.command))
        .find(|id| !taken.contains(id))
        .expect("some number is free");
    let mut rule = Table::new();
    rule.insert("id", Item::Value(id.into()));
    rule.insert(
        "command",
        Item::Value(globset::escape(&covered.command).into()),
    );
    let when = when_table(covered, is_secret)?;
    if !when.is_empty() {
        rule.insert("when", Item::Value(Value::InlineTable(when)));
    }
    rule.insert("decision", Item::Value("allow".into()));
    if !covered.asked_by.is_empty() {
        let ids: Array = covered.asked_by.iter().map(String::as_str).collect();
        rule.insert("approves", Item::Value(Value::Array(ids)));
    }
    rule.decor_mut().set_prefix(comment(covered, answered));
    match document.get_mut("rule") {
        None => {
            let mut rules = toml_edit::ArrayOfTables::new();
            rules.push(rule);
            document.insert("rule", Item::ArrayOfTables(rules));
        }
        Some(Item::ArrayOfTables(rules)) => rules.push(rule),
        Some(Item::Value(Value::Array(rules))) => {
            rules.push(Value::InlineTable(rule.into_inline_table()));
        }
        Some(_) => return Err("the rules file's `rule` is not a list of rules".to_owned()),
    }
    Ok(document.to_string())
}

/// The ids the file's rules have.
fn rule_ids(document: &DocumentMut) -> HashSet<String> {
    let ids = |table: &dyn toml_edit::TableLike| table.get("id")?.as_str().map(str::to_owned);
    match document.get("rule") {
        Some(Item::ArrayOfTables(rules)) => rules.iter().filter_map(|rule| ids(rule)).collect(),
        Some(Item::Value(Value::Array(rules))) => rules
            .iter()
            .filter_map(|rule| ids(rule.as_inline_table()?))
            .collect(),
        _ => HashSet::new(),
    }
}

/// The rule's `when`: each covered argument held to its value.
fn when_table(covered: &Covered, is_secret: &dyn Fn(&str) -> bool) -> Result<InlineTable, String> {
    let mut when = InlineTable::new();
    for (name, pinned) in &covered.args {
        let mut test = InlineTable::new();
        match pinned {
            Pinned::Equals(value) => {
                test.insert("equals", toml_value(value)?);
            }
            Pinned::List(_) => {
                // No test holds a list to its elements in order: `one_of`
                // would let them through in any order, any number of times.
                return Err(format!(
                    "`{name}` is a list, and a rule cannot hold a list to its elements in their order"
                ));
            }
            Pinned::Absent => {
                test.insert("absent", true.into());
            }
            Pinned::Secret if is_secret(name) => continue,
            Pinned::Secret => {
                return Err(format!(
                    "`{name}` reads \"<redacted>\", and without the host's commands (check_against) \
                     the policy cannot tell a secret from that text"
                ));
            }
        }
        when.insert(name, Value::InlineTable(test));
    }
    Ok(when)
}

/// A JSON scalar as TOML.
fn toml_value(value: &Json) -> Result<Value, String> {
    match value {
        Json::String(text) => Ok(text.as_str().into()),
        Json::Bool(flag) => Ok((*flag).into()),
        Json::Number(number) => number
            .as_i64()
            .map(Value::from)
            .or_else(|| {
                number
                    .as_u64()
                    .is_none()
                    .then(|| number.as_f64())
                    .flatten()
                    .map(Value::from)
            })
            .ok_or_else(|| format!("{number} is past what a TOML integer holds")),
        other => Err(format!("{other} cannot be written in a rule")),
    }
}

/// The comment above the rule: when, and what was answered.
fn comment(covered: &Covered, answered: &Answered) -> String {
    let when = humantime::format_rfc3339_seconds(SystemTime::now());
    let scope = answered.scope.as_ref().map_or_else(
        || "the full-access token".to_owned(),
        |scope| format!("scope {scope:?}"),
    );
    // Debug-quoted, so no id or scope starts a line of its own.
    let asked = match covered.asked_by.as_slice() {
        [] => "the policy's default".to_owned(),
        ids => format!("rule {ids:?}"),
    };
    format!(
        "\n# Added by gangway at {when}: a person answered \"always\" to {:?} from {scope}\n\
         # (asked by {asked}).\n",
        covered.command
    )
}

/// Replaces the file at `path` with `text` in one step: a file beside it,
/// written, given the old one's permissions and flushed to disk, renamed
/// over it. A symbolic link is followed: the file it names is replaced.
pub(crate) fn replace_file(path: &Path, text: &str) -> io::Result<()> {
    let target = std::fs::canonicalize(path)?;
    let dir = target.parent().unwrap_or(Path::new("/"));
    let mut temp = tempfile::Builder::new()
        .prefix(".gangway-rules-")
        .tempfile_in(dir)?;
    temp.write_all(text.as_bytes())?;
    temp.as_file()
        .set_permissions(std::fs::metadata(&target)?.permissions())?;
    temp.as_file().sync_all()?;
    temp.persist(&target).map_err(|error| error.error)?;
    // The rename itself is on disk once the folder is.
    if let Ok(folder) = std::fs::File::open(dir) {
        let _ = folder.sync_all();
    }
    Ok(())
}
