//! `IpcRouter::dispatch_argv`: shell words bound by an IPC command's schema
//! (the binder tools use), stdin merged in, typed params dispatched.

use std::path::PathBuf;

use gangway::ipc::{ArgvOutcome, ArgvPlan, IpcError, IpcRouter, Reply};
use gangway::{ArgEnum, IpcCommand};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, ArgEnum)]
#[serde(rename_all = "lowercase")]
enum Order {
    Newest,
    Oldest,
}

/// Everything an argument can be, echoed back as JSON.
#[derive(Clone, Debug, Serialize, IpcCommand)]
#[ipc(name = "probe", response = serde_json::Value)]
struct Probe {
    /// The first word.
    #[ipc(positional)]
    first: String,
    /// Every other word.
    #[ipc(positional)]
    rest: Vec<String>,
    /// A count.
    #[ipc(short = 'n', default = 5)]
    count: u32,
    /// An offset.
    offset: Option<i64>,
    /// A ratio.
    ratio: Option<f64>,
    /// A switch.
    #[ipc(short = 'v')]
    verbose: bool,
    /// Another switch.
    #[ipc(short = 'q')]
    quiet: bool,
    /// Sort order.
    #[ipc(default = Order::Newest, default_text = "newest")]
    order: Order,
    /// Labels.
    #[ipc(short = 't')]
    tag: Vec<String>,
    /// Where.
    dir: Option<PathBuf>,
    /// Free-form.
    extra: Option<serde_json::Value>,
    /// Long name.
    max_depth: Option<u8>,
}

impl Probe {
    async fn handle(&mut self) -> serde_json::Value {
        serde_json::json!({
            "first": self.first,
            "rest": self.rest,
            "count": self.count,
            "offset": self.offset,
            "ratio": self.ratio,
            "verbose": self.verbose,
            "quiet": self.quiet,
            "order": self.order,
            "tag": self.tag,
            "dir": self.dir,
            "extra": self.extra,
            "max_depth": self.max_depth,
        })
    }
}

/// Take text on stdin.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = String)]
struct Upper {
    /// A prefix.
    #[ipc(positional)]
    prefix: Option<String>,
    /// The text.
    #[ipc(stdin)]
    text: String,
}

impl Upper {
    async fn handle(&mut self) -> String {
        format!(
            "{}{}",
            self.prefix.as_deref().unwrap_or(""),
            self.text.to_uppercase()
        )
    }
}

/// Take bytes on stdin.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = Vec<u8>)]
struct Checksum {
    #[ipc(stdin)]
    data: Option<Vec<u8>>,
}

impl Checksum {
    async fn handle(&mut self) -> Vec<u8> {
        self.data.clone().unwrap_or_default()
    }
}

/// Say what was piped in, telling `None` from empty.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = String)]
struct Memo {
    #[ipc(stdin)]
    memo: Option<String>,
}

impl Memo {
    async fn handle(&mut self) -> String {
        format!("{:?}", self.memo)
    }
}

/// Piped text with a default.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = String)]
struct Titled {
    #[ipc(stdin, default = "untitled")]
    title: String,
}

impl Titled {
    async fn handle(&mut self) -> String {
        self.title.clone()
    }
}

/// Label piped text.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(response = String)]
struct Annotate {
    /// The label.
    #[ipc(positional)]
    label: String,
    /// The text.
    #[ipc(stdin)]
    body: String,
}

impl Annotate {
    async fn handle(&mut self) -> String {
        format!("{}: {}", self.label, self.body)
    }
}

fn router() -> IpcRouter {
    IpcRouter::new()
        .register(Probe {
            first: String::new(),
            rest: vec![],
            count: 0,
            offset: None,
            ratio: None,
            verbose: false,
            quiet: false,
            order: Order::Oldest,
            tag: vec![],
            dir: None,
            extra: None,
            max_depth: None,
        })
        .register(Upper {
            prefix: None,
            text: String::new(),
        })
        .register(Checksum { data: None })
        .register(Memo { memo: None })
        .register(Titled {
            title: String::new(),
        })
        .register(Annotate {
            label: String::new(),
            body: String::new(),
        })
}

async fn call(method: &str, argv: &[&str], stdin: Option<&[u8]>) -> Result<ArgvOutcome, IpcError> {
    router()
        .dispatch_argv(method, argv, stdin.map(<[u8]>::to_vec))
        .await
}

async fn probe(argv: &[&str]) -> serde_json::Value {
    match call("probe", argv, None).await {
        Ok(ArgvOutcome::Response(bytes)) => rmp_serde::from_slice(&bytes).unwrap(),
        other => panic!("{argv:?}: {other:?}"),
    }
}

async fn usage(method: &str, argv: &[&str]) -> String {
    match call(method, argv, None).await {
        Err(error @ IpcError::Usage { .. }) => {
            assert_eq!(error.exit_code(), 2);
            error.to_string()
        }
        other => panic!("{argv:?}: expected a usage error, got {other:?}"),
    }
}

#[tokio::test]
async fn positionals_options_and_defaults_reach_the_handler() {
    let out = probe(&["search", "more", "words"]).await;
    assert_eq!(out["first"], "search");
    assert_eq!(out["rest"], serde_json::json!(["more", "words"]));
    assert_eq!(out["count"], 5, "#[ipc(default = 5)]");
    assert_eq!(out["order"], "newest");
    assert_eq!(out["verbose"], false);

    let out = probe(&[
        "-n",
        "7",
        "--offset=-3",
        "--ratio",
        "0.25",
        "--order",
        "oldest",
        "x",
    ])
    .await;
    assert_eq!(
        (
            out["count"].clone(),
            out["offset"].clone(),
            out["ratio"].clone()
        ),
        (7.into(), (-3).into(), 0.25.into())
    );
    assert_eq!(out["order"], "oldest");
    let out = probe(&[
        "x",
        "--max-depth",
        "3",
        "--dir",
        "/tmp/a b",
        "--extra",
        r#"{"k":[1]}"#,
    ])
    .await;
    assert_eq!(out["max_depth"], 3);
    assert_eq!(out["dir"], "/tmp/a b");
    assert_eq!(out["extra"], serde_json::json!({"k": [1]}));
}

#[tokio::test]
async fn a_bool_flag_before_a_positional_does_not_eat_it() {
    let out = probe(&["--verbose", "rust"]).await;
    assert_eq!(out["verbose"], true);
    assert_eq!(out["first"], "rust");
    let out = probe(&["-vq", "rust"]).await;
    assert_eq!(
        (out["verbose"].clone(), out["quiet"].clone()),
        (true.into(), true.into())
    );
}

#[tokio::test]
async fn double_dash_then_a_word_starting_with_a_dash() {
    let out = probe(&["--", "-n", "--verbose"]).await;
    assert_eq!(out["first"], "-n");
    assert_eq!(out["rest"], serde_json::json!(["--verbose"]));
    assert_eq!(out["verbose"], false);
}

#[tokio::test]
async fn repeated_options_fill_a_vec_and_a_positional_goes_by_name() {
    let out = probe(&["-t", "a", "--tag", "b", "-tc", "--first", "named"]).await;
    assert_eq!(out["tag"], serde_json::json!(["a", "b", "c"]));
    assert_eq!(out["first"], "named");
}

#[tokio::test]
async fn wrong_types_and_unknown_flags_are_usage_errors_with_a_suggestion() {
    assert_eq!(
        usage("probe", &["-n", "many", "x"]).await,
        "probe: invalid value `many` for `-n`: expected a whole number, 0 or more"
    );
    assert_eq!(
        usage("probe", &["--order", "newer", "x"]).await,
        "probe: invalid value `newer` for `--order`: expected one of `newest` or `oldest`; did you mean `newest`?"
    );
    assert_eq!(
        usage("probe", &["--verbos", "x"]).await,
        "probe: unknown flag `--verbos`; did you mean `--verbose`?"
    );
    assert_eq!(
        usage("probe", &["-n", "3"]).await,
        "probe: missing required argument `<first>`"
    );
}

#[tokio::test]
async fn a_value_out_of_range_for_the_field_is_an_invalid_params_error() {
    let err = call("probe", &["x", "--max-depth", "300"], None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "invalid_params");
    assert!(
        err.to_string()
            .starts_with("probe: invalid value for argument `max_depth`"),
        "{err}"
    );
    assert_eq!(err.exit_code(), 2);
}

#[tokio::test]
async fn help_is_rendered_from_the_schema_without_calling() {
    let Ok(ArgvOutcome::Help(help)) = call("probe", &["x", "--help"], None).await else {
        panic!()
    };
    assert!(help.starts_with("Everything an argument can be, echoed back as JSON.\n\nUsage: probe [OPTIONS] <first> [rest]...\n"), "{help}");
    for (flag, description) in [
        ("<first>", "The first word."),
        ("<rest>...", "Every other word."),
        ("-n, --count <COUNT>", "A count. [default: 5]"),
        ("--order <newest|oldest>", "Sort order. [default: newest]"),
        ("-t, --tag <TAG>", "Labels. [repeatable]"),
        ("--max-depth <MAX_DEPTH>", "Long name."),
    ] {
        let line = help
            .lines()
            .find(|l| l.starts_with("  ") && l.contains(flag))
            .unwrap_or_else(|| panic!("no `{flag}`:\n{help}"));
        assert!(line.ends_with(description), "{line}");
    }
    assert!(!help.contains("<TAG>..."), "one value per --tag:\n{help}");
    let Ok(ArgvOutcome::Help(short)) = call("probe", &["-h"], None).await else {
        panic!()
    };
    assert_eq!(short, help);
    // A stdin argument is also a flag, and the help says which wins.
    let Ok(ArgvOutcome::Help(help)) = call("upper", &["--help"], None).await else {
        panic!()
    };
    let line = help.lines().find(|l| l.contains("--text <TEXT>")).unwrap();
    assert!(
        line.ends_with("The text. [required: give `--text` or pipe it on standard input; `--text` wins when both are given]"),
        "{line}"
    );
    let Ok(ArgvOutcome::Help(help)) = call("memo", &["--help"], None).await else {
        panic!()
    };
    assert!(
        help.contains(
            "--memo <MEMO>  [or piped on standard input; `--memo` wins when both are given]"
        ),
        "{help}"
    );
}

#[tokio::test]
async fn unknown_commands_suggest_the_nearest() {
    let err = call("prob", &[], None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown command `prob`; did you mean `probe`?"
    );
    assert_eq!(err.exit_code(), 2);
}

#[tokio::test]
async fn stdin_fills_the_stdin_argument_and_an_explicit_value_wins() {
    let text = b"no final newline";
    let Ok(ArgvOutcome::Response(reply)) = call("upper", &["> "], Some(text)).await else {
        panic!()
    };
    assert_eq!(
        rmp_serde::from_slice::<String>(&reply).unwrap(),
        "> NO FINAL NEWLINE"
    );
    let Ok(ArgvOutcome::Response(reply)) =
        call("upper", &["--text", "given"], Some(b"piped")).await
    else {
        panic!()
    };
    assert_eq!(rmp_serde::from_slice::<String>(&reply).unwrap(), "GIVEN");
    let err = call("upper", &[], None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "upper: missing required argument `--text` (give it, or pipe it in on standard input)"
    );
    let err = call("upper", &[], Some(&[0xff, 0xfe])).await.unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(err.to_string().contains("are not UTF-8"), "{err}");
}

#[test]
fn the_plan_asks_for_stdin_only_when_the_call_would_use_it() {
    let router = router();
    let plan = |method: &str, argv: &[&str]| router.plan_argv(method, argv);
    assert_eq!(plan("annotate", &["x"]).unwrap(), ArgvPlan::NeedsStdin);
    assert_eq!(plan("checksum", &[]).unwrap(), ArgvPlan::NeedsStdin);
    assert_eq!(
        plan("annotate", &["x", "--body", "given"]).unwrap(),
        ArgvPlan::Run
    );
    assert!(matches!(
        plan("annotate", &["x", "--help"]).unwrap(),
        ArgvPlan::Help(text) if text.starts_with("Label piped text.")
    ));
    // A missing argument fails whatever stdin holds: no need to read it.
    let err = plan("annotate", &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "annotate: missing required argument `<label>`"
    );
    let err = plan("annotate", &["x", "--bdy", "y"]).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(matches!(
        plan("annotat", &[]),
        Err(IpcError::UnknownMethod { .. })
    ));
}

fn bytes_of(reply: Vec<u8>) -> Vec<u8> {
    Checksum::decode_reply(&Reply::Success(reply)).unwrap()
}

#[tokio::test]
async fn binary_stdin_arrives_byte_identical() {
    let mut data: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
    data.extend([0, 0, b'\n', b'\n']);
    let Ok(ArgvOutcome::Response(reply)) = call("checksum", &[], Some(&data)).await else {
        panic!()
    };
    assert_eq!(bytes_of(reply), data);
    let Ok(ArgvOutcome::Response(reply)) = call("checksum", &[], None).await else {
        panic!()
    };
    assert!(bytes_of(reply).is_empty());
}

async fn text_of(method: &str, argv: &[&str], stdin: Option<&[u8]>) -> String {
    match call(method, argv, stdin).await {
        Ok(ArgvOutcome::Response(reply)) => rmp_serde::from_slice(&reply).unwrap(),
        other => panic!("{method} {argv:?}: {other:?}"),
    }
}

#[tokio::test]
async fn empty_stdin_is_no_input() {
    // An optional stdin argument stays `None`...
    assert_eq!(text_of("memo", &[], Some(b"")).await, "None");
    assert_eq!(text_of("memo", &[], None).await, "None");
    assert_eq!(text_of("memo", &[], Some(b"\n")).await, "Some(\"\\n\")");
    // ...a defaulted one keeps its default...
    assert_eq!(text_of("titled", &[], Some(b"")).await, "untitled");
    assert_eq!(text_of("titled", &[], Some(b"t")).await, "t");
    // ...and a required one gets its empty value rather than "missing".
    assert_eq!(text_of("upper", &["p"], Some(b"")).await, "p");
    assert_eq!(text_of("annotate", &["label"], Some(b"")).await, "label: ");
    // Without any stdin at all (a terminal), it is missing.
    let err = call("annotate", &["label"], None).await.unwrap_err();
    assert_eq!(err.exit_code(), 2);
}

/// Copy with an optional destination and extra sources.
#[derive(Clone, Debug, Serialize, IpcCommand)]
#[ipc(response = String)]
struct Cp {
    #[ipc(positional)]
    src: String,
    #[ipc(positional)]
    dest: Option<String>,
    #[ipc(positional)]
    extra: Vec<String>,
}

impl Cp {
    async fn handle(&mut self) -> String {
        format!("{} -> {:?} + {:?}", self.src, self.dest, self.extra)
    }
}

#[tokio::test]
async fn a_list_given_by_name_never_slides_into_an_earlier_slot() {
    let router = IpcRouter::new().register(Cp {
        src: String::new(),
        dest: None,
        extra: vec![],
    });
    let Ok(ArgvOutcome::Response(reply)) = router
        .dispatch_argv("cp", &["a", "--extra", "x"], None)
        .await
    else {
        panic!()
    };
    assert_eq!(
        rmp_serde::from_slice::<String>(&reply).unwrap(),
        r#"a -> None + ["x"]"#
    );
}
