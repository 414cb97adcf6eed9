//! `#[derive(IpcCommand)]` through the public API: what `apply_args`
//! accepts and refuses, and what it keeps, resets and fills in.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use gangway::IpcCommand;
use gangway::tool::ValueKind;
use serde::Serialize;

#[path = "support/derive.rs"]
mod derive_support;

use derive_support::rmp_value::{Value as V, i, s};
use derive_support::{Put, Speed, WebSearch, encode, ordered_params, params, registry, tune};

#[test]
fn apply_args_fills_arguments_and_defaults() {
    let state = registry();
    let mut cmd = WebSearch::new(state.clone());
    cmd.apply_args(&params(&[("query", s("rust"))])).unwrap();
    assert_eq!(cmd.query, "rust");
    assert_eq!(cmd.limit, 10, "serde(default = \"ten\") applies");
    assert!(!cmd.verbose, "a missing bool is false");
    assert!(cmd.sites.is_empty(), "a missing list is empty");
    assert_eq!(cmd.context, None, "a missing Option is None");
    assert!(Arc::ptr_eq(&cmd.registry, &state), "state is kept");

    cmd.apply_args(&params(&[
        ("query", s("tokio")),
        ("limit", i(3)),
        ("verbose", V::Bool(true)),
        ("site", V::List(vec![s("a.org"), s("b.org")])),
        ("context", s("notes")),
    ]))
    .unwrap();
    assert_eq!(cmd.query, "tokio");
    assert_eq!(cmd.limit, 3);
    assert!(cmd.verbose);
    assert_eq!(cmd.sites, ["a.org", "b.org"]);
    assert_eq!(cmd.context.as_deref(), Some("notes"));
    assert!(Arc::ptr_eq(&cmd.registry, &state));
}

#[test]
fn missing_optional_arguments_are_reset_not_carried_over() {
    let mut cmd = WebSearch::new(registry());
    cmd.apply_args(&params(&[
        ("query", s("a")),
        ("limit", i(2)),
        ("verbose", V::Bool(true)),
    ]))
    .unwrap();
    cmd.apply_args(&params(&[("query", s("b"))])).unwrap();
    assert_eq!(cmd.limit, 10);
    assert!(!cmd.verbose);
}

#[test]
fn unknown_argument_is_named_with_a_suggestion() {
    let mut cmd = WebSearch::new(registry());
    let err = cmd
        .apply_args(&params(&[("query", s("rust")), ("limt", i(3))]))
        .unwrap_err()
        .to_string();
    assert_eq!(err, "unknown argument `limt`; did you mean `limit`?");

    let err = cmd
        .apply_args(&params(&[("query", s("rust")), ("zzzzzz", i(3))]))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("unknown argument `zzzzzz`; expected one of `query`, `limit`"),
        "{err}"
    );
}

#[test]
fn missing_required_argument_is_named() {
    let mut cmd = WebSearch::new(registry());
    let err = cmd
        .apply_args(&params(&[("limit", i(3))]))
        .unwrap_err()
        .to_string();
    assert_eq!(err, "missing required argument `query`");
}

#[test]
fn wrong_type_names_the_argument() {
    let mut cmd = WebSearch::new(registry());
    cmd.apply_args(&params(&[("query", s("x")), ("context", V::Nil(None))]))
        .unwrap();
    assert_eq!(cmd.context, None, "nil is None for an Option");
    let err = cmd
        .apply_args(&params(&[("query", V::Nil(None))]))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("invalid value for argument `query`:"),
        "{err}"
    );
    let err = cmd
        .apply_args(&params(&[("query", s("x")), ("limit", s("many"))]))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("invalid value for argument `limit`:"),
        "{err}"
    );
}

#[test]
fn duplicate_argument_is_refused() {
    // A hand-built map with the same key twice: fixmap of 2 entries.
    let mut bytes = vec![0x82];
    for _ in 0..2 {
        bytes.extend(encode(&"query"));
        bytes.extend(encode(&"x"));
    }
    let err = WebSearch::new(registry())
        .apply_args(&bytes)
        .unwrap_err()
        .to_string();
    assert_eq!(err, "argument `query` given more than once");
}

#[test]
fn a_failed_apply_leaves_the_command_unchanged() {
    let mut cmd = WebSearch::new(registry());
    cmd.apply_args(&params(&[("query", s("kept")), ("limit", i(4))]))
        .unwrap();
    // Valid arguments first, so a decoder that assigned as it went would
    // have changed them before reaching the bad key.
    let late_error = ordered_params(&[("query", s("lost")), ("limit", i(9)), ("bogus", i(1))]);
    assert!(cmd.apply_args(&late_error).is_err());
    let late_missing = ordered_params(&[("limit", i(9)), ("verbose", V::Bool(true))]);
    assert!(cmd.apply_args(&late_missing).is_err());
    assert_eq!(cmd.query, "kept");
    assert_eq!(cmd.limit, 4);
    assert!(!cmd.verbose);
}

#[test]
fn params_may_be_the_struct_itself() {
    let state = registry();
    let sent = WebSearch {
        query: "from a Rust client".into(),
        limit: 7,
        verbose: true,
        sites: vec!["x.org".into()],
        context: Some("ctx".into()),
        registry: registry(),
    };
    let mut cmd = WebSearch::new(state.clone());
    cmd.apply_args(&encode(&sent)).unwrap();
    assert_eq!(cmd.query, sent.query);
    assert_eq!(cmd.limit, 7);
    assert_eq!(cmd.sites, sent.sites);
    assert!(
        Arc::ptr_eq(&cmd.registry, &state),
        "the sender's state never arrives"
    );

    // rmp_serde::to_vec writes a struct as an array, in field order.
    let mut cmd = WebSearch::new(state);
    cmd.apply_args(&rmp_serde::to_vec(&sent).unwrap()).unwrap();
    assert_eq!(cmd.query, sent.query);
    assert_eq!(cmd.context, sent.context);
}

#[test]
fn empty_and_nil_params_mean_no_arguments() {
    #[derive(Clone, Serialize, IpcCommand)]
    #[ipc(response = ())]
    struct Ping {}
    impl Ping {
        async fn handle(&mut self) {}
    }
    let mut ping = Ping {};
    ping.apply_args(&[]).unwrap();
    ping.apply_args(&[0xc0]).unwrap();
    ping.apply_args(&[0x80]).unwrap();
    let err = ping
        .apply_args(&params(&[("x", i(1))]))
        .unwrap_err()
        .to_string();
    assert_eq!(err, "unknown argument `x`: this command takes no arguments");
    let err = ping.apply_args(&[0x91, 0x01]).unwrap_err().to_string();
    assert_eq!(
        err,
        "too many positional values: this command takes 0 arguments"
    );
}

#[test]
fn stray_bytes_after_the_params_are_refused() {
    let mut bytes = params(&[("query", s("rust"))]);
    bytes.push(0xc0);
    let err = WebSearch::new(registry())
        .apply_args(&bytes)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "1 stray byte after the arguments; params must be exactly one MessagePack value"
    );
    let err = WebSearch::new(registry())
        .apply_args(&bytes[..bytes.len() - 3])
        .unwrap_err()
        .to_string();
    assert_eq!(err, "the params are truncated or not MessagePack");
}

#[test]
fn malformed_params_are_an_error_not_a_panic() {
    let mut cmd = WebSearch::new(registry());
    for garbage in [
        &[0xc1][..],
        &[0x81],
        &[0x81, 0xa1],
        &[0xff, 0xff],
        &[0x93, 0x01],
    ] {
        assert!(cmd.apply_args(garbage).is_err(), "{garbage:?}");
    }
}

#[test]
fn bytes_arrive_from_bin_strings_or_integer_arrays() {
    let payload = vec![0u8, 255, 10, 0, 13];
    let mut put = Put {
        key: String::new(),
        data: Vec::new(),
        extra: None,
    };
    put.apply_args(&params(&[
        ("key", s("k")),
        ("data", V::Bin(payload.clone())),
    ]))
    .unwrap();
    assert_eq!(put.data, payload);
    assert_eq!(put.extra, None);

    let sent = Put {
        key: "k".into(),
        data: payload.clone(),
        extra: Some(vec![1, 2]),
    };
    put.apply_args(&encode(&sent)).unwrap();
    assert_eq!(
        put.data, payload,
        "serde's Vec<u8> (an array of integers) works too"
    );
    assert_eq!(put.extra, Some(vec![1, 2]));

    put.apply_args(&params(&[("key", s("k")), ("data", s("text\n"))]))
        .unwrap();
    assert_eq!(put.data, b"text\n");
}

#[test]
fn serde_names_aliases_and_custom_decoders_are_honoured() {
    let mut cmd = tune();
    cmd.apply_args(&params(&[
        ("speed", s("very-fast")),
        ("max", i(9)),
        ("scaleFactor", V::Float(2.0)),
        ("tags", s("a,b")),
    ]))
    .unwrap();
    assert_eq!(cmd.speed, Speed::VeryFast);
    assert_eq!(cmd.max_items, Some(9));
    assert_eq!(cmd.scale_factor, 2.0);
    assert_eq!(cmd.tags, ["a", "b"]);
    assert_eq!(
        cmd.work_dir,
        std::path::Path::new("/tmp"),
        "#[ipc(default)] with Into"
    );

    cmd.apply_args(&params(&[("maxItems", i(4))])).unwrap();
    assert_eq!(cmd.speed, Speed::Slow, "#[ipc(default = expr)]");
    assert_eq!(cmd.max_items, Some(4));
    assert_eq!(cmd.scale_factor, 1.5);
    assert!(cmd.tags.is_empty());

    let err = cmd
        .apply_args(&params(&[("max_items", i(4))]))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "unknown argument `max_items`; did you mean `maxItems`?"
    );
}

/// Generic over its store.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = Option<V>)]
struct Lookup<S: Store<V> + Send + Sync + 'static, V: Clone> {
    #[ipc(positional)]
    key: V,
    #[ipc(state)]
    #[serde(skip)]
    store: Arc<S>,
}

trait Store<V> {
    fn get(&self, key: &V) -> Option<V>;
}

struct Upper;
impl Store<String> for Upper {
    fn get(&self, key: &String) -> Option<String> {
        Some(key.to_uppercase())
    }
}

impl<S: Store<V> + Send + Sync + 'static, V: Clone> Lookup<S, V> {
    async fn handle(&mut self) -> Option<V> {
        self.store.get(&self.key)
    }
}

#[test]
fn generic_commands_work() {
    let mut cmd = Lookup {
        key: String::new(),
        store: Arc::new(Upper),
    };
    cmd.apply_args(&params(&[("key", s("abc"))])).unwrap();
    assert_eq!(cmd.key, "abc");
    assert_eq!(
        Lookup::<Upper, String>::SCHEMA
            .unwrap()
            .param("key")
            .unwrap()
            .kind,
        ValueKind::String
    );
}

static DEFAULTS_BUILT: AtomicUsize = AtomicUsize::new(0);

/// Everything defaults from the struct.
#[derive(Clone, Serialize, IpcCommand)]
#[serde(default)]
#[ipc(response = ())]
struct Defaults {
    verbose: bool,
    tags: Vec<String>,
    limit: Option<u32>,
    depth: u32,
}

impl Default for Defaults {
    fn default() -> Self {
        DEFAULTS_BUILT.fetch_add(1, Ordering::SeqCst);
        Defaults {
            verbose: true,
            tags: vec!["x".into()],
            limit: Some(5),
            depth: 7,
        }
    }
}

impl Defaults {
    async fn handle(&mut self) {}
}

#[test]
fn a_struct_default_fills_every_missing_argument_as_serde_does() {
    let mut cmd = Defaults {
        verbose: false,
        tags: vec![],
        limit: None,
        depth: 0,
    };
    let before = DEFAULTS_BUILT.load(Ordering::SeqCst);
    cmd.apply_args(&[]).unwrap();
    assert!(cmd.verbose);
    assert_eq!(cmd.tags, ["x"]);
    assert_eq!(cmd.limit, Some(5));
    assert_eq!(cmd.depth, 7);
    assert_eq!(
        DEFAULTS_BUILT.load(Ordering::SeqCst) - before,
        1,
        "built once, not per field"
    );

    cmd.apply_args(&params(&[("verbose", V::Bool(false)), ("depth", i(1))]))
        .unwrap();
    assert!(!cmd.verbose);
    assert_eq!((cmd.depth, cmd.limit), (1, Some(5)));

    let all = params(&[
        ("verbose", V::Bool(false)),
        ("tags", V::List(vec![])),
        ("limit", V::Nil(None)),
        ("depth", i(2)),
    ]);
    let before = DEFAULTS_BUILT.load(Ordering::SeqCst);
    cmd.apply_args(&all).unwrap();
    assert_eq!(
        DEFAULTS_BUILT.load(Ordering::SeqCst),
        before,
        "not built when nothing is missing"
    );
    assert_eq!(cmd.limit, None);

    let schema = Defaults::SCHEMA.unwrap();
    assert!(schema.params.iter().all(|p| !p.required));
    assert_eq!(
        schema.param("verbose").unwrap().default,
        None,
        "the struct's default decides"
    );
}
