//! The bypasses a security review found, one test each: what the guard
//! cannot see whole (a list element, a relative path, a path with `..`) is
//! never let through by an allow rule, and never slips past a deny rule.

use serde_json::json;

use super::{decide, load_error, matches_as, policy};

#[test]
fn a_deny_rule_fires_when_any_element_of_a_list_passes() {
    let policy = policy(
        "default = \"allow\"\n[[rule]]\nid = \"no-etc\"\ncommand = \"rm\"\n\
         when = { paths = { under = \"/etc\" } }\ndecision = \"deny\"\n",
    );
    let args = json!({ "paths": ["/etc/passwd", "/workspace/x"] });
    assert_eq!(decide(&policy, None, "rm", args).0, "deny");
    let args = json!({ "paths": ["/workspace/y", "/workspace/x"] });
    assert_eq!(decide(&policy, None, "rm", args).0, "allow");
}

#[test]
fn an_allow_rule_needs_every_element_of_a_list_to_pass() {
    let policy = policy(
        "default = \"deny\"\n[[rule]]\nid = \"not-secrets\"\ncommand = \"cat\"\n\
         when = { files = { not_under = \"/secrets\" } }\ndecision = \"allow\"\n",
    );
    let args = json!({ "files": ["/tmp/a", "/secrets/key"] });
    assert_eq!(decide(&policy, None, "cat", args).0, "deny");
    let args = json!({ "files": ["/tmp/a", "/tmp/b"] });
    assert_eq!(decide(&policy, None, "cat", args).0, "allow");
}

#[test]
fn every_test_of_an_argument_must_hold_on_the_same_element() {
    let when = r#"{ paths = { under = "/w", glob = "/**/*.txt" } }"#;
    assert!(!matches_as(
        "deny",
        when,
        json!({ "paths": ["/w/a.md", "/x/b.txt"] })
    ));
    assert!(matches_as(
        "deny",
        when,
        json!({ "paths": ["/w/a.md", "/w/b.txt"] })
    ));
    assert!(!matches_as(
        "allow",
        when,
        json!({ "paths": ["/w/a.md", "/w/b.txt"] })
    ));
    assert!(matches_as(
        "allow",
        when,
        json!({ "paths": ["/w/a.txt", "/w/b.txt"] })
    ));
}

#[test]
fn globs_match_an_absolute_value_normalized_whatever_their_form() {
    let policy = policy(
        "default = \"deny\"\n[[rule]]\nid = \"work\"\ncommand = \"rm\"\n\
         when = { path = { glob = \"{/workspace/**,/tmp/**}\" } }\ndecision = \"allow\"\n",
    );
    let decision = |path: &str| decide(&policy, None, "rm", json!({ "path": path })).0;
    assert_eq!(decision("/workspace/../etc/shadow"), "deny");
    assert_eq!(decision("/tmp/./../etc/shadow"), "deny");
    assert_eq!(decision("/workspace/a"), "allow");
    assert_eq!(decision("/tmp//a/./b"), "allow");
    let ssh = r#"{ path = { glob = "**/.ssh/*" } }"#;
    for path in [
        "/home/u/.ssh/./id_rsa",
        "/home/u/.ssh//id_rsa",
        "/home/u/x/../.ssh/id_rsa",
    ] {
        assert!(matches_as("deny", ssh, json!({ "path": path })), "{path}");
    }
}

#[test]
fn a_relative_path_is_unknown_to_path_tests() {
    for when in [
        r#"{ path = { under = "/etc" } }"#,
        r#"{ path = { not_under = "/secrets" } }"#,
        r#"{ path = { glob = "/etc/**" } }"#,
        r#"{ path = { glob = "{/etc/**,/root/**}" } }"#,
    ] {
        for path in ["../../etc/passwd", "../secrets/k", "x", "./a", ""] {
            let args = json!({ "path": path });
            assert!(matches_as("deny", when, args.clone()), "{when} {path}");
            assert!(matches_as("ask", when, args.clone()), "{when} {path}");
            assert!(!matches_as("allow", when, args), "{when} {path}");
        }
    }
}

#[test]
fn a_relative_value_with_dot_components_is_unknown_to_other_globs() {
    let ssh = r#"{ path = { glob = "**/.ssh/*" } }"#;
    assert!(matches_as(
        "deny",
        ssh,
        json!({ "path": "home/.ssh/./id_rsa" })
    ));
    let src = r#"{ path = { glob = "src/**" } }"#;
    assert!(!matches_as(
        "allow",
        src,
        json!({ "path": "src/../../etc/passwd" })
    ));
    assert!(matches_as("allow", src, json!({ "path": "src/a/b.rs" })));
}

#[test]
fn a_regex_dot_matches_a_newline() {
    let when = r#"{ cmd = { regex = "rm .*" } }"#;
    assert!(matches_as("deny", when, json!({ "cmd": "rm -rf /\n" })));
    assert!(matches_as("deny", when, json!({ "cmd": "rm a\nb" })));
    assert!(
        !matches_as("deny", when, json!({ "cmd": "echo\nrm -rf /" })),
        "still whole"
    );
}

#[test]
fn a_regex_ending_in_a_comment_stays_anchored() {
    let when = r#"{ cmd = { regex = "(?x) a b  # two letters" } }"#;
    assert!(matches_as("deny", when, json!({ "cmd": "ab" })));
    assert!(!matches_as("deny", when, json!({ "cmd": "abc" })));
    assert!(!matches_as("deny", when, json!({ "cmd": "ab\n" })));
    assert!(!matches_as(
        "deny",
        r#"{ cmd = { regex = "ab" } }"#,
        json!({ "cmd": "ab\n" })
    ));
}

#[test]
fn a_glob_ending_in_double_star_matches_the_folder_itself() {
    let when = r#"{ path = { glob = "/data/**" } }"#;
    for path in ["/data", "/data/", "/x/../data", "/data/a/b"] {
        assert!(matches_as("deny", when, json!({ "path": path })), "{path}");
    }
    assert!(!matches_as("deny", when, json!({ "path": "/database" })));
    let either = r#"{ path = { glob = "{/data/**,/tmp/**}" } }"#;
    assert!(matches_as("allow", either, json!({ "path": "/tmp/" })));
    assert!(!matches_as("allow", either, json!({ "path": "/tmpx" })));
}

#[test]
fn an_integer_compares_exactly_with_a_float_bound() {
    let policy = policy(
        "default = \"deny\"\n[[rule]]\nid = \"small\"\ncommand = \"c\"\n\
         when = { n = { max = 9007199254740992.0 } }\ndecision = \"allow\"\n",
    );
    let decision = |n: u64| decide(&policy, None, "c", json!({ "n": n })).0;
    assert_eq!(decision(9_007_199_254_740_993), "deny");
    assert_eq!(decision(9_007_199_254_740_992), "allow");
}

#[test]
fn ids_starting_with_a_hash_are_refused_and_duplicates_always_caught() {
    let text = "[[rule]]\nid = \"#1\"\ncommand = \"a\"\ndecision = \"deny\"\n\
                [[rule]]\nid = \"x\"\ncommand = \"a\"\ndecision = \"deny\"\n\
                [[rule]]\nid = \"x\"\ncommand = \"a\"\ndecision = \"deny\"\n";
    let error = load_error(text);
    assert!(error.contains("`id` may not start with '#'"), "{error}");
    assert!(
        error.contains("the id \"x\" is already the id of the rule on line 5"),
        "{error}"
    );
}

#[test]
fn an_empty_command_is_not_told_to_be_left_out() {
    let error = load_error("[[rule]]\nid = \"r\"\ncommand = \"\"\ndecision = \"deny\"\n");
    assert!(!error.contains("leave the key out"), "{error}");
    assert!(error.contains("`command` is empty"), "{error}");
}

#[test]
fn name_patterns_cross_slashes() {
    let policy = policy(
        "default = \"allow\"\n[[rule]]\nid = \"team\"\ncommand = \"fs/*\"\nscope = \"team/*\"\n\
         decision = \"deny\"\n",
    );
    assert_eq!(
        decide(&policy, Some("team/a/b"), "fs/x/y", json!({})).0,
        "deny"
    );
    assert_eq!(
        decide(&policy, Some("other/a"), "fs/x/y", json!({})).0,
        "allow"
    );
}
