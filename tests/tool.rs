//! `#[tool]`: a clap-style struct bound through the schema and clap, with
//! byte fields kept binary, and its schema.

mod support;

use std::path::PathBuf;

use support::Rng;

use clap::ValueEnum;
use gangway::tool::{Tool, ToolArgs, Value, ValueCount, ValueKind, tool};
use serde_json::json;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Plain,
    Json,
    /// Hidden values are not published.
    #[value(hide = true)]
    Secret,
    #[value(name = "md")]
    Markdown,
}

/// Grep through files.
///
/// Prints each matching line, prefixed by its file when there are several.
#[tool]
#[derive(Debug, PartialEq)]
struct Grep {
    /// What to look for.
    pattern: String,
    /// Where to look.
    paths: Vec<PathBuf>,
    /// Ignore case.
    #[arg(short, long)]
    ignore_case: bool,
    /// More output, once per `-v`.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Stop after this many matches.
    #[arg(short = 'm', long, default_value_t = 10)]
    max_count: u32,
    /// Lines of context.
    #[arg(short = 'C', long, default_value = "0", alias = "ctx")]
    context: i32,
    /// Only files with these extensions.
    #[arg(long = "ext")]
    extensions: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Plain)]
    format: Format,
    /// Scale scores by this.
    #[arg(long)]
    scale: Option<f64>,
    /// A point to rank near.
    #[arg(long, num_args = 2)]
    near: Option<Vec<f64>>,
    /// A patch to apply, as raw bytes.
    #[arg(long)]
    patch: Option<Vec<u8>>,
}

fn grep(words: &[&str]) -> Grep {
    Grep::bind_words(words).unwrap_or_else(|e| panic!("{words:?}: {e}"))
}

#[test]
fn binds_bools_counts_defaults_lists_enums_and_paths() {
    let g = grep(&[
        "-i", "-vv", "--ext", "rs", "--ext=md", "--format", "json", "fn main", "a.rs", "b/c.rs",
    ]);
    assert_eq!(g.pattern, "fn main");
    assert_eq!(g.paths, [PathBuf::from("a.rs"), PathBuf::from("b/c.rs")]);
    assert!(g.ignore_case);
    assert_eq!(g.verbose, 2);
    assert_eq!(g.max_count, 10, "default_value_t");
    assert_eq!(g.context, 0, "default_value");
    assert_eq!(g.extensions, ["rs", "md"]);
    assert_eq!(g.format, Format::Json);
    assert_eq!(g.scale, None);

    let g = grep(&[
        "-m",
        "3",
        "--ctx",
        "-2",
        "--scale=1.5",
        "--near",
        "1",
        "2",
        "--near",
        "3",
        "4",
        "x",
    ]);
    assert_eq!(g.max_count, 3);
    assert_eq!(g.context, -2, "an alias, and a negative number as a value");
    assert_eq!(g.scale, Some(1.5));
    assert_eq!(
        g.near,
        Some(vec![1.0, 2.0, 3.0, 4.0]),
        "two values per occurrence"
    );
    assert!(g.paths.is_empty());
    assert_eq!(grep(&["-C5", "x"]).context, 5);
}

#[test]
fn a_flag_before_the_pattern_does_not_eat_it() {
    let g = grep(&["-i", "needle"]);
    assert!(g.ignore_case);
    assert_eq!(g.pattern, "needle");
    let g = grep(&["--", "-i"]);
    assert_eq!(
        g.pattern, "-i",
        "after `--` a word that looks like a flag is the pattern"
    );
}

#[test]
fn clap_errors_carry_claps_message_and_exit_code_2() {
    let mut args = ToolArgs::new();
    args.positional.push(Value::String("x".into()));
    args.named
        .insert("format".into(), Value::String("yaml".into()));
    let err = Grep::bind(&args).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(
        err.message()
            .contains("invalid value 'yaml' for '--format <FORMAT>'"),
        "{err}"
    );
    assert!(!err.is_help());
    // A missing required argument, caught by clap.
    let err = Grep::bind(&ToolArgs::new()).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(err.message().contains("<PATTERN>"), "{err}");
}

#[test]
fn binder_errors_are_usage_errors_too() {
    let err = Grep::bind_words(&["--max-cont", "3", "x"]).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert_eq!(
        err.message(),
        "error: unknown flag `--max-cont`; did you mean `--max-count`?"
    );
}

#[test]
fn help_lists_every_argument_with_its_description() {
    let err = Grep::bind_words(&["--help"]).unwrap_err();
    assert!(err.is_help());
    assert_eq!(err.exit_code(), 0);
    let help = err.message();
    for param in Grep::schema().params.iter() {
        let shown = if param.positional.is_some() {
            param.long.to_uppercase()
        } else {
            format!("--{}", param.long)
        };
        assert!(help.contains(&shown), "help lists `{shown}`:\n{help}");
        // clap drops the summary's final period.
        let description = param.description.trim_end_matches('.');
        assert!(
            help.contains(description),
            "help describes `{shown}`:\n{help}"
        );
    }
    assert!(
        help.contains("Prints each matching line"),
        "the long description:\n{help}"
    );
}

#[test]
fn byte_fields_never_cross_the_argv_boundary() {
    let mut args = ToolArgs::new();
    args.positional.push(Value::String("x".into()));
    let binary = vec![0u8, 159, 146, 150, 10, 0];
    args.named
        .insert("patch".into(), Value::Bytes(binary.clone()));
    let g = Grep::bind(&args).unwrap();
    assert_eq!(g.patch, Some(binary));
    assert_eq!(Grep::bind_words(&["x"]).unwrap().patch, None);
    let g = Grep::bind_words(&["--patch", "text", "x"]).unwrap();
    assert_eq!(g.patch.as_deref(), Some(&b"text"[..]));
}

/// Write a file.
#[tool(name = "write-file")]
#[derive(Debug)]
struct Write {
    /// Where.
    path: PathBuf,
    /// What: the last positional, kept binary.
    content: Vec<u8>,
    /// Append instead.
    #[arg(short, long)]
    append: bool,
}

#[test]
fn a_positional_byte_field_is_read_raw() {
    let mut args = ToolArgs::new();
    args.positional.push(Value::String("out.bin".into()));
    args.positional.push(Value::Bytes(vec![0, 1, 2, 255]));
    args.flags.insert("append".into());
    let w = Write::bind(&args).unwrap();
    assert_eq!(w.path, PathBuf::from("out.bin"));
    assert_eq!(w.content, [0, 1, 2, 255]);
    assert!(w.append);
    let err = Write::bind_words(&["out.bin"]).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(err.message().contains("<content>"), "{err}");
}

#[test]
fn the_schema_has_real_types() {
    let schema = Grep::schema();
    assert_eq!(schema.name, "grep", "kebab-case of the type name");
    assert_eq!(schema.description, "Grep through files.");
    assert_eq!(
        schema.long_description,
        "Prints each matching line, prefixed by its file when there are several."
    );
    let p = |name: &str| {
        schema
            .param(name)
            .unwrap_or_else(|| panic!("no param {name}"))
    };
    assert_eq!(
        (
            p("pattern").kind.clone(),
            p("pattern").positional,
            p("pattern").required
        ),
        (ValueKind::String, Some(0), true)
    );
    assert_eq!(
        (p("paths").kind.clone(), p("paths").repeatable),
        (ValueKind::Path, true)
    );
    assert_eq!(
        (p("ignore-case").kind.clone(), p("ignore-case").short),
        (ValueKind::Bool, Some('i'))
    );
    assert_eq!(p("verbose").kind, ValueKind::Count);
    assert_eq!(
        (
            p("max-count").kind.clone(),
            p("max-count").default.as_deref()
        ),
        (ValueKind::UInt, Some("10"))
    );
    assert_eq!(
        (p("context").kind.clone(), p("context").default.as_deref()),
        (ValueKind::Int, Some("0"))
    );
    assert_eq!(p("context").aliases.as_ref(), ["ctx"]);
    assert_eq!(p("context").short, Some('C'));
    assert_eq!(
        (p("ext").kind.clone(), p("ext").repeatable),
        (ValueKind::String, true)
    );
    assert_eq!(
        p("format").kind,
        ValueKind::Enum(vec!["plain".into(), "json".into(), "md".into()].into()),
        "from ValueEnum, hidden values left out"
    );
    assert_eq!(
        p("format").default.as_deref(),
        Some("plain"),
        "the ValueEnum name of the default"
    );
    assert_eq!(
        (p("scale").kind.clone(), p("scale").optional),
        (ValueKind::Float, true)
    );
    assert_eq!(
        p("near").consumes,
        Some(ValueCount {
            min: 2,
            max: Some(2)
        })
    );
    assert_eq!(p("patch").kind, ValueKind::Bytes);
    assert_eq!(Write::schema().name, "write-file");
}

#[test]
fn json_arguments_bind_through_the_same_path() {
    let g = Grep::bind_json(&json!({
        "pattern": "todo",
        "paths": ["src"],
        "ignore_case": true,
        "verbose": 3,
        "max-count": 2,
        "format": "md",
        "near": [0.5, 1],
    }))
    .unwrap();
    assert_eq!(g.pattern, "todo");
    assert!(g.ignore_case);
    assert_eq!((g.verbose, g.max_count), (3, 2));
    assert_eq!(g.format, Format::Markdown);
    assert_eq!(g.near, Some(vec![0.5, 1.0]));
    let err = Grep::bind_json(&json!({"pattern": "x", "format": "markdown"})).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(
        err.message().starts_with(
            "error: invalid value `\"markdown\"` for `format`: \
             expected one of `plain`, `json` or `md`"
        ),
        "{err}"
    );
}

/// List files, with ls's own flags.
#[tool(verbatim)]
#[derive(Debug)]
struct Ls {
    #[arg(short = 'l')]
    long: bool,
    #[arg(short = 'a')]
    all: bool,
    paths: Vec<String>,
}

#[test]
fn a_verbatim_tool_sees_every_word_in_order() {
    let args = Ls::schema().parse_words(&["-la", "x=y", "dir"]).unwrap();
    assert_eq!(args.words.as_ref().map(Vec::len), Some(3));
    assert!(args.positional.is_empty() && args.named.is_empty());
    let ls = Ls::bind(&args).unwrap();
    assert!(ls.long && ls.all);
    assert_eq!(ls.paths, ["x=y", "dir"]);
}

impl Rng {
    fn text(&mut self) -> String {
        const PIECES: &[&str] = &[
            "a", "Z", "-", "--", "=", " ", "\t", "\n", "'", "\"", "$(x)", "`id`", "*", "?", "[",
            "é", "日本", "🦀", "\\", ";", "|", "&", "-x", "--help", "",
        ];
        let len = self.below(5);
        (0..len)
            .map(|_| PIECES[self.below(PIECES.len() as u64) as usize])
            .collect()
    }
}

/// Random arguments for `Grep`, as a host or an LLM might produce them.
fn random_args(rng: &mut Rng) -> ToolArgs {
    let mut args = ToolArgs::new();
    args.positional.push(Value::String(rng.text()));
    for _ in 0..rng.below(3) {
        args.positional.push(Value::String(rng.text()));
    }
    if rng.chance() {
        args.flags.insert("ignore-case".into());
    }
    if rng.chance() {
        args.named
            .insert("verbose".into(), Value::Int(rng.below(4) as i64 + 1));
    }
    if rng.chance() {
        args.named
            .insert("max-count".into(), Value::Int(rng.below(1000) as i64));
    }
    if rng.chance() {
        args.named
            .insert("context".into(), Value::Int(rng.below(200) as i64 - 100));
    }
    if rng.chance() {
        let exts: Vec<serde_json::Value> =
            (0..rng.below(3) + 1).map(|_| json!(rng.text())).collect();
        args.named
            .insert("ext".into(), Value::Json(serde_json::Value::Array(exts)));
    }
    if rng.chance() {
        let format = ["plain", "json", "md"][rng.below(3) as usize];
        args.named
            .insert("format".into(), Value::String(format.into()));
    }
    if rng.chance() {
        let x = (rng.next() % 2_000_001) as f64 / 1000.0 - 1000.0;
        args.named.insert("scale".into(), Value::Float(x));
    }
    args
}

#[test]
fn round_trip_parse_words_of_to_argv_binds_the_same_struct() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut bound = 0;
    for case in 0..2_000 {
        let args = random_args(&mut rng);
        // clap itself refuses some values (an empty path); then the round
        // trip must refuse them the same way.
        let direct = Grep::bind(&args).map_err(|e| e.message().to_owned());
        let argv = args.to_argv().unwrap();
        let reparsed = Grep::schema()
            .parse_words(&argv)
            .unwrap_or_else(|e| panic!("case {case}: {argv:?}: {e}"));
        let again = Grep::bind(&reparsed).map_err(|e| e.message().to_owned());
        assert_eq!(direct, again, "case {case}: {argv:?}");
        bound += usize::from(direct.is_ok());
    }
    assert!(bound > 1_000, "most cases bind ({bound} of 2000)");
}

/// Every clap attribute form the review found tricky.
#[tool]
#[command(rename_all = "snake_case")]
#[derive(Debug, PartialEq)]
struct Edge {
    /// First word.
    first: String,
    /// Optional second word.
    second: Option<String>,
    /// A one-character long.
    #[arg(long)]
    n: Option<u32>,
    /// A tri-state.
    #[arg(long)]
    maybe: Option<bool>,
    /// A bool that takes its value.
    #[arg(long, action = clap::ArgAction::Set, default_value_t = false)]
    set_bool: bool,
    /// Free-form JSON.
    #[arg(long)]
    data: Option<serde_json::Value>,
    /// Two numbers.
    #[arg(long, num_args = 2)]
    near: Option<Vec<f64>>,
    /// Default from a constant of the type.
    #[arg(long, default_value_t = Edge::LIMIT)]
    max_count: u32,
    /// An id that differs from the field.
    #[arg(id = "lim", long)]
    limit: Option<u8>,
    /// Several aliases.
    #[arg(long, aliases = &["dry", "noop"])]
    dry_run: bool,
    /// Not shown.
    #[arg(long, hide = true)]
    secret: Option<String>,
    /// From the environment when not given.
    #[arg(long, env = "GANGWAY_TEST_EDGE_TOKEN")]
    token: String,
    /// One of a few words.
    #[arg(long, value_parser = ["low", "high"])]
    level: Option<String>,
    /// Counted.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
}

impl Edge {
    const LIMIT: u32 = 7;
}

fn edge_json(extra: serde_json::Value) -> Result<Edge, gangway::tool::ToolBindError> {
    let mut base = json!({"first": "f", "token": "t"});
    base.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    Edge::bind_json(&base)
}

#[test]
fn clap_attribute_forms_bind_the_same_through_the_schema() {
    let e = edge_json(json!({"n": 5, "maybe": false, "set_bool": true, "data": [1, {"a": null}], "near": [-1.5, 2]}))
        .unwrap();
    assert_eq!(e.n, Some(5), "a one-character long");
    assert_eq!(e.maybe, Some(false), "an Option<bool> keeps its false");
    assert!(e.set_bool, "a bool with ArgAction::Set takes its value");
    assert_eq!(
        e.data,
        Some(json!([1, {"a": null}])),
        "JSON stays JSON, arrays included"
    );
    assert_eq!(
        e.near,
        Some(vec![-1.5, 2.0]),
        "negative values in a multi-word option"
    );
    assert_eq!(e.max_count, 7, "default_value_t = Edge::LIMIT");

    let words = Edge::bind_words(&[
        "--n",
        "3",
        "--maybe",
        "true",
        "--set_bool",
        "false",
        "--data",
        "\"x\"",
        "--near",
        "-1",
        "-2",
        "--max_count",
        "9",
        "--limit",
        "4",
        "--noop",
        "--token",
        "t",
        "--level",
        "high",
        "-vv",
        "f",
    ])
    .unwrap();
    assert_eq!(
        (words.n, words.maybe, words.set_bool),
        (Some(3), Some(true), false)
    );
    assert_eq!(words.data, Some(json!("x")));
    assert_eq!(words.near, Some(vec![-1.0, -2.0]));
    assert_eq!(words.max_count, 9, "rename_all = snake_case is followed");
    assert_eq!(words.limit, Some(4), "the schema's long wins over `id`");
    assert!(words.dry_run, "an alias from `aliases = &[..]`");
    assert_eq!(words.level.as_deref(), Some("high"));
    assert_eq!(words.verbose, 2);
}

#[test]
fn edge_schema_follows_the_attributes() {
    let schema = Edge::schema();
    let p = |name: &str| {
        schema
            .param(name)
            .unwrap_or_else(|| panic!("no param {name}"))
    };
    assert_eq!(p("n").long, "n");
    assert_eq!(
        p("maybe").consumes,
        Some(ValueCount {
            min: 1,
            max: Some(1)
        })
    );
    assert!(!p("maybe").is_flag() && !p("set_bool").is_flag());
    assert_eq!(p("data").kind, ValueKind::Json);
    assert_eq!(p("max_count").default.as_deref(), Some("7"));
    assert_eq!(p("dry_run").aliases.as_ref(), ["dry", "noop"]);
    assert!(p("secret").hidden);
    assert!(
        !schema.json_schema()["properties"]
            .as_object()
            .unwrap()
            .contains_key("secret")
    );
    assert!(!schema.help_text().contains("--secret"));
    assert!(!p("token").required, "an environment variable can fill it");
    assert_eq!(
        p("level").kind,
        ValueKind::Enum(vec!["low".into(), "high".into()].into())
    );
    assert_eq!(p("verbose").kind, ValueKind::Count);
}

#[test]
fn mistakes_the_schema_can_name_are_clear_errors() {
    let err = edge_json(json!({"verbose": 5_000_000})).unwrap_err();
    assert_eq!(
        err.message(),
        "error: invalid value `5000000` for `verbose`: expected a whole number from 0 to 255"
    );
    let err = Edge::bind_json(&json!({"token": "t", "second": "s"})).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(
        err.message()
            .contains("`<second>` is given but `<first>` before it is not"),
        "{err}"
    );
    let mut args = ToolArgs::new();
    args.positional.push(Value::Bytes(b"hello".to_vec()));
    args.named.insert("token".into(), Value::String("t".into()));
    assert_eq!(
        Edge::bind(&args).unwrap().first,
        "hello",
        "UTF-8 bytes are text"
    );
    args.positional[0] = Value::Bytes(vec![0xff, 0xfe]);
    let err = Edge::bind(&args).unwrap_err();
    assert_eq!(
        err.message(),
        "error: argument `first` takes text, but holds 2 bytes that are not UTF-8"
    );
}

/// Random arguments for `Edge`, exercising the forms a plain `to_argv`
/// cannot render for clap (one-character longs, value-taking bools, JSON
/// arrays, negative multi-word values).
fn random_edge(rng: &mut Rng) -> ToolArgs {
    let mut args = ToolArgs::new();
    args.positional.push(Value::String(rng.text()));
    if rng.chance() {
        args.positional.push(Value::String(rng.text()));
    }
    args.named.insert("token".into(), Value::String(rng.text()));
    if rng.chance() {
        args.named
            .insert("n".into(), Value::Int(rng.below(100) as i64));
    }
    if rng.chance() {
        args.named.insert("maybe".into(), Value::Bool(rng.chance()));
    }
    if rng.chance() {
        args.named
            .insert("set_bool".into(), Value::Bool(rng.chance()));
    }
    if rng.chance() {
        let data = match rng.below(4) {
            0 => json!(rng.text()),
            1 => json!([rng.below(9), rng.text(), null]),
            2 => json!({"k": [rng.chance(), -1.5]}),
            _ => json!(-7),
        };
        args.named.insert("data".into(), Value::Json(data));
    }
    if rng.chance() {
        let near: Vec<serde_json::Value> = (0..2)
            .map(|_| json!(rng.below(200) as f64 / 4.0 - 25.0))
            .collect();
        args.named
            .insert("near".into(), Value::Json(serde_json::Value::Array(near)));
    }
    if rng.chance() {
        args.named
            .insert("limit".into(), Value::Int(rng.below(256) as i64));
    }
    if rng.chance() {
        args.flags.insert("dry_run".into());
    }
    if rng.chance() {
        args.named.insert(
            "level".into(),
            Value::String(["low", "high"][rng.below(2) as usize].into()),
        );
    }
    if rng.chance() {
        args.named
            .insert("verbose".into(), Value::Int(rng.below(6) as i64));
    }
    args
}

#[test]
fn round_trip_through_the_schema_rendering_binds_the_same_struct() {
    let mut rng = Rng(0x51_7cc1_b727_220a);
    let mut bound = 0;
    for case in 0..2_000 {
        let args = random_edge(&mut rng);
        let direct = Edge::bind(&args).map_err(|e| e.message().to_owned());
        let argv = args.to_clap_argv(Edge::schema(), &[]).unwrap();
        let reparsed = Edge::schema()
            .parse_words(&argv)
            .unwrap_or_else(|e| panic!("case {case}: {argv:?}: {e}"));
        let again = Edge::bind(&reparsed).map_err(|e| e.message().to_owned());
        assert_eq!(direct, again, "case {case}: {argv:?}");
        bound += usize::from(direct.is_ok());
    }
    assert!(bound > 1_000, "most cases bind ({bound} of 2000)");
}
