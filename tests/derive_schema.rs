//! `#[derive(IpcCommand)]` through the public API: the schema it
//! publishes, its metadata methods, and how its replies travel.

mod support;
use support::Echo;

use gangway::IpcCommand;
use gangway::ipc::{CommandError, CommandResult, Reply};
use gangway::tool::{ArgType, ToolSchema, ValueKind};
use serde::Serialize;

#[path = "support/derive.rs"]
mod derive_support;

use derive_support::{Put, Speed, Tune, WebSearch, encode, registry};

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
