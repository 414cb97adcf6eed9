//! How the client prints a call's response: text as a line, bytes byte for
//! byte, anything structured as JSON (indented on a terminal, one line on a
//! pipe, keys in the order the response type writes them).

use super::say::say;
use std::io::{self, IsTerminal, Write};

use crate::ipc::exit;

/// Prints a response: a string as text ending with a newline (one added
/// when missing; empty text prints nothing), `()`/null as nothing, binary
/// byte for byte, anything else as JSON ending with a newline.
pub(super) fn print_response(command: &str, payload: &[u8]) -> i32 {
    let value = match rmpv::decode::read_value(&mut &payload[..]) {
        Ok(value) => value,
        Err(error) => {
            say(format!(
                "{command}: the response is not MessagePack: {error}"
            ));
            return exit::UNAVAILABLE;
        }
    };
    match value {
        rmpv::Value::Nil => exit::OK,
        rmpv::Value::String(text) => write_stdout(&text_line(text.as_bytes())),
        rmpv::Value::Binary(bytes) => write_stdout(&bytes),
        other => match json_text(&other, io::stdout().is_terminal()) {
            Ok(text) => write_stdout(&text),
            Err(error) => {
                say(format!(
                    "{command}: the response cannot be shown as JSON: {error}"
                ));
                exit::UNAVAILABLE
            }
        },
    }
}

/// Text as a shell prints it: ending with one newline, added when missing,
/// so calls in a row read line by line. Empty text prints nothing.
fn text_line(text: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if text.is_empty() || text.ends_with(b"\n") {
        std::borrow::Cow::Borrowed(text)
    } else {
        let mut line = Vec::with_capacity(text.len() + 1);
        line.extend_from_slice(text);
        line.push(b'\n');
        std::borrow::Cow::Owned(line)
    }
}

/// A MessagePack value written as JSON with its map entries in the order
/// they arrived, which is the order the response type serializes its
/// fields (going through `serde_json::Map` would sort them).
struct InOrder<'a>(&'a rmpv::Value);

impl serde::Serialize for InOrder<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            rmpv::Value::Nil => serializer.serialize_unit(),
            rmpv::Value::Boolean(b) => serializer.serialize_bool(*b),
            rmpv::Value::Integer(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => serializer.serialize_i64(i),
                (None, Some(u)) => serializer.serialize_u64(u),
                _ => serializer.serialize_unit(),
            },
            // JSON has no NaN or infinity: serde_json writes them as null.
            rmpv::Value::F32(x) => serializer.serialize_f64(f64::from(*x)),
            rmpv::Value::F64(x) => serializer.serialize_f64(*x),
            rmpv::Value::String(text) => {
                serializer.serialize_str(&String::from_utf8_lossy(text.as_bytes()))
            }
            rmpv::Value::Binary(bytes) | rmpv::Value::Ext(_, bytes) => {
                let mut seq = serializer.serialize_seq(Some(bytes.len()))?;
                for byte in bytes {
                    seq.serialize_element(byte)?;
                }
                seq.end()
            }
            rmpv::Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&InOrder(item))?;
                }
                seq.end()
            }
            rmpv::Value::Map(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    match key {
                        rmpv::Value::String(text) => map.serialize_entry(
                            &*String::from_utf8_lossy(text.as_bytes()),
                            &InOrder(value),
                        )?,
                        // JSON keys are text: any other key as its JSON.
                        other => {
                            let key = serde_json::to_string(&InOrder(other))
                                .map_err(serde::ser::Error::custom)?;
                            map.serialize_entry(&key, &InOrder(value))?
                        }
                    }
                }
                map.end()
            }
        }
    }
}

/// A structured response as JSON ending with a newline: indented for a
/// person at a terminal, one compact line on a pipe, as `jq` does.
fn json_text(value: &rmpv::Value, pretty: bool) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = if pretty {
        serde_json::to_vec_pretty(&InOrder(value))?
    } else {
        serde_json::to_vec(&InOrder(value))?
    };
    out.push(b'\n');
    Ok(out)
}

/// Writes `bytes` to standard output and flushes, giving the exit code: 0,
/// also when the reader has gone (`cmd | head`: a closed pipe is not the
/// command's failure), or 1 with the error on stderr.
pub fn write_stdout(bytes: &[u8]) -> i32 {
    let mut stdout = io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => exit::OK,
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => exit::OK,
        Err(error) => {
            say(format!("gangway: {error}"));
            exit::FAILURE
        }
    }
}
