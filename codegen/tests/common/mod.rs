//! What the binder tests share.

use gangway_codegen::schema::ValueKind;

/// An enum kind with these values.
pub fn enum_of(values: &[&str]) -> ValueKind {
    ValueKind::Enum(
        values
            .iter()
            .map(|v| (*v).to_owned().into())
            .collect::<Vec<_>>()
            .into(),
    )
}
