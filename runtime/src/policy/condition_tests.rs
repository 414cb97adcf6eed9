//! Three-valued logic and the value tests, one by one; the tests as the
//! rules file writes them are in `policy/tests/conditions.rs`.

use serde_json::json;

use super::*;

fn condition(tests: Vec<Test>) -> ArgCondition {
    ArgCondition {
        arg: "x".into(),
        line: 1,
        tests,
    }
}

#[test]
fn truth_tables() {
    use Truth::*;
    assert_eq!(Holds.and(Holds), Holds);
    assert_eq!(Holds.and(Unknown), Unknown);
    assert_eq!(Unknown.and(Fails), Fails);
    assert_eq!(Fails.and(Unknown), Fails);
    assert_eq!(Holds.not(), Fails);
    assert_eq!(Unknown.not(), Unknown);
}

#[test]
fn unseen_values_are_unknown() {
    let under = condition(vec![Test::Under("/workspace".into())]);
    for unseen in [
        json!(REDACTED),
        json!("<12 bytes>"),
        json!("<a value of 20000 bytes>"),
        json!("/workspace/aaaa… (2000 bytes)"),
    ] {
        assert_eq!(
            under.check(&json!({ "x": unseen })),
            Truth::Unknown,
            "{unseen}"
        );
    }
    let not_under = condition(vec![Test::NotUnder("/workspace".into())]);
    assert_eq!(
        not_under.check(&json!({ "x": ["/etc", REDACTED] })),
        Truth::Holds
    );
    assert_eq!(
        not_under.check(&json!({ "x": ["/workspace/a", REDACTED] })),
        Truth::Unknown
    );
    assert_eq!(
        under.check(&json!({ "x": ["/etc", REDACTED] })),
        Truth::Fails
    );
}

#[test]
fn numbers_compare_exactly_as_integers() {
    let big = Number::from(u64::MAX);
    assert_eq!(compare(&json!(u64::MAX), &big), Some(Ordering::Equal));
    assert_eq!(
        compare(&json!(i64::MIN), &Number::from(0)),
        Some(Ordering::Less)
    );
    assert_eq!(
        compare(&json!(2.5), &Number::from(2)),
        Some(Ordering::Greater)
    );
    assert_eq!(compare(&json!("3"), &Number::from(3)), None);
    assert!(same_value(&json!(1), &json!(1.0)));
    assert!(!same_value(&json!("1"), &json!(1)));
}

#[test]
fn tests_describe_themselves_as_written() {
    assert_eq!(Test::NotUnder("/w".into()).describe(), "not_under = \"/w\"");
    assert_eq!(Test::Min(Number::from(3)).describe(), "min = 3");
    assert_eq!(
        Test::OneOf(vec![json!("a"), json!(1)]).describe(),
        "one_of = [\"a\",1]"
    );
    assert_eq!(Test::Present(false).describe(), "present = false");
}
