//! `IpcRouter::dispatch_json`: a JSON object of arguments, as an agent's
//! tool call gives them, bound by the same binder as shell words; bytes
//! given as a string or as `{"base64": "..."}`.

use gangway::IpcCommand;
use gangway::ipc::{AsyncIpcClient, CommandResult, InputStream, IpcError, IpcRouter, IpcServer};
use serde::Serialize;
use serde_json::json;

/// Count the words of a text, at most `limit`.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "count_words", response = usize)]
struct CountWords {
    /// The text, piped in from a shell.
    #[ipc(stdin)]
    text: String,
    /// Count no more than this.
    #[ipc(short = 'n')]
    limit: Option<usize>,
    /// Only words of this many letters or more.
    #[ipc(default = 1)]
    min_len: usize,
}

impl CountWords {
    async fn handle(&mut self) -> usize {
        let count = self
            .text
            .split_whitespace()
            .filter(|word| word.chars().count() >= self.min_len)
            .count();
        self.limit.map_or(count, |limit| count.min(limit))
    }
}

fn router() -> IpcRouter {
    IpcRouter::new().register(CountWords {
        text: String::new(),
        limit: None,
        min_len: 0,
    })
}

async fn count(args: serde_json::Value) -> Result<usize, IpcError> {
    let reply = router().dispatch_json("count_words", &args).await?;
    Ok(rmp_serde::from_slice(&reply).unwrap())
}

#[tokio::test]
async fn a_stdin_argument_is_an_ordinary_argument_and_defaults_apply() {
    assert_eq!(count(json!({"text": "one two three"})).await.unwrap(), 3);
    assert_eq!(
        count(json!({"text": "a bb ccc", "min_len": 2}))
            .await
            .unwrap(),
        2
    );
    // Long flags with `-` and `null` as absent, as agents write them.
    assert_eq!(
        count(json!({"text": "a b c d", "limit": 2, "min-len": null}))
            .await
            .unwrap(),
        2
    );
}

#[tokio::test]
async fn arguments_that_do_not_fit_are_usage_errors_naming_the_fix() {
    let cases = [
        (
            json!({"txt": "a"}),
            "count_words: unknown argument `txt`; did you mean `text`?",
        ),
        (json!({}), "count_words: missing required argument `text`"),
        (
            json!(["a"]),
            "count_words: arguments must be a JSON object of named values, not an array",
        ),
    ];
    for (args, message) in cases {
        let error = count(args.clone()).await.unwrap_err();
        assert!(matches!(error, IpcError::Usage { .. }), "{args}: {error:?}");
        assert!(error.to_string().starts_with(message), "{args}: {error}");
        assert_eq!(error.exit_code(), 2);
    }
    let error = count(json!({"text": "a", "limit": "3"})).await.unwrap_err();
    assert!(error.to_string().contains("`limit`"), "{error}");
    let error = router()
        .dispatch_json("count_word", &json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown command `count_word`; did you mean `count_words`?"
    );
}

/// Sum the bytes piped in.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "sum_bytes", response = (usize, u64))]
struct SumBytes {
    /// The bytes.
    #[ipc(stdin)]
    data: Vec<u8>,
}

impl SumBytes {
    async fn handle(&mut self) -> (usize, u64) {
        (
            self.data.len(),
            self.data.iter().map(|&b| u64::from(b)).sum(),
        )
    }
}

/// Sum the bytes piped in, as they arrive.
#[derive(Clone, Serialize, IpcCommand)]
#[ipc(name = "sum_stream", response = CommandResult<(usize, u64)>)]
struct SumStream {
    /// The bytes.
    #[ipc(stdin)]
    data: InputStream,
}

impl SumStream {
    async fn handle(&mut self) -> CommandResult<(usize, u64)> {
        let (mut len, mut sum) = (0, 0);
        while let Some(chunk) = self.data.next_chunk().await? {
            len += chunk.len();
            sum += chunk.iter().map(|&b| u64::from(b)).sum::<u64>();
        }
        Ok((len, sum))
    }
}

fn bytes_router() -> IpcRouter {
    IpcRouter::new()
        .register(SumBytes { data: Vec::new() })
        .register(SumStream {
            data: InputStream::new(),
        })
}

async fn sum(
    router: &IpcRouter,
    method: &str,
    data: serde_json::Value,
) -> Result<(usize, u64), IpcError> {
    let reply = router
        .dispatch_json(method, &json!({ "data": data }))
        .await?;
    // A command's `Ok` travels as the value itself.
    Ok(rmp_serde::from_slice(&reply).unwrap())
}

#[tokio::test]
async fn bytes_come_as_a_string_or_as_base64_for_any_bytes() {
    let router = bytes_router();
    // 0xff 0x00 0xfe 0x80: not UTF-8, so only base64 can say them.
    let not_utf8 = json!({"base64": "/wD+gA=="});
    for method in ["sum_bytes", "sum_stream"] {
        assert_eq!(
            sum(&router, method, json!("AB")).await.unwrap(),
            (2, 131),
            "{method}"
        );
        assert_eq!(
            sum(&router, method, json!("é")).await.unwrap(),
            (2, 0xc3 + 0xa9),
            "{method}: a string is its UTF-8 bytes"
        );
        assert_eq!(
            sum(&router, method, not_utf8.clone()).await.unwrap(),
            (4, 0xff + 0xfe + 0x80),
            "{method}"
        );
        assert_eq!(
            sum(&router, method, json!({"base64": ""})).await.unwrap(),
            (0, 0)
        );
    }
}

#[tokio::test]
async fn bad_base64_and_other_shapes_are_usage_errors_naming_both_forms() {
    let router = bytes_router();
    let error = sum(&router, "sum_bytes", json!({"base64": "QUJ!"}))
        .await
        .unwrap_err();
    assert!(matches!(error, IpcError::Usage { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        r#"sum_bytes: argument `data`: not valid base64 (invalid byte `!` at 3); give a string, or {"base64": "<standard base64>"}"#
    );
    assert_eq!(error.exit_code(), 2);
    let error = sum(&router, "sum_stream", json!([255, 0]))
        .await
        .unwrap_err();
    assert!(matches!(error, IpcError::Usage { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        r#"sum_stream: invalid value `[255,0]` for `data`: expected a string, or {"base64": "<standard base64>"}"#
    );
}

/// Over the socket the host binds the JSON (as `gangway mcp` forwards a
/// tool call): a streaming stdin argument gets the value whole, rather
/// than waiting for input the JSON caller never sends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_json_call_gives_a_streaming_stdin_argument_its_value_whole() {
    let server = IpcServer::start(bytes_router()).await.unwrap();
    let client = AsyncIpcClient::connect_to(server.endpoint(), server.token())
        .await
        .unwrap();
    for method in ["sum_bytes", "sum_stream"] {
        let args = json!({"data": {"base64": "/wD+gA=="}});
        let call = client.call_json(method, &args);
        let reply = tokio::time::timeout(std::time::Duration::from_secs(10), call)
            .await
            .unwrap_or_else(|_| panic!("{method} answers"))
            .unwrap();
        let sums: (usize, u64) = rmp_serde::from_slice(&reply).unwrap();
        assert_eq!(sums, (4, 0xff + 0xfe + 0x80), "{method}");
    }
    drop(client);
    server.shutdown(std::time::Duration::from_secs(5)).await;
}
