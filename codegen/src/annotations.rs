//! A command's behaviour hints: the Model Context Protocol's tool
//! annotations, set with `#[ipc(read_only)]`, `#[ipc(destructive)]`,
//! `#[ipc(idempotent)]` and `#[ipc(open_world)]`, and re-exported as
//! [`schema::Annotations`](crate::schema::Annotations).

use serde::{Deserialize, Serialize};

/// What calling a command does beyond answering, as hints for a client
/// (an agent, a user interface) deciding whether to ask before a call: the
/// Model Context Protocol's tool annotations (`readOnlyHint`,
/// `destructiveHint`, `idempotentHint`, `openWorldHint`).
///
/// The hints are what the command's author claims; gangway publishes them
/// in the schema and the manifest, and shows them in the reference, but
/// never enforces them. A hint left unset claims nothing (where MCP's own
/// defaults assume the worst of `destructiveHint` and `openWorldHint`, an
/// unset flag here is simply absent). With no hint set, the manifest has
/// no `annotations` key at all.
///
/// ```
/// use gangway_codegen::schema::{Annotations, ToolSchema};
///
/// let schema = ToolSchema::new("fetch")
///     .with_annotations(Annotations::default().read_only().open_world());
/// assert!(schema.annotations.read_only && schema.annotations.open_world);
/// let json = serde_json::to_value(&schema).unwrap();
/// assert_eq!(json["annotations"], serde_json::json!({"read_only": true, "open_world": true}));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Annotations {
    /// The command does not change its environment (`readOnlyHint`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub read_only: bool,
    /// The command may destroy or overwrite data (`destructiveHint`); only
    /// meaningful when it is not read-only.
    #[serde(default, skip_serializing_if = "is_false")]
    pub destructive: bool,
    /// Calling the command again with the same arguments has no further
    /// effect (`idempotentHint`); only meaningful when it is not read-only.
    #[serde(default, skip_serializing_if = "is_false")]
    pub idempotent: bool,
    /// The command reaches beyond the host: the web, other systems
    /// (`openWorldHint`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub open_world: bool,
}

impl Annotations {
    /// Builds the hints in a `const`; what `#[derive(IpcCommand)]` emits.
    #[doc(hidden)]
    pub const fn __from_static(
        read_only: bool,
        destructive: bool,
        idempotent: bool,
        open_world: bool,
    ) -> Self {
        Annotations {
            read_only,
            destructive,
            idempotent,
            open_world,
        }
    }

    /// Marks the command read-only: it does not change its environment.
    pub const fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Marks the command destructive: it may destroy or overwrite data
    /// (only meaningful when it is not read-only).
    pub const fn destructive(mut self) -> Self {
        self.destructive = true;
        self
    }

    /// Marks the command idempotent: calling it again with the same
    /// arguments has no further effect (only meaningful when it is not
    /// read-only).
    pub const fn idempotent(mut self) -> Self {
        self.idempotent = true;
        self
    }

    /// Marks the command open-world: it reaches beyond the host (the web,
    /// other systems).
    pub const fn open_world(mut self) -> Self {
        self.open_world = true;
        self
    }

    /// Whether no hint is set.
    pub const fn is_empty(&self) -> bool {
        !(self.read_only || self.destructive || self.idempotent || self.open_world)
    }

    /// The hints that are set, as short lowercase phrases in a fixed order
    /// (`read-only`, `destructive`, `idempotent`, `open world`), for help
    /// and references.
    pub fn labels(&self) -> impl Iterator<Item = &'static str> {
        [
            (self.read_only, "read-only"),
            (self.destructive, "destructive"),
            (self.idempotent, "idempotent"),
            (self.open_world, "open world"),
        ]
        .into_iter()
        .filter_map(|(set, label)| set.then_some(label))
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders_set_one_flag_each() {
        let none = Annotations::default();
        assert!(none.is_empty());
        assert_eq!(none.labels().count(), 0);
        let all = none.read_only().destructive().idempotent().open_world();
        assert_eq!(all, Annotations::__from_static(true, true, true, true));
        assert!(!all.is_empty());
        assert_eq!(
            all.labels().collect::<Vec<_>>(),
            ["read-only", "destructive", "idempotent", "open world"]
        );
        assert!(!Annotations::default().idempotent().is_empty());
    }

    #[test]
    fn only_set_flags_are_serialized() {
        let json = serde_json::to_string(&Annotations::default().idempotent()).unwrap();
        assert_eq!(json, r#"{"idempotent":true}"#);
        let back: Annotations = serde_json::from_str(&json).unwrap();
        assert_eq!(back, Annotations::default().idempotent());
        let empty: Annotations = serde_json::from_str("{}").unwrap();
        assert!(empty.is_empty());
    }
}
