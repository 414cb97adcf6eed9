//! `IpcRouter::dispatch_json`: a JSON object of arguments, as an agent's
//! tool call gives them, bound by the same binder as shell words.

use gangway::IpcCommand;
use gangway::ipc::{IpcError, IpcRouter};
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
