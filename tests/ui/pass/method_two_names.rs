//! One struct serving two names through an `#[ipc(method)]` field.
use gangway::IpcCommand;
use gangway::ipc::IpcRouter;

/// Change case.
#[derive(Clone, Default, serde::Serialize, IpcCommand)]
#[ipc(response = String)]
struct Case {
    #[ipc(positional)]
    text: String,
    #[ipc(method)]
    #[serde(skip)]
    method: String,
}

impl Case {
    async fn handle(&mut self) -> String {
        match self.method.as_str() {
            "upper" => self.text.to_uppercase(),
            "lower" => self.text.to_lowercase(),
            other => panic!("called as {other}"),
        }
    }
}

fn main() {
    let router = IpcRouter::new()
        .register(Case { method: "upper".into(), ..Case::default() })
        .register(Case { method: "lower".into(), ..Case::default() });
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let params = rmp_serde::to_vec_named(&serde_json::json!({ "text": "MiXeD" })).unwrap();
    for (method, want) in [("upper", "MIXED"), ("lower", "mixed")] {
        let reply = runtime.block_on(router.dispatch(method, &params)).unwrap();
        assert_eq!(rmp_serde::from_slice::<String>(&reply).unwrap(), want);
    }
}
