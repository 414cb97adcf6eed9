//! The one naming rule: where a name breaks into words at a change of case,
//! shared by the default command name (`snake_case`), the default tool name
//! (`kebab_case`) and every long flag (`cli_long_name`).
//!
//! The rule is heck's (the crate serde users reach for), so an acronym stays
//! one word: `HTTPServer` is `http_server` / `http-server`, `maxResults` is
//! `max-results`, `v2Name` is `v2-name`. A word starts at an uppercase
//! letter that follows a lowercase letter or a digit, and at the last
//! capital of a run that a lowercase letter follows. `_` and `-` are
//! where a name already breaks; other characters stay in their word (so a
//! wire name such as `a.b` still makes a flag the derive refuses).

/// The name in lowercase, with `sep` wherever a word starts at a change of
/// case; `_` and `-` are kept as written.
fn break_words(name: &str, sep: char) -> String {
    /// What the letters of the current word have been so far.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Run {
        /// At the start of a word: no letter yet.
        Start,
        Lower,
        Upper,
    }
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    let mut run = Run::Start;
    for (i, &ch) in chars.iter().enumerate() {
        let next_is_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
        // After a digit a capital starts a word (`EC2VM` is `ec2_vm`), as
        // the default command names always had it.
        let after_digit = i > 0 && chars[i - 1].is_ascii_digit();
        if ch.is_uppercase()
            && (run == Run::Lower || after_digit || (run == Run::Upper && next_is_lower))
        {
            out.push(sep);
        }
        run = if ch.is_lowercase() {
            Run::Lower
        } else if ch.is_uppercase() {
            Run::Upper
        } else if ch.is_alphanumeric() {
            // A digit belongs to the word it follows.
            run
        } else {
            Run::Start
        };
        out.extend(ch.to_lowercase());
    }
    out
}

/// A type name in snake_case, the default command name (`WebSearch` →
/// `web_search`, `HTTPGet` → `http_get`).
// Used by the model (the derives and the scanner), not by the schema alone.
#[cfg_attr(not(feature = "model"), allow(dead_code))]
pub fn snake_case(ident: &str) -> String {
    break_words(ident, '_')
}

/// A type name in kebab-case, the default tool name (`WebSearch` →
/// `web-search`).
#[cfg_attr(not(feature = "model"), allow(dead_code))]
pub fn kebab_case(ident: &str) -> String {
    snake_case(ident).replace('_', "-")
}

/// The long command-line flag for a wire name, without the leading `--`:
/// its words lowercased and joined with `-`, runs of `_` and `-` as one,
/// none at either end (`max_results`, `maxResults` and `MAX_RESULTS` all
/// give `max-results`; `HTTPServer` gives `http-server`).
pub fn cli_long_name(wire_name: &str) -> String {
    let broken = break_words(wire_name, '-');
    let mut out = String::with_capacity(broken.len());
    for word in broken.split(['_', '-']).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names() {
        assert_eq!(snake_case("WebSearch"), "web_search");
        assert_eq!(snake_case("HTTPGet"), "http_get");
        assert_eq!(snake_case("Ping"), "ping");
        assert_eq!(snake_case("Search2Web"), "search2_web");
        assert_eq!(snake_case("EC2VM"), "ec2_vm");
        assert_eq!(snake_case("X2Y"), "x2_y");
        assert_eq!(snake_case("_Internal"), "_internal");
        assert_eq!(snake_case("MAX_RESULTS"), "max_results");
        assert_eq!(kebab_case("WebSearch"), "web-search");
        assert_eq!(kebab_case("HTTPServer"), "http-server");
    }

    #[test]
    fn long_names_are_kebab_case() {
        assert_eq!(cli_long_name("max_results"), "max-results");
        assert_eq!(cli_long_name("maxResults"), "max-results");
        assert_eq!(cli_long_name("MAX_RESULTS"), "max-results");
        assert_eq!(cli_long_name("q"), "q");
        assert_eq!(cli_long_name("v2_name"), "v2-name");
        assert_eq!(cli_long_name("v2Name"), "v2-name");
        assert_eq!(cli_long_name("_private_"), "private");
        assert_eq!(cli_long_name("a__b--c"), "a-b-c");
        assert_eq!(cli_long_name("HTTPServer"), "http-server");
        assert_eq!(cli_long_name("userID"), "user-id");
        assert_eq!(cli_long_name("a.b"), "a.b");
    }

    #[test]
    fn one_rule_for_type_names_and_flags() {
        for name in [
            "HTTPServer",
            "WebSearch",
            "maxResults",
            "Search2Web",
            "IOError",
        ] {
            assert_eq!(cli_long_name(name), kebab_case(name), "{name}");
        }
    }
}
