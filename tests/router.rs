//! `IpcRouter`: registration, dispatch, errors, state and concurrency,
//! through the public API.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use gangway::IpcCommand;
use gangway::ipc::{CommandError, CommandResult, IpcError, IpcRouter, RegisterError};
use gangway::tool::{Manifest, ValueKind};
use serde::{Deserialize, Serialize};

mod support;
use support::Echo;

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    rmp_serde::to_vec_named(value).unwrap()
}

#[derive(Default)]
struct Counter {
    total: AtomicU64,
    calls: AtomicU64,
}

/// Add to a running total.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = u64)]
struct Add {
    /// How much to add.
    #[ipc(positional)]
    amount: u64,
    #[ipc(state)]
    #[serde(skip)]
    counter: Arc<Counter>,
}

impl Add {
    async fn handle(&mut self) -> u64 {
        self.counter.calls.fetch_add(1, Ordering::SeqCst);
        self.counter.total.fetch_add(self.amount, Ordering::SeqCst) + self.amount
    }
}

/// Fail on purpose.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = CommandResult<String>)]
struct Fail {
    #[ipc(positional)]
    path: String,
}

impl Fail {
    async fn handle(&mut self) -> CommandResult<String> {
        Ok(std::fs::read_to_string(&self.path)?)
    }
}

/// Panic on purpose.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = u8)]
struct Boom {
    yes: bool,
}

impl Boom {
    async fn handle(&mut self) -> u8 {
        if self.yes {
            panic!("boom requested");
        }
        7
    }
}

/// The seed's hand-written command, unchanged.
#[derive(Clone, Serialize, Deserialize)]
struct SearchCommand {
    query: String,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct SearchResult {
    items: Vec<String>,
}

impl IpcCommand for SearchCommand {
    type Response = SearchResult;

    fn name(&self) -> String {
        "search".to_string()
    }

    fn positional_args(&self) -> Cow<'static, [Cow<'static, str>]> {
        Cow::Borrowed(&[Cow::Borrowed("query")])
    }

    fn apply_args(&mut self, params: &[u8]) -> Result<(), rmp_serde::decode::Error> {
        *self = rmp_serde::from_slice(params)?;
        Ok(())
    }

    async fn handle(&mut self) -> SearchResult {
        SearchResult {
            items: vec![self.query.to_uppercase()],
        }
    }
}

fn router(counter: &Arc<Counter>) -> IpcRouter {
    IpcRouter::new()
        .register(Add {
            amount: 0,
            counter: counter.clone(),
        })
        .register(Echo::default())
        .register(Echo {
            method: "shout".into(),
            ..Echo::default()
        })
        .register(Fail {
            path: String::new(),
        })
        .register(Boom { yes: false })
        .register(SearchCommand {
            query: String::new(),
        })
}

async fn call<R: serde::de::DeserializeOwned>(
    router: &IpcRouter,
    method: &str,
    params: &[u8],
) -> R {
    let reply = router.dispatch(method, params).await.unwrap();
    rmp_serde::from_slice(&reply).unwrap()
}

#[tokio::test]
async fn dispatch_runs_the_handler_and_encodes_the_response() {
    let counter = Arc::new(Counter::default());
    let router = router(&counter);
    let total: u64 = call(&router, "add", &encode(&serde_json::json!({"amount": 5}))).await;
    assert_eq!(total, 5);
    let echoed: String = call(&router, "echo", &encode(&serde_json::json!({"text": "hi"}))).await;
    assert_eq!(echoed, "echo hi");
    let shouted: String = call(
        &router,
        "shout",
        &encode(&serde_json::json!({"text": "hi"})),
    )
    .await;
    assert_eq!(
        shouted, "shout hi",
        "one struct serves two names, and knows which was called"
    );
}

#[tokio::test]
async fn a_hand_written_command_works_as_the_seed_shows() {
    let router = router(&Arc::new(Counter::default()));
    let params = encode(&SearchCommand {
        query: "rust".into(),
    });
    let result: SearchResult = call(&router, "search", &params).await;
    assert_eq!(
        result,
        SearchResult {
            items: vec!["RUST".into()]
        }
    );
    let info = router.command("search").unwrap();
    assert_eq!(info.positional_args, ["query"]);
    assert_eq!(info.schema.param("query").unwrap().positional, Some(0));
}

#[tokio::test]
async fn unknown_method_suggests_the_nearest_name() {
    let router = router(&Arc::new(Counter::default()));
    let err = router.dispatch("ech", &[]).await.unwrap_err();
    assert_eq!(
        err,
        IpcError::UnknownMethod {
            method: "ech".into(),
            suggestion: Some("echo".into())
        }
    );
    assert_eq!(
        err.to_string(),
        "unknown command `ech`; did you mean `echo`?"
    );
    let err = router.dispatch("zzzzzzzz", &[]).await.unwrap_err();
    assert_eq!(err.to_string(), "unknown command `zzzzzzzz`");
}

#[tokio::test]
async fn bad_params_are_invalid_params_naming_the_argument() {
    let router = router(&Arc::new(Counter::default()));
    let err = router
        .dispatch("add", &encode(&serde_json::json!({"amont": 1})))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "invalid_params");
    assert_eq!(
        err.to_string(),
        "add: unknown argument `amont`; did you mean `amount`?"
    );
    let err = router.dispatch("add", &[]).await.unwrap_err();
    assert_eq!(err.to_string(), "add: missing required argument `amount`");
    let err = router.dispatch("add", &[0xc1]).await.unwrap_err();
    assert_eq!(
        err.kind(),
        "invalid_params",
        "garbage params are refused, not a panic"
    );
}

#[tokio::test]
async fn a_failing_handler_is_a_failure_on_the_wire() {
    let router = router(&Arc::new(Counter::default()));
    let params = encode(&serde_json::json!({"path": "/definitely/not/here"}));
    let err = router.dispatch("fail", &params).await.unwrap_err();
    let IpcError::Handler {
        method,
        message,
        data,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(method, "fail");
    assert!(message.contains("No such file"), "{message}");
    let error: CommandError = rmp_serde::from_slice(data).unwrap();
    assert_eq!(error.message(), message, "the typed error travels too");
}

#[tokio::test]
async fn a_panicking_handler_fails_only_its_call() {
    let router = router(&Arc::new(Counter::default()));
    let err = router
        .dispatch("boom", &encode(&serde_json::json!({"yes": true})))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        IpcError::Panicked {
            method: "boom".into(),
            message: "boom requested".into()
        }
    );
    let fine: u8 = call(&router, "boom", &encode(&serde_json::json!({"yes": false}))).await;
    assert_eq!(fine, 7, "the router keeps serving");
}

#[tokio::test]
async fn state_survives_a_thousand_calls_with_different_params() {
    let counter = Arc::new(Counter::default());
    let router = router(&counter);
    let mut expected = 0;
    for amount in 0..1000u64 {
        expected += amount;
        let total: u64 = call(
            &router,
            "add",
            &encode(&serde_json::json!({"amount": amount})),
        )
        .await;
        assert_eq!(total, expected);
    }
    assert_eq!(counter.calls.load(Ordering::SeqCst), 1000);
    assert_eq!(
        Arc::strong_count(&counter),
        2,
        "no clone of the state leaked"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_four_tasks_dispatch_concurrently() {
    let counter = Arc::new(Counter::default());
    let router = Arc::new(router(&counter));
    let tasks: Vec<_> = (0..64u64)
        .map(|task| {
            let router = router.clone();
            tokio::spawn(async move {
                for i in 0..100u64 {
                    let text = format!("{task}-{i}");
                    let reply = router
                        .dispatch("echo", &encode(&serde_json::json!({"text": text})))
                        .await
                        .unwrap();
                    let echoed: String = rmp_serde::from_slice(&reply).unwrap();
                    assert_eq!(echoed, format!("echo {text}"));
                    router
                        .dispatch("add", &encode(&serde_json::json!({"amount": 1})))
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(counter.total.load(Ordering::SeqCst), 6400);
}

#[test]
fn registration_refuses_duplicates_and_bad_names_and_keeps_the_router() {
    let counter = Arc::new(Counter::default());
    let err = router(&counter).try_register(Echo::default()).unwrap_err();
    assert_eq!(
        err.reason,
        RegisterError::Duplicate {
            name: "echo".into()
        }
    );
    let router = err.router;
    assert_eq!(
        router.commands().len(),
        6,
        "nothing registered before is lost"
    );

    let bad = Echo {
        method: "no spaces".into(),
        ..Echo::default()
    };
    let err = router.try_register(bad.clone()).unwrap_err();
    assert_eq!(
        err.reason,
        RegisterError::InvalidName {
            name: "no spaces".into()
        }
    );
    assert!(err.to_string().contains("[A-Za-z][A-Za-z0-9_-]*"));

    let mut router = err.router;
    assert_eq!(
        router.insert(bad),
        Err(RegisterError::InvalidName {
            name: "no spaces".into()
        })
    );
    router
        .insert(Echo {
            method: "again".into(),
            ..Echo::default()
        })
        .unwrap();
    assert!(router.contains("again"));
    assert_eq!(router.commands().len(), 7);
}

#[test]
#[should_panic(expected = "a command named `echo` is already registered")]
fn register_panics_with_a_clear_message_on_duplicates() {
    let _ = IpcRouter::new()
        .register(Echo::default())
        .register(Echo::default());
}

#[test]
fn commands_and_manifest_describe_every_command() {
    let router = router(&Arc::new(Counter::default()));
    let names: Vec<&str> = router.commands().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["add", "boom", "echo", "fail", "search", "shout"]);
    let shout = router.command("shout").unwrap();
    assert_eq!(shout.schema.name, "shout");
    assert_eq!(shout.positional_args, ["text"]);

    let manifest = router.manifest();
    let json = serde_json::to_string(&manifest).unwrap();
    let back: Manifest = serde_json::from_str(&json).unwrap();
    assert_eq!(back, manifest);
    let add = back.command("add").unwrap();
    assert_eq!(add.description, "Add to a running total.");
    assert_eq!(add.param("amount").unwrap().kind, ValueKind::UInt);
}

#[test]
fn router_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<IpcRouter>();
}
