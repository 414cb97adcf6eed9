//! A command defined inside a function body, as in doc tests.
fn main() {
    use gangway::{ArgEnum, IpcCommand};

    #[derive(Clone, Copy, serde::Serialize, serde::Deserialize, ArgEnum)]
    #[serde(rename_all = "lowercase")]
    enum Level {
        Low,
        High,
    }

    /// Set a level.
    #[derive(Clone, serde::Serialize, IpcCommand)]
    #[ipc(response = String)]
    struct Set {
        #[ipc(positional)]
        level: Level,
        #[serde(deserialize_with = "double")]
        weight: u32,
    }

    fn double<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        <u32 as serde::Deserialize>::deserialize(d).map(|n| n * 2)
    }

    impl Set {
        async fn handle(&mut self) -> String {
            String::new()
        }
    }

    let mut set = Set { level: Level::Low, weight: 0 };
    set.apply_args(&rmp_serde::to_vec_named(&serde_json::json!({"level": "high", "weight": 4})).unwrap())
        .unwrap();
    assert!(matches!(set.level, Level::High));
    assert_eq!(set.weight, 8);
    let kind = &Set::SCHEMA.unwrap().param("level").unwrap().kind;
    assert_eq!(*kind, gangway::tool::ValueKind::Enum(vec!["low".into(), "high".into()].into()));
}
