//! `#[derive(IpcCommand)]` through the public API: what `apply_args` accepts
//! and refuses, what it keeps, and the schema it publishes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use gangway::ipc::{CommandError, CommandResult, Reply};
use gangway::tool::{ArgType, ToolSchema, ValueKind};
use gangway::{ArgEnum, IpcCommand};
use serde::{Deserialize, Serialize};

mod support;
use support::Echo;

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    rmp_serde::to_vec_named(value).unwrap()
}

/// A map of arguments, as a client sends them.
fn params(pairs: &[(&str, rmp_value::Value)]) -> Vec<u8> {
    let map: BTreeMap<&str, &rmp_value::Value> = pairs.iter().map(|(k, v)| (*k, v)).collect();
    encode(&map)
}

/// Just enough of a dynamic MessagePack value to write test params.
mod rmp_value {
    use serde::Serialize;

    #[derive(Serialize)]
    #[serde(untagged)]
    pub enum Value {
        Str(String),
        Int(i64),
        Float(f64),
        Bool(bool),
        List(Vec<Value>),
        Bin(#[serde(with = "bin")] Vec<u8>),
        Nil(Option<()>),
    }

    mod bin {
        pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(v)
        }
    }

    pub fn s(text: &str) -> Value {
        Value::Str(text.to_owned())
    }
    pub fn i(n: i64) -> Value {
        Value::Int(n)
    }
}
use rmp_value::{Value as V, i, s};

struct Registry {
    calls: AtomicUsize,
}

/// Search the web and print the top results.
///
/// Results come from the host's search client.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "web_search", response = Vec<String>)]
struct WebSearch {
    /// What to search for.
    #[ipc(positional)]
    query: String,
    /// How many results to print.
    #[ipc(short = 'n')]
    #[serde(default = "ten")]
    limit: u32,
    /// Print more detail.
    verbose: bool,
    /// Only results from these sites.
    #[serde(rename = "site")]
    sites: Vec<String>,
    /// Text piped in on standard input, used as extra context.
    #[ipc(stdin)]
    context: Option<String>,
    /// Host state: never read from a request, kept across calls.
    #[ipc(state)]
    #[serde(skip)]
    registry: Arc<Registry>,
}

fn ten() -> u32 {
    10
}

impl WebSearch {
    fn new(registry: Arc<Registry>) -> Self {
        WebSearch {
            query: String::new(),
            limit: 0,
            verbose: false,
            sites: Vec::new(),
            context: None,
            registry,
        }
    }

    async fn handle(&mut self) -> Vec<String> {
        self.registry.calls.fetch_add(1, Ordering::SeqCst);
        (1..=self.limit)
            .map(|n| format!("{} {n}", self.query))
            .collect()
    }
}

fn registry() -> Arc<Registry> {
    Arc::new(Registry {
        calls: AtomicUsize::new(0),
    })
}

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

/// A map written in exactly this key order (a `BTreeMap` would sort it).
fn ordered_params(pairs: &[(&str, rmp_value::Value)]) -> Vec<u8> {
    let mut bytes = Vec::new();
    rmp::encode::write_map_len(&mut bytes, pairs.len() as u32).unwrap();
    for (key, value) in pairs {
        bytes.extend(encode(key));
        bytes.extend(encode(value));
    }
    bytes
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

/// Store bytes.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = usize)]
struct Put {
    #[ipc(positional)]
    key: String,
    #[ipc(stdin)]
    data: Vec<u8>,
    extra: Option<Vec<u8>>,
}

impl Put {
    async fn handle(&mut self) -> usize {
        self.data.len()
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

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, ArgEnum)]
#[serde(rename_all = "kebab-case")]
enum Speed {
    VeryFast,
    Slow,
}

/// Tune things.
#[derive(Clone, Serialize, IpcCommand)]
#[serde(rename_all = "camelCase")]
#[ipc(response = String)]
struct Tune {
    /// How fast.
    #[ipc(default = Speed::Slow, default_text = "slow")]
    speed: Speed,
    /// Up to this many.
    #[serde(alias = "max")]
    max_items: Option<u64>,
    /// Scale factor.
    #[ipc(default = 1.5)]
    scale_factor: f64,
    /// Where.
    #[ipc(default = "/tmp")]
    work_dir: std::path::PathBuf,
    /// Parsed by hand.
    #[serde(deserialize_with = "parse_csv", default)]
    tags: Vec<String>,
}

fn parse_csv<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let text = String::deserialize(d)?;
    Ok(text.split(',').map(str::to_owned).collect())
}

impl Tune {
    async fn handle(&mut self) -> String {
        format!("{:?}", self.speed)
    }
}

fn tune() -> Tune {
    Tune {
        speed: Speed::VeryFast,
        max_items: Some(1),
        scale_factor: 0.0,
        work_dir: "/".into(),
        tags: vec![],
    }
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

#[test]
fn schema_describes_every_argument() {
    let schema: &ToolSchema = WebSearch::SCHEMA.unwrap();
    assert_eq!(schema.name, "web_search");
    assert_eq!(
        schema.description,
        "Search the web and print the top results."
    );
    assert_eq!(
        schema.long_description,
        "Results come from the host's search client."
    );
    let names: Vec<&str> = schema.params.iter().map(|p| &*p.name).collect();
    assert_eq!(
        names,
        ["query", "limit", "verbose", "site", "context"],
        "state is not an argument"
    );

    let query = schema.param("query").unwrap();
    assert_eq!(
        (query.kind.clone(), query.required, query.positional),
        (ValueKind::String, true, Some(0))
    );
    assert_eq!(query.description, "What to search for.");

    let limit = schema.param("limit").unwrap();
    assert_eq!(limit.kind, ValueKind::UInt);
    assert_eq!(limit.short, Some('n'));
    assert!(!limit.required);
    assert_eq!(
        limit.default, None,
        "a default function's value is not known at compile time"
    );

    let verbose = schema.param("verbose").unwrap();
    assert_eq!(
        (verbose.kind.clone(), verbose.default.as_deref()),
        (ValueKind::Bool, Some("false"))
    );
    assert!(verbose.is_flag());

    let site = schema.param("site").unwrap();
    assert!(site.repeatable);
    assert_eq!(site.long, "site");

    let context = schema.param("context").unwrap();
    assert!(context.stdin && !context.required);
    assert_eq!(schema.stdin_param().unwrap().name, "context");

    let tune = Tune::SCHEMA.unwrap();
    let speed = tune.param("speed").unwrap();
    assert_eq!(
        speed.kind,
        ValueKind::Enum(vec!["very-fast".into(), "slow".into()].into())
    );
    assert_eq!(
        speed.default.as_deref(),
        Some("slow"),
        "default_text names it"
    );
    assert!(!speed.required && !speed.optional);
    let max = tune.param("maxItems").unwrap();
    assert_eq!(max.long, "max-items");
    assert!(max.optional && !max.required);
    assert_eq!(max.aliases.as_ref(), ["max"]);
    assert_eq!(
        tune.param("max").unwrap().name,
        "maxItems",
        "lookup by alias"
    );
    assert_eq!(
        tune.param("scaleFactor").unwrap().default.as_deref(),
        Some("1.5")
    );
    assert_eq!(tune.param("workDir").unwrap().kind, ValueKind::Path);
    assert_eq!(
        tune.param("workDir").unwrap().default.as_deref(),
        Some("/tmp")
    );

    let put = Put::SCHEMA.unwrap();
    assert_eq!(put.param("data").unwrap().kind, ValueKind::Bytes);
    assert!(put.param("data").unwrap().required);
    assert_eq!(Speed::KIND, speed.kind);
}

#[test]
fn metadata_methods_follow_the_attributes() {
    let cmd = WebSearch::new(registry());
    assert_eq!(cmd.name(), "web_search");
    assert_eq!(cmd.positional_args().as_ref(), ["query"]);
    assert_eq!(cmd.stdin_arg().as_deref(), Some("context"));
    assert_eq!(cmd.schema().name, "web_search");
    let put = Put {
        key: String::new(),
        data: vec![],
        extra: None,
    };
    assert_eq!(put.name(), "put", "snake_case of the type name by default");
}

#[test]
fn method_field_names_the_command_and_receives_the_call_name() {
    let plain = Echo::default();
    assert_eq!(plain.name(), "echo");
    let alias = Echo {
        method: "shout".into(),
        ..Echo::default()
    };
    assert_eq!(alias.name(), "shout");
    assert_eq!(alias.schema().name, "shout");
    let mut called = alias.clone();
    called.set_method_name("yell");
    assert_eq!(called.method, "yell");
}

/// Fail sometimes.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = CommandResult<u32>)]
struct Parse {
    #[ipc(positional)]
    text: String,
}

impl Parse {
    async fn handle(&mut self) -> CommandResult<u32> {
        Ok(self.text.parse()?)
    }
}

#[test]
fn result_responses_travel_as_success_payload_or_failure() {
    let ok = Parse::encode_reply(&Ok(3)).unwrap();
    assert_eq!(
        ok,
        Reply::Success(encode(&3u32)),
        "a success carries just the value"
    );
    assert_eq!(Parse::decode_reply(&ok).unwrap().unwrap(), 3);

    let failed = Parse::encode_reply(&Err(CommandError::new("bad"))).unwrap();
    let Reply::Failure { message, data } = &failed else {
        panic!("{failed:?}")
    };
    assert_eq!(message, "bad");
    assert_eq!(
        rmp_serde::from_slice::<CommandError>(data).unwrap(),
        CommandError::new("bad")
    );
    assert_eq!(
        Parse::decode_reply(&failed).unwrap().unwrap_err().message(),
        "bad"
    );

    let plain = WebSearch::encode_reply(&vec!["a".to_owned()]).unwrap();
    assert_eq!(
        plain,
        Reply::Success(encode(&["a"])),
        "plain responses never fail"
    );
    assert_eq!(WebSearch::decode_reply(&plain).unwrap(), ["a"]);
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

/// Bytes back, as a plain `Vec<u8>`.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = Vec<u8>)]
struct RawBytes {}

impl RawBytes {
    async fn handle(&mut self) -> Vec<u8> {
        vec![0, 1, 255]
    }
}

/// Bytes back, or a failure.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = CommandResult<Box<[u8]>>)]
struct MaybeBytes {
    fail: bool,
}

impl MaybeBytes {
    async fn handle(&mut self) -> CommandResult<Box<[u8]>> {
        if self.fail {
            return Err(CommandError::new("no bytes"));
        }
        Ok(vec![7, 8].into_boxed_slice())
    }
}

#[test]
fn byte_responses_travel_as_msgpack_bin_and_decode_back() {
    let reply = RawBytes::encode_reply(&vec![0, 1, 255]).unwrap();
    // bin8 marker, length 3, the bytes: not an array of three integers.
    assert_eq!(reply, Reply::Success(vec![0xc4, 3, 0, 1, 255]));
    assert_eq!(RawBytes::decode_reply(&reply).unwrap(), [0, 1, 255]);
    // An older host's array of integers still decodes.
    let array = Reply::Success(rmp_serde::to_vec(&vec![4u8, 5]).unwrap());
    assert_eq!(RawBytes::decode_reply(&array).unwrap(), [4, 5]);

    let ok: CommandResult<Box<[u8]>> = Ok(vec![7, 8].into_boxed_slice());
    let reply = MaybeBytes::encode_reply(&ok).unwrap();
    assert_eq!(reply, Reply::Success(vec![0xc4, 2, 7, 8]));
    assert_eq!(&*MaybeBytes::decode_reply(&reply).unwrap().unwrap(), [7, 8]);
    let failed: CommandResult<Box<[u8]>> = Err(CommandError::new("no bytes"));
    let reply = MaybeBytes::encode_reply(&failed).unwrap();
    assert!(matches!(&reply, Reply::Failure { message, .. } if message == "no bytes"));
    let back = MaybeBytes::decode_reply(&reply).unwrap().unwrap_err();
    assert_eq!(back.to_string(), "no bytes");
}
