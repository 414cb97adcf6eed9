//! What goes wrong loading a policy: the file cannot be read
//! ([`PolicyError::Read`]), or its rules are wrong
//! ([`PolicyError::Invalid`], every [`PolicyProblem`] found, each naming the
//! file, the line and the rule).

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Why a policy could not be loaded (or checked against a manifest).
#[derive(Debug)]
#[non_exhaustive]
pub enum PolicyError {
    /// The rules file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The rules are wrong: every problem found, in the order of their
    /// lines (never empty).
    Invalid(Vec<PolicyProblem>),
}

impl PolicyError {
    /// The problems found in the rules; empty for a file that could not be
    /// read.
    pub fn problems(&self) -> &[PolicyProblem] {
        match self {
            PolicyError::Read { .. } => &[],
            PolicyError::Invalid(problems) => problems,
        }
    }
}

impl fmt::Display for PolicyError {
    /// A file that cannot be read in one line; otherwise one line per
    /// problem.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyError::Read { path, source } => {
                write!(
                    f,
                    "cannot read the policy file {}: {source}",
                    path.display()
                )
            }
            PolicyError::Invalid(problems) => {
                for (index, problem) in problems.iter().enumerate() {
                    if index > 0 {
                        f.write_str("\n")?;
                    }
                    write!(f, "{problem}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for PolicyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PolicyError::Read { source, .. } => Some(source),
            PolicyError::Invalid(_) => None,
        }
    }
}

/// One thing wrong in a rules file, shown as
/// `policy.toml:12: rule "rm-outside": unknown key "decison"; did you mean "decision"?`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PolicyProblem {
    /// The file (its path as given to [`Policy::load`](super::Policy::load),
    /// or `<policy text>` for [`Policy::from_toml_str`](super::Policy::from_toml_str)).
    pub file: String,
    /// The line (1-based), when the problem has one.
    pub line: Option<usize>,
    /// The rule's `id`, or `#3` for the third rule when it has none; `None`
    /// for a problem outside any rule.
    pub rule: Option<String>,
    /// What is wrong and how to put it right.
    pub message: String,
}

impl fmt::Display for PolicyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        match &self.rule {
            Some(rule) if rule.starts_with('#') => write!(f, ": rule {rule}")?,
            Some(rule) => write!(f, ": rule {rule:?}")?,
            None => {}
        }
        write!(f, ": {}", self.message)
    }
}

/// Collects problems as a file is read, so that all are reported at once.
pub(crate) struct Problems {
    file: String,
    found: Vec<PolicyProblem>,
}

impl Problems {
    /// None yet, in `file`.
    pub(crate) fn new(file: &str) -> Self {
        Problems {
            file: file.to_owned(),
            found: Vec::new(),
        }
    }

    /// Notes one.
    pub(crate) fn add(&mut self, line: Option<usize>, rule: Option<&str>, message: String) {
        self.found.push(PolicyProblem {
            file: self.file.clone(),
            line,
            rule: rule.map(str::to_owned),
            message,
        });
    }

    /// How many so far.
    pub(crate) fn count(&self) -> usize {
        self.found.len()
    }

    /// Every one, by line: for notes that do not stop a file loading.
    pub(crate) fn into_notes(mut self) -> Vec<PolicyProblem> {
        self.found.sort_by_key(|problem| problem.line);
        self.found
    }

    /// `Ok(value)` when none were found, else every one, by line.
    pub(crate) fn finish<T>(mut self, value: T) -> Result<T, PolicyError> {
        if self.found.is_empty() {
            Ok(value)
        } else {
            // Stable: problems on one line keep the order they were found in.
            self.found.sort_by_key(|problem| problem.line);
            Err(PolicyError::Invalid(self.found))
        }
    }
}

/// `; did you mean "x"?` when a candidate is close to `input`, else nothing.
pub(crate) fn did_you_mean<'a>(
    input: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> String {
    match crate::tool::closest(input, candidates) {
        Some(close) => format!("; did you mean {close:?}?"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_show_file_line_and_rule() {
        let mut problems = Problems::new("policy.toml");
        problems.add(Some(9), Some("#2"), "second".into());
        problems.add(Some(3), Some("rm"), "first".into());
        problems.add(None, None, "no line".into());
        let error = problems.finish(()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "policy.toml: no line\npolicy.toml:3: rule \"rm\": first\npolicy.toml:9: rule #2: second"
        );
        assert_eq!(error.problems().len(), 3);
        assert!(Problems::new("x").finish(7).is_ok());
    }

    #[test]
    fn suggestions_only_when_close() {
        assert_eq!(
            did_you_mean("decison", ["decision", "reason"]),
            "; did you mean \"decision\"?"
        );
        assert_eq!(did_you_mean("zzz", ["decision"]), "");
    }
}
