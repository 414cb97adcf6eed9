//! Every test of a `when`, lists, values not shown whole, and paths.

use serde_json::json;

use super::{holds, matches_as};

#[test]
fn equals_compares_strings_numbers_and_booleans() {
    let when = r#"{ mode = { equals = "fast" } }"#;
    assert!(holds(when, json!({ "mode": "fast" })));
    assert!(!holds(when, json!({ "mode": "Fast" })));
    assert!(!holds(when, json!({ "mode": 1 })));
    assert!(holds("{ n = { equals = 1 } }", json!({ "n": 1.0 })));
    assert!(!holds("{ n = { equals = 1 } }", json!({ "n": "1" })));
    assert!(holds(
        "{ force = { equals = true } }",
        json!({ "force": true })
    ));
    assert!(!holds(
        "{ force = { equals = true } }",
        json!({ "force": false })
    ));
}

#[test]
fn one_of_is_any_of_its_values() {
    let when = r#"{ mode = { one_of = ["fast", "slow", 3] } }"#;
    assert!(holds(when, json!({ "mode": "slow" })));
    assert!(holds(when, json!({ "mode": 3 })));
    assert!(!holds(when, json!({ "mode": "medium" })));
}

#[test]
fn glob_matches_text_and_path_globs_normalize() {
    let text = r#"{ name = { glob = "*.txt" } }"#;
    assert!(holds(text, json!({ "name": "notes.txt" })));
    assert!(
        !holds(text, json!({ "name": "dir/notes.txt" })),
        "* stays in one component"
    );
    assert!(!holds(text, json!({ "name": 7 })));
    assert!(holds(
        r#"{ name = { glob = "**/*.txt" } }"#,
        json!({ "name": "/a/b/notes.txt" })
    ));
    assert!(holds(
        r#"{ name = { glob = "{a,b}?[0-9]" } }"#,
        json!({ "name": "bx7" })
    ));
    let path = r#"{ path = { glob = "/workspace/**" } }"#;
    assert!(holds(path, json!({ "path": "/workspace/a/b" })));
    assert!(holds(path, json!({ "path": "/workspace//a/./b" })));
    assert!(
        !holds(path, json!({ "path": "/workspace/../etc/passwd" })),
        "normalized first"
    );
    assert!(
        holds(path, json!({ "path": "workspace/a" })),
        "a relative path is unknown to a glob of absolute paths: a deny rule fires"
    );
    assert!(!matches_as("allow", path, json!({ "path": "workspace/a" })));
}

#[test]
fn regex_must_match_the_whole_value() {
    let when = r#"{ url = { regex = "https://example\\.com/.*" } }"#;
    assert!(holds(when, json!({ "url": "https://example.com/a" })));
    assert!(!holds(
        when,
        json!({ "url": "http://evil/?https://example.com/" })
    ));
    assert!(!holds(
        r#"{ url = { regex = "ab" } }"#,
        json!({ "url": "xaby" })
    ));
    assert!(
        holds(r#"{ url = { regex = "a|b" } }"#, json!({ "url": "b" })),
        "alternation anchored as a whole"
    );
    assert!(!holds(
        r#"{ url = { regex = "a|b" } }"#,
        json!({ "url": "ab" })
    ));
    assert!(!holds(when, json!({ "url": 3 })));
}

#[test]
fn under_and_not_under_normalize_lexically() {
    let under = r#"{ path = { under = "/workspace" } }"#;
    let not_under = r#"{ path = { not_under = "/workspace/" } }"#;
    for (path, inside) in [
        ("/workspace", true),
        ("/workspace/tmp/x", true),
        ("/workspace//tmp/./x", true),
        ("/workspace/a/../b", true),
        ("/workspace/../etc", false),
        ("/workspace/..", false),
        ("/workspace2/x", false),
        ("/etc/passwd", false),
    ] {
        assert_eq!(
            holds(under, json!({ "path": path })),
            inside,
            "under: {path}"
        );
        assert_eq!(
            holds(not_under, json!({ "path": path })),
            !inside,
            "not_under: {path}"
        );
    }
}

#[test]
fn relative_paths_are_unknown_to_under_and_not_under() {
    let under = r#"{ path = { under = "/workspace" } }"#;
    let not_under = r#"{ path = { not_under = "/workspace" } }"#;
    for relative in ["tmp/x", "./x", "../workspace/x", "~/x", ""] {
        for when in [under, not_under] {
            let args = json!({ "path": relative });
            assert!(matches_as("deny", when, args.clone()), "{when} {relative}");
            assert!(matches_as("ask", when, args.clone()), "{when} {relative}");
            assert!(!matches_as("allow", when, args), "{when} {relative}");
        }
    }
    assert!(
        holds(not_under, json!({ "path": 5 })),
        "not a path is not under"
    );
    assert!(!holds(under, json!({ "path": 5 })));
}

#[test]
fn min_and_max_bound_numbers() {
    let when = "{ n = { min = 2, max = 10 } }";
    assert!(holds(when, json!({ "n": 2 })));
    assert!(holds(when, json!({ "n": 10 })));
    assert!(holds(when, json!({ "n": 9.5 })));
    assert!(!holds(when, json!({ "n": 1 })));
    assert!(!holds(when, json!({ "n": 11 })));
    assert!(!holds(when, json!({ "n": "5" })), "text is not a number");
    assert!(holds("{ n = { min = 0.5 } }", json!({ "n": 1 })));
    assert!(holds("{ n = { min = 0 } }", json!({ "n": u64::MAX })));
    assert!(holds("{ n = { max = -1 } }", json!({ "n": i64::MIN })));
}

#[test]
fn present_and_absent() {
    let present = "{ force = { present = true } }";
    let absent = "{ force = { absent = true } }";
    assert!(holds(present, json!({ "force": false })));
    assert!(!holds(present, json!({})));
    assert!(holds(absent, json!({})));
    assert!(holds(absent, json!({ "force": null })), "null is not given");
    assert!(
        holds(absent, json!({ "force": [] })),
        "an empty list is not given"
    );
    assert!(!holds(absent, json!({ "force": [1] })));
    assert!(holds("{ force = { present = false } }", json!({})));
    assert!(holds(
        "{ force = { absent = false } }",
        json!({ "force": 1 })
    ));
}

#[test]
fn a_missing_argument_passes_no_value_test() {
    for when in [
        r#"{ path = { under = "/w" } }"#,
        r#"{ path = { not_under = "/w" } }"#,
        r#"{ path = { equals = "x" } }"#,
        r#"{ path = { glob = "*" } }"#,
        "{ path = { max = 3 } }",
    ] {
        assert!(!holds(when, json!({})), "{when}");
        assert!(!holds(when, json!({ "path": null })), "{when}");
    }
}

#[test]
fn a_list_passes_an_allow_rule_when_every_element_does_and_others_when_any_does() {
    let under = r#"{ paths = { under = "/workspace" } }"#;
    let inside = json!({ "paths": ["/workspace/a", "/workspace/b"] });
    let mixed = json!({ "paths": ["/workspace/a", "/etc"] });
    let outside = json!({ "paths": ["/etc", "/tmp"] });
    for decision in ["allow", "deny", "ask"] {
        assert!(matches_as(decision, under, inside.clone()), "{decision}");
        assert!(!matches_as(decision, under, outside.clone()), "{decision}");
    }
    assert!(!matches_as("allow", under, mixed.clone()));
    assert!(matches_as("deny", under, mixed.clone()));
    assert!(matches_as("ask", under, mixed));
    let not_under = r#"{ paths = { not_under = "/secrets" } }"#;
    let one_secret = json!({ "paths": ["/tmp/a", "/secrets/key"] });
    assert!(!matches_as("allow", not_under, one_secret.clone()));
    assert!(matches_as("deny", not_under, one_secret));
    let one_of = r#"{ tags = { one_of = ["a", "b"] } }"#;
    assert!(matches_as(
        "allow",
        one_of,
        json!({ "tags": ["a", "b", "a"] })
    ));
    assert!(!matches_as("allow", one_of, json!({ "tags": ["a", "c"] })));
    assert!(matches_as("deny", one_of, json!({ "tags": ["c", "a"] })));
    assert!(!matches_as("deny", one_of, json!({ "tags": ["c", "d"] })));
    assert!(matches_as(
        "allow",
        "{ n = { max = 3 } }",
        json!({ "n": [1, 2, 3] })
    ));
    assert!(!matches_as(
        "allow",
        "{ n = { max = 3 } }",
        json!({ "n": [1, 4] })
    ));
}

#[test]
fn not_under_fires_when_any_element_is_outside() {
    let not_under = r#"{ paths = { not_under = "/workspace" } }"#;
    assert!(holds(
        not_under,
        json!({ "paths": ["/workspace/a", "/etc/passwd"] })
    ));
    assert!(holds(
        not_under,
        json!({ "paths": ["/workspace/a", "relative"] })
    ));
    assert!(!holds(
        not_under,
        json!({ "paths": ["/workspace/a", "/workspace/b"] })
    ));
}

#[test]
fn an_empty_list_is_not_given() {
    for when in [
        r#"{ paths = { under = "/workspace" } }"#,
        r#"{ paths = { not_under = "/workspace" } }"#,
        r#"{ paths = { present = true } }"#,
    ] {
        assert!(!holds(when, json!({ "paths": [] })), "{when}");
    }
}

#[test]
fn every_test_and_every_argument_must_hold() {
    let when = r#"{ path = { under = "/w", glob = "/**/*.txt" }, force = { equals = true } }"#;
    assert!(holds(when, json!({ "path": "/w/a.txt", "force": true })));
    assert!(!holds(when, json!({ "path": "/w/a.txt", "force": false })));
    assert!(!holds(when, json!({ "path": "/w/a.md", "force": true })));
    assert!(!holds(when, json!({ "path": "/w/a.txt" })));
}

#[test]
fn what_is_not_seen_whole_denies_and_asks_but_never_allows() {
    let when = r#"{ path = { under = "/workspace" } }"#;
    let cut = format!("/workspace/{}… (5000 bytes)", "a".repeat(1200));
    for unseen in [
        json!("<redacted>"),
        json!(cut),
        json!("<a value of 20000 bytes>"),
        json!("<3 bytes>"),
    ] {
        let args = json!({ "path": unseen });
        assert!(matches_as("deny", when, args.clone()), "{args}");
        assert!(matches_as("ask", when, args.clone()), "{args}");
        assert!(!matches_as("allow", when, args.clone()), "{args}");
    }
    let list = json!({ "path": ["/workspace/a", "<redacted>"] });
    assert!(!matches_as("allow", when, list.clone()));
    assert!(matches_as("deny", when, list));
    let failing = json!({ "path": ["/etc", "<redacted>"] });
    assert!(
        matches_as("deny", when, failing.clone()),
        "the unseen element may be under: a deny rule fires"
    );
    assert!(
        !matches_as("allow", when, failing),
        "a known failure settles an allow rule"
    );
}

#[test]
fn a_rule_without_when_matches_every_call() {
    let text =
        "default = \"allow\"\n[[rule]]\nid = \"no\"\ncommand = \"rm\"\ndecision = \"deny\"\n";
    let policy = super::policy(text);
    assert_eq!(super::decide(&policy, None, "rm", json!({})).0, "deny");
    assert_eq!(
        super::decide(&policy, Some("x"), "rm", json!({ "a": 1 })).0,
        "deny"
    );
    assert_eq!(super::decide(&policy, None, "ls", json!({})).0, "allow");
}
