//! Glob patterns, compiled once when the rules load: a rule's `command`
//! and `scope` (a name, or a pattern of names), and the `glob` condition.
//!
//! The syntax is globset's: `**` any run of characters including `/`, `?`
//! one character, `[abc]` and `[!abc]` classes, `{a,b}` alternatives, `\`
//! to escape. Matching is case-sensitive. In a value glob (the `glob`
//! test) `*` is any run of characters but `/`; in a name pattern
//! (`command`, `scope`) it is any run at all, since names may contain `/`.

use globset::{Candidate, Glob, GlobBuilder, GlobMatcher};

/// Whether `text` has a character that makes it a pattern rather than a
/// plain name.
pub(crate) fn is_pattern(text: &str) -> bool {
    text.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

/// Compiles a value glob (`*` stays within a path component), or says what
/// is wrong with it.
pub(crate) fn compile(pattern: &str) -> Result<Glob, String> {
    build(pattern, true)
}

/// Compiles a name pattern (`*` crosses `/`), or says what is wrong with it.
pub(crate) fn compile_name(pattern: &str) -> Result<Glob, String> {
    build(pattern, false)
}

fn build(pattern: &str, literal_separator: bool) -> Result<Glob, String> {
    GlobBuilder::new(pattern)
        .literal_separator(literal_separator)
        .backslash_escape(true)
        .build()
        .map_err(|error| format!("bad glob {pattern:?}: {}", error.kind()))
}

/// Whether `text` matches a compiled glob.
pub(crate) fn glob_matches(matcher: &GlobMatcher, text: &str) -> bool {
    matcher.is_match_candidate(&Candidate::from_bytes(text.as_bytes()))
}

/// A `glob` test, compiled: the glob, and what decides a value.
#[derive(Debug, Clone)]
pub(crate) struct ValueGlob {
    /// The glob as written.
    matcher: GlobMatcher,
    /// For a glob whose alternatives end in `/**`: the same glob with that
    /// ending cut, so that `/data/**` matches `/data` itself too.
    folder: Option<GlobMatcher>,
    /// Whether it names absolute paths: it starts with `/`, or one of the
    /// alternatives it starts with does.
    rooted: bool,
}

impl ValueGlob {
    /// Compiles `pattern`, or says what is wrong with it.
    pub(crate) fn new(pattern: &str) -> Result<Self, String> {
        let matcher = compile(pattern)?.compile_matcher();
        let cut = cut_double_star_endings(pattern);
        let folder = match cut.as_str() {
            _ if cut == pattern => None,
            "" => Some(compile("/")?.compile_matcher()),
            cut => Some(compile(cut)?.compile_matcher()),
        };
        let rooted = pattern.starts_with('/')
            || (pattern.starts_with('{') && (pattern.starts_with("{/") || pattern.contains(",/")));
        Ok(ValueGlob {
            matcher,
            folder,
            rooted,
        })
    }

    /// The glob as written.
    pub(crate) fn as_str(&self) -> &str {
        self.matcher.glob().glob()
    }

    /// Whether the glob names absolute paths, so that a relative path
    /// cannot be told against it.
    pub(crate) fn is_rooted(&self) -> bool {
        self.rooted
    }

    /// Whether `text` (normalized already, if it is a path) matches.
    pub(crate) fn matches(&self, text: &str) -> bool {
        let candidate = Candidate::from_bytes(text.as_bytes());
        self.matcher.is_match_candidate(&candidate)
            || self
                .folder
                .as_ref()
                .is_some_and(|folder| folder.is_match_candidate(&candidate))
    }
}

/// `pattern` with each `/**` that ends it, or ends one of its alternatives
/// (before a `,` or `}`), cut.
fn cut_double_star_endings(pattern: &str) -> String {
    let mut cut = String::with_capacity(pattern.len());
    let mut rest = pattern;
    while let Some(at) = rest.find("/**") {
        let after = &rest[at + 3..];
        let escaped = rest[..at].ends_with('\\');
        let ends = after.is_empty() || after.starts_with([',', '}']);
        cut.push_str(&rest[..at]);
        if escaped || !ends {
            cut.push_str("/**");
        }
        rest = after;
    }
    cut.push_str(rest);
    cut
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
            Ok(NamePattern::Glob(compile_name(text)?.compile_matcher()))
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
    fn name_patterns_let_a_star_cross_slashes() {
        let scope = NamePattern::new("team/*").unwrap();
        assert!(scope.matches("team/a/b") && !scope.matches("other/a"));
    }

    #[test]
    fn double_star_endings_are_cut_for_the_folder_itself() {
        assert_eq!(cut_double_star_endings("/data/**"), "/data");
        assert_eq!(cut_double_star_endings("{/a/**,/b/**}"), "{/a,/b}");
        assert_eq!(cut_double_star_endings("/a/**/*.txt"), "/a/**/*.txt");
        assert_eq!(cut_double_star_endings("/a\\/**"), "/a\\/**");
        assert_eq!(cut_double_star_endings("/**"), "");
        let glob = ValueGlob::new("/data/**").unwrap();
        assert!(glob.matches("/data") && glob.matches("/data/x") && !glob.matches("/database"));
        assert!(ValueGlob::new("/**").unwrap().matches("/"));
        assert!(glob.is_rooted() && ValueGlob::new("{/a,/b}").unwrap().is_rooted());
        assert!(!ValueGlob::new("**/*.txt").unwrap().is_rooted());
    }

    #[test]
    fn bad_globs_say_why() {
        let error = compile("git-[").unwrap_err();
        assert!(error.starts_with("bad glob \"git-[\": "), "{error}");
        assert!(compile("{a,b").is_err());
    }
}
