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
        for elements in [Elements::Every, Elements::Any] {
            assert_eq!(
                under.check(&json!({ "x": unseen }), elements),
                Truth::Unknown,
                "{unseen}"
            );
        }
    }
    let not_under = condition(vec![Test::NotUnder("/workspace".into())]);
    let outside = json!({ "x": ["/etc", REDACTED] });
    let inside = json!({ "x": ["/workspace/a", REDACTED] });
    assert_eq!(not_under.check(&outside, Elements::Any), Truth::Holds);
    assert_eq!(not_under.check(&outside, Elements::Every), Truth::Unknown);
    assert_eq!(not_under.check(&inside, Elements::Any), Truth::Unknown);
    assert_eq!(not_under.check(&inside, Elements::Every), Truth::Fails);
    assert_eq!(under.check(&outside, Elements::Every), Truth::Fails);
    assert_eq!(under.check(&outside, Elements::Any), Truth::Unknown);
}

#[test]
fn or_and_the_folds_stop_early() {
    use Truth::*;
    assert_eq!(Fails.or(Unknown), Unknown);
    assert_eq!(Unknown.or(Holds), Holds);
    assert_eq!(Fails.or(Fails), Fails);
    assert_eq!(Truth::all([Holds, Fails, Unknown]), Fails);
    assert_eq!(Truth::all([Holds, Unknown]), Unknown);
    assert_eq!(Truth::any([Fails, Holds, Unknown]), Holds);
    assert_eq!(Truth::any([Fails, Unknown]), Unknown);
    let mut seen = 0;
    let all = Truth::all([Holds, Fails, Holds].into_iter().inspect(|_| seen += 1));
    assert_eq!((all, seen), (Fails, 2));
}

#[test]
fn integers_compare_exactly_with_floats() {
    let float = |x: f64| Number::from_f64(x).unwrap();
    let two_53 = float(9_007_199_254_740_992.0);
    assert_eq!(
        compare(&json!(9_007_199_254_740_993_u64), &two_53),
        Some(Ordering::Greater)
    );
    assert_eq!(
        compare(&json!(9_007_199_254_740_992_u64), &two_53),
        Some(Ordering::Equal)
    );
    assert_eq!(compare(&json!(2), &float(2.5)), Some(Ordering::Less));
    assert_eq!(compare(&json!(3), &float(2.5)), Some(Ordering::Greater));
    assert_eq!(compare(&json!(-3), &float(-2.5)), Some(Ordering::Less));
    assert_eq!(compare(&json!(-2), &float(-2.5)), Some(Ordering::Greater));
    assert_eq!(
        compare(&json!(u64::MAX), &float(1e300)),
        Some(Ordering::Less)
    );
    assert_eq!(
        compare(&json!(i64::MIN), &float(-1e300)),
        Some(Ordering::Greater)
    );
    assert_eq!(
        compare_numbers(&float(2.5), &Number::from(2)),
        Some(Ordering::Greater)
    );
    assert_eq!(
        compare_numbers(
            &float(9_007_199_254_740_992.0),
            &Number::from(9_007_199_254_740_993_u64)
        ),
        Some(Ordering::Less)
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

#[test]
fn a_float_that_is_not_a_finite_number_is_unknown_to_bounds() {
    // What a guard is shown for an infinite or NaN float: not `null`
    // (which reads as not given, and would pass a deny rule by).
    let at_least = condition(vec![Test::Min(1000.into())]);
    let at_most = condition(vec![Test::Max(1000.into())]);
    for check in [&at_least, &at_most] {
        for elements in [Elements::Every, Elements::Any] {
            assert_eq!(
                check.check(&json!({ "x": NOT_FINITE }), elements),
                Truth::Unknown
            );
        }
    }
}
