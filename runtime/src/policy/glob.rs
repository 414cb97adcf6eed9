//! Glob patterns, compiled once when the rules load: a rule's `command`
//! and `scope` (a name, or a pattern of names), and the `glob` condition.
//!
//! The syntax is globset's: `*` any run of characters but `/`, `**` any
//! run including `/`, `?` one character, `[abc]` and `[!abc]` classes,
//! `{a,b}` alternatives, `\` to escape. Matching is case-sensitive.

use globset::{Candidate, Glob, GlobBuilder, GlobMatcher};

/// Whether `text` has a character that makes it a pattern rather than a
/// plain name.
pub(crate) fn is_pattern(text: &str) -> bool {
    text.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

/// Compiles a glob, or says what is wrong with it.
pub(crate) fn compile(pattern: &str) -> Result<Glob, String> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|error| format!("bad glob {pattern:?}: {}", error.kind()))
}

/// Whether `text` matches a compiled glob.
pub(crate) fn glob_matches(matcher: &GlobMatcher, text: &str) -> bool {
    matcher.is_match_candidate(&Candidate::from_bytes(text.as_bytes()))
}

/// A rule's `command` or `scope`: one name, or a glob of names.
#[derive(Debug, Clone)]
pub(crate) enum NamePattern {
    /// This name exactly.
    Exact(String),
    /// Any name the glob matches.
    Glob(GlobMatcher),
}

impl NamePattern {
    /// The pattern for `text`: a glob when it has glob characters.
    pub(crate) fn new(text: &str) -> Result<Self, String> {
        if is_pattern(text) {
            Ok(NamePattern::Glob(compile(text)?.compile_matcher()))
        } else {
            Ok(NamePattern::Exact(text.to_owned()))
        }
    }

    /// The pattern as written.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            NamePattern::Exact(name) => name,
            NamePattern::Glob(matcher) => matcher.glob().glob(),
        }
    }

    /// Whether `name` matches.
    pub(crate) fn matches(&self, name: &str) -> bool {
        match self {
            NamePattern::Exact(exact) => exact == name,
            NamePattern::Glob(matcher) => glob_matches(matcher, name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_globs() {
        let exact = NamePattern::new("rm").unwrap();
        assert!(matches!(exact, NamePattern::Exact(_)));
        assert!(exact.matches("rm") && !exact.matches("rmdir"));
        let git = NamePattern::new("git-*").unwrap();
        assert!(git.matches("git-push") && git.matches("git-") && !git.matches("gitk"));
        assert_eq!(git.as_str(), "git-*");
        let either = NamePattern::new("{cp,mv}").unwrap();
        assert!(either.matches("cp") && either.matches("mv") && !either.matches("rm"));
        let one = NamePattern::new("agent-?").unwrap();
        assert!(one.matches("agent-1") && !one.matches("agent-12"));
    }

    #[test]
    fn a_star_stays_within_a_path_component() {
        let glob = compile("/workspace/*.txt").unwrap().compile_matcher();
        assert!(glob_matches(&glob, "/workspace/a.txt"));
        assert!(!glob_matches(&glob, "/workspace/a/b.txt"));
        let deep = compile("/workspace/**/*.txt").unwrap().compile_matcher();
        assert!(glob_matches(&deep, "/workspace/a/b.txt"));
    }

    #[test]
    fn bad_globs_say_why() {
        let error = compile("git-[").unwrap_err();
        assert!(error.starts_with("bad glob \"git-[\": "), "{error}");
        assert!(compile("{a,b").is_err());
    }
}
