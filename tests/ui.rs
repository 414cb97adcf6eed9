//! The macros' compile errors and accepted inputs, checked by the real
//! compiler through trybuild. Regenerate the `.stderr` files after an
//! intended message change with `TRYBUILD=overwrite cargo test --test ui`.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
