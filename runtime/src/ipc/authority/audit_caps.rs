//! How much one audit record may hold: every string capped (what is kept,
//! an ellipsis, and the original length), lists and maps of arguments cut
//! short, and the arguments as a whole replaced by their size past a
//! budget, so one record stays under 4 KiB whatever a caller sends (an
//! 8 MiB command name, a guard's long reason, thousands of words).

use serde_json::Value;

use super::audit::AuditRecord;
use super::guard::Decision;
use super::limits::{ARGUMENT_TEXT, COMMAND};

/// The most bytes of a scope id a record keeps (issued ones are at most
/// 128). (A command's name: `limits::COMMAND`; an argument string:
/// `limits::ARGUMENT_TEXT`.)
const SCOPE: usize = 128;
/// Of the id of the rule that decided.
const RULE: usize = 128;
/// Of a denial's reason.
const REASON: usize = 512;
/// The most items of one list or map among the arguments.
const ARGUMENT_ITEMS: usize = 32;
/// The most bytes of the arguments as JSON; past it, only their size.
const ARGUMENTS: usize = 2048;

/// `record`, its strings and arguments cut to fit.
pub(crate) fn fitted(mut record: AuditRecord) -> AuditRecord {
    record.command = record.command.map(|command| capped(&command, COMMAND));
    record.scope = record.scope.map(|scope| capped(&scope, SCOPE));
    record.rule = record.rule.map(|rule| capped(&rule, RULE));
    if let Some(Decision::Deny(reason)) = record.decision {
        record.decision = Some(Decision::Deny(capped(&reason, REASON)));
    }
    record.args = record.args.map(|args| {
        let args = cut(args);
        let size = serde_json::to_vec(&args).map_or(usize::MAX, |json| json.len());
        if size > ARGUMENTS {
            Value::String(format!(
                "<{size} bytes of arguments, left out of the record>"
            ))
        } else {
            args
        }
    });
    record
}

/// `text` cut to at most `max` bytes as JSON writes it (where a control
/// character takes six), at a character boundary, with its length noted:
/// `kept… (N bytes)`.
pub(crate) fn capped(text: &str, max: usize) -> String {
    // The common case, a short plain string, in one pass over its bytes:
    // with no byte that JSON escapes, its size as JSON is its length.
    if text.len() <= max && text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        return text.to_owned();
    }
    let mut size = 0;
    for (at, c) in text.char_indices() {
        size += json_len(c);
        if size > max {
            return format!("{}… ({} bytes)", &text[..at], noted_len(text));
        }
    }
    text.to_owned()
}

/// The length of the text `text` was cut from, when it was cut before
/// (it ends `… (N bytes)`, N past its own length); else its own length.
fn noted_len(text: &str) -> usize {
    text.strip_suffix(" bytes)")
        .and_then(|rest| rest.rsplit_once("… ("))
        .and_then(|(_, len)| len.parse().ok())
        .filter(|&len| len > text.len())
        .unwrap_or(text.len())
}

/// The bytes `c` takes in a JSON string.
fn json_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\t' | '\r' | '\u{8}' | '\u{c}' => 2,
        c if u32::from(c) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// The arguments with each string capped and each list and map cut short.
fn cut(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(capped(&text, ARGUMENT_TEXT)),
        Value::Array(items) => {
            let len = items.len();
            let mut kept: Vec<Value> = items.into_iter().take(ARGUMENT_ITEMS).map(cut).collect();
            if len > ARGUMENT_ITEMS {
                kept.push(Value::String(format!("… ({len} items)")));
            }
            Value::Array(kept)
        }
        Value::Object(fields) => {
            let len = fields.len();
            let mut kept: serde_json::Map<String, Value> = fields
                .into_iter()
                .take(ARGUMENT_ITEMS)
                .map(|(key, value)| (capped(&key, ARGUMENT_TEXT), cut(value)))
                .collect();
            if len > ARGUMENT_ITEMS {
                kept.insert("…".to_owned(), Value::String(format!("{len} entries")));
            }
            Value::Object(kept)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::ipc::authority::audit::AuditOutcome;

    fn record() -> AuditRecord {
        AuditRecord {
            ts: SystemTime::UNIX_EPOCH,
            scope: Some("s".repeat(500)),
            pid: Some(1),
            uid: Some(0),
            command: Some("é".repeat(5_000_000)),
            args: Some(serde_json::json!({
                "text": "t".repeat(100_000),
                "list": (0..5000).map(|n| format!("item-{n}")).collect::<Vec<_>>(),
            })),
            decision: Some(Decision::Deny("r".repeat(100_000))),
            rule: None,
            approval: None,
            outcome: AuditOutcome::Denied,
            exit: Some(77),
            duration: Duration::from_millis(3),
            bytes_in: 1,
            bytes_out: 2,
        }
    }

    #[test]
    fn a_record_of_huge_strings_fits_in_4_kib() {
        let fitted = fitted(record());
        let json = serde_json::to_vec(&fitted).unwrap();
        assert!(json.len() < 4096, "{} bytes", json.len());
        let command = fitted.command.unwrap();
        assert!(
            command.ends_with("… (10000000 bytes)"),
            "{}",
            &command[..40]
        );
        assert!(command.starts_with("éé"));
        let Some(Decision::Deny(reason)) = fitted.decision else {
            panic!("still a denial");
        };
        assert!(reason.ends_with("… (100000 bytes)") && reason.len() < 600);
        let args = fitted.args.unwrap();
        assert_eq!(args["list"].as_array().unwrap().len(), ARGUMENT_ITEMS + 1);
        assert_eq!(args["list"][ARGUMENT_ITEMS], "… (5000 items)");
        assert!(args["text"].as_str().unwrap().ends_with("… (100000 bytes)"));
    }

    #[test]
    fn a_plain_string_is_kept_up_to_the_cap_and_an_escaped_one_counts_its_escapes() {
        let plain = "a".repeat(64);
        assert_eq!(capped(&plain, 64), plain);
        assert_eq!(capped(&"a".repeat(65), 64), format!("{plain}… (65 bytes)"));
        // 64 bytes, but 65 as JSON writes them: the quote costs two.
        let quoted = format!("\"{}", "a".repeat(63));
        assert_eq!(
            capped(&quoted, 64),
            format!("\"{}… (64 bytes)", "a".repeat(62))
        );
        let multibyte = "é".repeat(32);
        assert_eq!(capped(&multibyte, 64), multibyte);
    }

    #[test]
    fn control_characters_count_as_json_writes_them() {
        let mut escaped = record();
        escaped.command = Some("\u{1}".repeat(100_000));
        escaped.scope = Some("\u{1}".repeat(500));
        escaped.decision = Some(Decision::Deny("\u{1f}".repeat(100_000)));
        escaped.args = Some(serde_json::json!({ "\u{1}".repeat(300): "\u{2}".repeat(300) }));
        let fitted = fitted(escaped);
        let json = serde_json::to_vec(&fitted).unwrap();
        assert!(json.len() < 4096, "{} bytes", json.len());
        let command = fitted.command.unwrap();
        assert_eq!(
            command,
            format!("{}… (100000 bytes)", "\u{1}".repeat(COMMAND / 6))
        );
        // A short text is kept whole, escapes and all.
        assert_eq!(capped("a\u{1}b", 10), "a\u{1}b");
        assert_eq!(capped("a\u{1}b", 6), "a… (3 bytes)");
        assert_eq!(capped("\"\\\"", 4), "\"\\… (3 bytes)");
    }

    #[test]
    fn arguments_past_the_budget_are_only_their_size_and_small_records_are_untouched() {
        let mut big = record();
        big.args = Some(Value::Array(
            (0..30).map(|_| Value::String("a".repeat(150))).collect(),
        ));
        let args = fitted(big).args.unwrap();
        assert!(
            args.as_str()
                .is_some_and(|s| s.ends_with("bytes of arguments, left out of the record>")),
            "{args}"
        );
        let mut small = record();
        small.command = Some("greet".into());
        small.scope = Some("agent-1".into());
        small.decision = Some(Decision::Allow);
        small.args = Some(serde_json::json!({"name": "world"}));
        assert_eq!(fitted(small.clone()), small);
    }
}
