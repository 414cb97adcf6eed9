//! Keeping a server's own secrets out of its audit records. A caller may
//! paste a token into a command's name or its arguments, by mistake or to
//! smuggle it into a log other people read; a guard may quote the
//! arguments in its reason. Every string of a record is searched for every
//! live token the server knows, before the strings are capped (so a cap
//! cannot leave half a token behind), and each one found becomes
//! [`SCRUBBED`]. The search runs on the audit sink's thread, off the path
//! of the calls, in time linear in the record whatever the number of
//! tokens (an Aho–Corasick automaton, rebuilt only when the tokens change).
//!
//! A token that lapsed (expired or revoked) opens nothing any more, so it
//! is not searched for once the automaton is next rebuilt. A token split
//! over two arguments, or encoded, is not found: the scrub keeps an honest
//! paste out of the log, not a determined one.

use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::Value;

use super::audit::AuditRecord;
use super::guard::Decision;

/// What a token found in a record is replaced with.
pub(crate) const SCRUBBED: &str = "<token>";

/// The secrets a server knows, which change as scopes are issued.
pub(crate) trait KnownSecrets: Send + Sync {
    /// A number that changes whenever [`secrets`](Self::secrets) may have.
    fn generation(&self) -> u64;
    /// Every secret that opens something now.
    fn secrets(&self) -> Vec<String>;
}

/// Secrets fixed for a server's life (an MCP server's bearer token).
impl KnownSecrets for Vec<String> {
    fn generation(&self) -> u64 {
        0
    }
    fn secrets(&self) -> Vec<String> {
        self.clone()
    }
}

/// Takes a source's secrets out of records.
pub(crate) struct Scrubber {
    source: Arc<dyn KnownSecrets>,
    /// The generation `matcher` was built from.
    built: Option<u64>,
    /// `None` when there is nothing to search for.
    matcher: Option<AhoCorasick>,
}

impl Scrubber {
    pub(crate) fn new(source: Arc<dyn KnownSecrets>) -> Self {
        Scrubber {
            source,
            built: None,
            matcher: None,
        }
    }

    /// Replaces every known secret in `record`'s command, reason, rule and
    /// arguments (their strings and their keys) with [`SCRUBBED`].
    pub(crate) fn scrub(&mut self, record: &mut AuditRecord) {
        let generation = self.source.generation();
        if self.built != Some(generation) {
            self.matcher = matcher(self.source.secrets());
            self.built = Some(generation);
        }
        let Some(matcher) = &self.matcher else {
            return;
        };
        if let Some(command) = &mut record.command {
            scrubbed(matcher, command);
        }
        if let Some(Decision::Deny(reason)) = &mut record.decision {
            scrubbed(matcher, reason);
        }
        // A guard of the host's own may name a rule from what it was shown.
        if let Some(rule) = &mut record.rule {
            scrubbed(matcher, rule);
        }
        if let Some(args) = record.args.take() {
            record.args = Some(scrubbed_value(matcher, args));
        }
    }
}

/// An automaton finding any of `secrets`, the longest where two overlap.
fn matcher(mut secrets: Vec<String>) -> Option<AhoCorasick> {
    secrets.retain(|secret| !secret.is_empty());
    if secrets.is_empty() {
        return None;
    }
    let built = AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(&secrets);
    match built {
        Ok(matcher) => Some(matcher),
        Err(error) => {
            // Only an automaton past aho-corasick's size limits fails,
            // which a server's tokens never reach; say so if they do.
            tracing::error!(
                target: "gangway::audit",
                "cannot search audit records for tokens ({error}); records are written unscrubbed"
            );
            None
        }
    }
}

/// `text` with every match replaced, left alone (not copied) when none.
fn scrubbed(matcher: &AhoCorasick, text: &mut String) {
    if matcher.is_match(text.as_str()) {
        let mut out = String::with_capacity(text.len());
        matcher.replace_all_with(text, &mut out, |_, _, out| {
            out.push_str(SCRUBBED);
            true
        });
        *text = out;
    }
}

fn scrubbed_value(matcher: &AhoCorasick, value: Value) -> Value {
    match value {
        Value::String(mut text) => {
            scrubbed(matcher, &mut text);
            Value::String(text)
        }
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| scrubbed_value(matcher, item))
                .collect(),
        ),
        Value::Object(fields) => {
            let mut kept = serde_json::Map::with_capacity(fields.len());
            for (mut key, value) in fields {
                scrubbed(matcher, &mut key);
                let key = unused_key(&kept, key);
                kept.insert(key, scrubbed_value(matcher, value));
            }
            Value::Object(kept)
        }
        other => other,
    }
}

/// `key`, or when two keys became one by losing their tokens, the first
/// of `key#2`, `key#3`, … not taken: no argument is lost to the scrub.
fn unused_key(taken: &serde_json::Map<String, Value>, key: String) -> String {
    if !taken.contains_key(&key) {
        return key;
    }
    (2..)
        .map(|n| format!("{key}#{n}"))
        .find(|candidate| !taken.contains_key(candidate))
        .unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, SystemTime};

    use serde_json::json;

    use super::*;
    use crate::ipc::authority::audit::AuditOutcome;
    use crate::ipc::authority::audit_caps::fitted;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";

    /// Secrets a test changes, counting its generations.
    #[derive(Default)]
    struct Changing {
        secrets: Mutex<Vec<String>>,
        generation: AtomicU64,
    }

    impl Changing {
        fn set(&self, secrets: &[&str]) {
            *self.secrets.lock().unwrap() = secrets.iter().map(|s| (*s).to_owned()).collect();
            self.generation.fetch_add(1, Ordering::Relaxed);
        }
    }

    impl KnownSecrets for Changing {
        fn generation(&self) -> u64 {
            self.generation.load(Ordering::Relaxed)
        }
        fn secrets(&self) -> Vec<String> {
            self.secrets.lock().unwrap().clone()
        }
    }

    fn record(command: &str, reason: &str, args: Value) -> AuditRecord {
        AuditRecord {
            ts: SystemTime::UNIX_EPOCH,
            scope: Some("agent".into()),
            pid: None,
            uid: None,
            command: Some(command.into()),
            args: Some(args),
            decision: Some(Decision::Deny(reason.into())),
            rule: None,
            approval: None,
            outcome: AuditOutcome::Denied,
            exit: Some(77),
            duration: Duration::ZERO,
            bytes_in: 0,
            bytes_out: 0,
        }
    }

    #[test]
    fn every_string_of_a_record_loses_its_tokens() {
        let mut scrubber = Scrubber::new(Arc::new(vec![TOKEN.to_owned()]));
        let mut pasted = record(
            &format!("x{TOKEN}"),
            &format!("no: {TOKEN} and {TOKEN}"),
            json!({ "words": ["a", TOKEN, { TOKEN: format!("k={TOKEN}") }], "n": 3 }),
        );
        pasted.rule = Some(format!("rule-{TOKEN}"));
        scrubber.scrub(&mut pasted);
        let mut expected = record(
            "x<token>",
            "no: <token> and <token>",
            json!({ "words": ["a", "<token>", { "<token>": "k=<token>" }], "n": 3 }),
        );
        expected.rule = Some("rule-<token>".to_owned());
        assert_eq!(pasted, expected);
    }

    #[test]
    fn a_token_past_the_cap_leaves_no_part_of_itself() {
        // The token starts 10 bytes before the 200-byte cap of an argument:
        // capped first, its first 10 bytes would stay.
        let text = format!("{}{TOKEN}", "a".repeat(190));
        let mut scrubber = Scrubber::new(Arc::new(vec![TOKEN.to_owned()]));
        let mut pasted = record("ping", "no", json!({ "text": text }));
        scrubber.scrub(&mut pasted);
        let written = serde_json::to_string(&fitted(pasted)).unwrap();
        assert!(written.contains("<token>"), "{written}");
        assert!(!written.contains(&TOKEN[..10]), "{written}");
    }

    #[test]
    fn the_search_follows_the_secrets_as_they_change() {
        let source = Arc::new(Changing::default());
        let mut scrubber = Scrubber::new(source.clone());
        let fresh = "fedcba9876543210fedcba9876543210";
        let mut before = record(fresh, TOKEN, json!({}));
        scrubber.scrub(&mut before);
        assert_eq!(before, record(fresh, TOKEN, json!({})), "nothing known yet");
        source.set(&[TOKEN, fresh]);
        let mut after = record(fresh, TOKEN, json!({}));
        scrubber.scrub(&mut after);
        assert_eq!(after, record("<token>", "<token>", json!({})));
    }

    #[test]
    fn of_two_overlapping_tokens_the_longer_goes_whole() {
        let longer = format!("{TOKEN}ffff");
        let mut scrubber = Scrubber::new(Arc::new(vec![TOKEN.to_owned(), longer.clone()]));
        let mut pasted = record(&longer, "", json!({}));
        scrubber.scrub(&mut pasted);
        assert_eq!(pasted.command.as_deref(), Some("<token>"));
    }

    #[test]
    fn keys_that_become_one_by_losing_their_tokens_are_all_kept() {
        let other = "fedcba9876543210fedcba9876543210";
        let source: Arc<dyn KnownSecrets> = Arc::new(vec![TOKEN.to_owned(), other.to_owned()]);
        let mut scrubber = Scrubber::new(source);
        let args = json!({ TOKEN: 1, other: 2, "<token>#2": 3, "plain": 4 });
        let mut audited = record("cmd", "", args);
        scrubber.scrub(&mut audited);
        let args = audited.args.unwrap();
        let fields = args.as_object().unwrap();
        assert_eq!(fields.len(), 4, "{args}");
        let mut values: Vec<i64> = fields.values().map(|v| v.as_i64().unwrap()).collect();
        values.sort_unstable();
        assert_eq!(values, [1, 2, 3, 4], "{args}");
        assert!(!args.to_string().contains(TOKEN) && !args.to_string().contains(other));
    }
}
