//! One reading of a rules file: its rules, checked and indexed, and the
//! text they were read from (what an "always" answer adds a rule to when
//! the rules have no file). A policy swaps in a new reading when its file
//! changes; a reading itself never changes.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::error::{PolicyError, PolicyProblem, Problems};
use super::evaluate::{self, Finding, RuleIndex};
use super::model::{Action, Rule};
use super::toml_read::Reader;
use super::{check, examples, file};
use crate::tool::Manifest;

/// The largest rules file read.
const MAX_RULES_FILE: u64 = 16 << 20;

/// What problems name as the file of rules given as text.
pub(crate) const TEXT_SOURCE: &str = "<policy text>";

/// Rules read and checked.
#[derive(Debug)]
pub(crate) struct RuleSet {
    /// The file problems name: its path, or [`TEXT_SOURCE`].
    pub(crate) source: String,
    /// The text the rules were read from.
    pub(crate) text: String,
    /// The decision when no rule matches.
    pub(crate) default: Action,
    /// The rules, in file order.
    pub(crate) rules: Vec<Rule>,
    /// The rules by command.
    index: RuleIndex,
    /// What is odd in the file without stopping it loading.
    pub(crate) notes: Vec<PolicyProblem>,
    /// The file as it was when read (from before the reading).
    pub(crate) stamp: Option<[i64; 7]>,
}

impl RuleSet {
    /// Reads and checks `text`, whose problems name `source`.
    pub(crate) fn parse(text: String, source: String) -> Result<RuleSet, PolicyError> {
        let mut reader = Reader::new(&text, &source);
        let rules_file = file::read_rules(&text, &mut reader);
        let mut notes = Problems::new(&source);
        file::check_approves(&rules_file.rules, &mut notes);
        let notes = notes.into_notes();
        for note in &notes {
            tracing::warn!(target: "gangway::policy", "{note}");
        }
        examples::check_examples(&rules_file.rules, &mut reader);
        let index = RuleIndex::new(&rules_file.rules).unwrap_or_else(|message| {
            reader.problems.add(None, None, message);
            RuleIndex::default()
        });
        reader.problems.finish(RuleSet {
            source,
            text,
            default: rules_file.default,
            rules: rules_file.rules,
            index,
            notes,
            stamp: None,
        })
    }

    /// Reads and checks the file at `path`.
    pub(crate) fn load(path: &Path) -> Result<RuleSet, PolicyError> {
        let before = stamp(path);
        let text = read_rules_text(path)?;
        let mut rules = RuleSet::parse(text, path.display().to_string())?;
        rules.stamp = before;
        Ok(rules)
    }

    /// The problems of these rules with the commands of `manifest`.
    pub(crate) fn check_against(&self, manifest: &Manifest) -> Result<(), PolicyError> {
        let mut problems = Problems::new(&self.source);
        check::check_rules(&self.rules, manifest, &mut problems);
        problems.finish(())
    }

    /// What the rules say of `command` called from `scope` with `args`.
    pub(crate) fn evaluate(&self, scope: Option<&str>, command: &str, args: &Value) -> Finding<'_> {
        evaluate::evaluate(&self.rules, &self.index, self.default, scope, command, args)
    }

    /// How many rules, and how many examples among them.
    pub(crate) fn counts(&self) -> (usize, usize) {
        let examples = self.rules.iter().map(|rule| rule.examples.len()).sum();
        (self.rules.len(), examples)
    }
}

/// The text of the rules file at `path`: a regular file (not a device or a
/// pipe, which could be endless or block) of at most 16 MiB, in UTF-8.
pub(crate) fn read_rules_text(path: &Path) -> Result<String, PolicyError> {
    let read_error = |source| PolicyError::Read {
        path: PathBuf::from(path),
        source,
    };
    let meta = std::fs::metadata(path).map_err(read_error)?;
    if !meta.is_file() || meta.len() > MAX_RULES_FILE {
        let why = if meta.is_file() {
            format!("it is over {} MiB", MAX_RULES_FILE >> 20)
        } else {
            "it is not a regular file".to_owned()
        };
        return Err(read_error(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            why,
        )));
    }
    std::fs::read_to_string(path).map_err(read_error)
}

/// What tells one version of the rules file from another without reading
/// it (`None` when it cannot be looked at).
pub(crate) fn stamp(path: &Path) -> Option<[i64; 7]> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some([
        meta.dev() as i64,
        meta.ino() as i64,
        meta.len() as i64,
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
    ])
}
