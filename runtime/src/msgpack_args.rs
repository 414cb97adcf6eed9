//! Decoding a command's arguments for `#[derive(IpcCommand)]`'s generated
//! `apply_args`: [`split_args`] finds each argument's value in the
//! request's params by a table of names (one generic function for every
//! command, so a derive emits no visitor of its own), [`decode_arg`]
//! decodes one value (instantiated once per argument type, not per
//! command), [`ByteVec`] takes raw bytes in any of their forms, and the
//! `*_arg` functions word its errors. [`decode_args`] runs a visitor over
//! the params, for hand-written commands.

use std::fmt::{self, Display};

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::ipc::DecodeError;

/// MessagePack `nil`.
const NIL: u8 = 0xc0;

/// Decodes a request's params with a generated visitor. Empty params and
/// `nil` mean "no arguments"; a map gives arguments by name, an array by
/// position.
pub fn decode_args<'de, V>(params: &'de [u8], visitor: V) -> Result<V::Value, DecodeError>
where
    V: Visitor<'de>,
{
    if params.is_empty() || params == [NIL] {
        return visitor.visit_map(NoArgs);
    }
    match msgpack_value_len(params) {
        Some(len) if len == params.len() => {}
        Some(len) => {
            let stray = params.len() - len;
            return Err(de::Error::custom(format_args!(
                "{stray} stray byte{} after the arguments; params must be exactly one MessagePack value",
                if stray == 1 { "" } else { "s" }
            )));
        }
        None => {
            return Err(de::Error::custom(
                "the params are truncated or not MessagePack",
            ));
        }
    }
    let mut deserializer = rmp_serde::Deserializer::from_read_ref(params);
    // Deep enough for any real argument; shallow enough that hostile
    // nesting cannot exhaust a worker's stack.
    deserializer.set_max_depth(64);
    (&mut deserializer).deserialize_struct("arguments", &[], visitor)
}

/// Finds each argument's value in a request's params: `names` maps every
/// name and alias to its argument's index, `wires` names the arguments in
/// index order (for errors), and `slots[i]` receives argument `i`'s
/// encoded value, or stays `None` when the request leaves it out. Empty
/// params and `nil` mean "no arguments"; a map gives arguments by name,
/// an array by position.
///
/// # Errors
///
/// Params that are not one whole MessagePack map or array; an unknown
/// argument (with the nearest name), one given twice, a name that is not
/// text; more positional values than arguments.
pub fn split_args<'p>(
    params: &'p [u8],
    names: &[(&str, usize)],
    wires: &[&str],
    slots: &mut [Option<&'p [u8]>],
) -> Result<(), DecodeError> {
    if params.is_empty() || params == [NIL] {
        return Ok(());
    }
    whole_value(params)?;
    let (len, header, is_map) = match params[0] {
        marker @ 0x80..=0x8f => (usize::from(marker & 0x0f), 1, true),
        marker @ 0x90..=0x9f => (usize::from(marker & 0x0f), 1, false),
        0xde => (be_len(params, 1, 2), 3, true),
        0xdf => (be_len(params, 1, 4), 5, true),
        0xdc => (be_len(params, 1, 2), 3, false),
        0xdd => (be_len(params, 1, 4), 5, false),
        _ => return Err(wrong_type(params, "a map of arguments")),
    };
    let mut rest = &params[header..];
    if !is_map {
        if len > slots.len() {
            return Err(too_many_args(slots.len()));
        }
        for slot in slots.iter_mut().take(len) {
            *slot = Some(take_value(&mut rest)?);
        }
        return Ok(());
    }
    for _ in 0..len {
        let key = take_value(&mut rest)?;
        let name = key_text(key)?;
        let Some(&(_, index)) = names.iter().find(|(known, _)| *known == name) else {
            return Err(unknown_arg(name, wires));
        };
        let value = take_value(&mut rest)?;
        match slots.get_mut(index) {
            Some(slot @ None) => *slot = Some(value),
            Some(Some(_)) => return Err(duplicate_arg(wires.get(index).copied().unwrap_or(name))),
            None => return Err(de::Error::custom("an argument index is out of range")),
        }
    }
    Ok(())
}

/// Decodes one argument's encoded value (from [`split_args`]) as `T`,
/// naming the argument when it does not fit.
///
/// # Errors
///
/// [`invalid_arg`]: the value is not a `T`.
pub fn decode_arg<T: de::DeserializeOwned>(value: &[u8], wire: &str) -> Result<T, DecodeError> {
    T::deserialize(&mut arg_deserializer(value)).map_err(|error| invalid_arg(wire, error))
}

/// [`decode_arg`] for a secret argument (`#[ipc(secret)]`): the error
/// names the argument but never quotes its value (serde's messages do).
///
/// # Errors
///
/// [`invalid_arg`]: the value is not a `T`.
pub fn decode_secret_arg<T: de::DeserializeOwned>(
    value: &[u8],
    wire: &str,
) -> Result<T, DecodeError> {
    T::deserialize(&mut arg_deserializer(value))
        .map_err(|error| invalid_arg(wire, secret_hidden(true, error)))
}

/// A decoding error as an error message may show it: for a secret, only
/// that its value did not fit.
pub fn secret_hidden(secret: bool, error: impl Display) -> String {
    if secret {
        "a value of another type (secret, not shown)".to_owned()
    } else {
        error.to_string()
    }
}

/// A deserializer over one argument's encoded value, for a field decoded
/// by its own `deserialize_with` function.
pub fn arg_deserializer(
    value: &[u8],
) -> rmp_serde::Deserializer<rmp_serde::decode::ReadRefReader<'_, [u8]>> {
    let mut deserializer = rmp_serde::Deserializer::from_read_ref(value);
    // Deep enough for any real argument; shallow enough that hostile
    // nesting cannot exhaust a worker's stack.
    deserializer.set_max_depth(64);
    deserializer
}

/// Checks that `params` are exactly one whole MessagePack value.
fn whole_value(params: &[u8]) -> Result<(), DecodeError> {
    match msgpack_value_len(params) {
        Some(len) if len == params.len() => Ok(()),
        Some(len) => {
            let stray = params.len() - len;
            Err(de::Error::custom(format_args!(
                "{stray} stray byte{} after the arguments; params must be exactly one MessagePack value",
                if stray == 1 { "" } else { "s" }
            )))
        }
        None => Err(de::Error::custom(
            "the params are truncated or not MessagePack",
        )),
    }
}

/// A big-endian length of `width` bytes at `at` (0 when cut short, which a
/// whole value cannot be).
fn be_len(bytes: &[u8], at: usize, width: usize) -> usize {
    bytes.get(at..at + width).map_or(0, |field| {
        field.iter().fold(0, |n, b| (n << 8) | usize::from(*b))
    })
}

/// The next whole value of `rest`, which moves past it.
fn take_value<'p>(rest: &mut &'p [u8]) -> Result<&'p [u8], DecodeError> {
    let len = msgpack_value_len(rest).ok_or_else(|| {
        <DecodeError as de::Error>::custom("the params are truncated or not MessagePack")
    })?;
    let (value, after) = rest.split_at(len);
    *rest = after;
    Ok(value)
}

/// An argument name: MessagePack text (or binary holding UTF-8 text).
fn key_text(key: &[u8]) -> Result<&str, DecodeError> {
    let body = match key[0] {
        marker @ 0xa0..=0xbf => &key[1..][..usize::from(marker & 0x1f)],
        0xd9 | 0xc4 => &key[2..],
        0xda | 0xc5 => &key[3..],
        0xdb | 0xc6 => &key[5..],
        _ => return Err(wrong_type(key, "an argument name")),
    };
    std::str::from_utf8(body).map_err(|_| non_utf8_arg_name())
}

/// serde's own "invalid type: ..., expected ..." for a value of the wrong
/// kind, worded from the value itself.
#[cold]
fn wrong_type(value: &[u8], expected: &'static str) -> DecodeError {
    struct Expecting(&'static str);
    impl<'de> Visitor<'de> for Expecting {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }
    match (&mut arg_deserializer(value)).deserialize_any(Expecting(expected)) {
        Err(error) => error,
        Ok(()) => de::Error::custom(format_args!("expected {expected}")),
    }
}

/// The length in bytes of the first MessagePack value in `bytes`, or `None`
/// when it is truncated or uses the reserved marker. Walks the structure
/// without recursion (a counter of values still to read), skipping payloads
/// by their declared lengths.
pub fn msgpack_value_len(bytes: &[u8]) -> Option<usize> {
    #[inline(always)]
    fn be(bytes: &[u8], at: usize, width: usize) -> Option<usize> {
        let field = bytes.get(at..at + width)?;
        let mut value = 0usize;
        for byte in field {
            value = (value << 8) | usize::from(*byte);
        }
        Some(value)
    }

    let mut at = 0usize;
    let mut pending = 1usize;
    while pending > 0 {
        pending -= 1;
        let marker = *bytes.get(at)?;
        at += 1;
        // Payload bytes to skip, and values that follow.
        let (skip, children) = match marker {
            0x00..=0x7f | 0xc0 | 0xc2 | 0xc3 | 0xe0..=0xff => (0, 0),
            0xa0..=0xbf => (usize::from(marker & 0x1f), 0),
            0x80..=0x8f => (0, usize::from(marker & 0x0f) * 2),
            0x90..=0x9f => (0, usize::from(marker & 0x0f)),
            0xcc | 0xd0 => (1, 0),
            0xcd | 0xd1 | 0xd4 => (2, 0),
            0xd5 => (3, 0),
            0xca | 0xce | 0xd2 => (4, 0),
            0xd6 => (5, 0),
            0xcb | 0xcf | 0xd3 => (8, 0),
            0xd7 => (9, 0),
            0xd8 => (17, 0),
            0xc4 | 0xd9 => (1 + be(bytes, at, 1)?, 0),
            0xc5 | 0xda => (2 + be(bytes, at, 2)?, 0),
            0xc6 | 0xdb => (4 + be(bytes, at, 4)?, 0),
            0xc7 => (2 + be(bytes, at, 1)?, 0),
            0xc8 => (3 + be(bytes, at, 2)?, 0),
            0xc9 => (5 + be(bytes, at, 4)?, 0),
            0xdc => (2, be(bytes, at, 2)?),
            0xdd => (4, be(bytes, at, 4)?),
            0xde => (2, be(bytes, at, 2)? * 2),
            0xdf => (4, be(bytes, at, 4)?.checked_mul(2)?),
            0xc1 => return None,
        };
        at = at.checked_add(skip)?;
        pending = pending.checked_add(children)?;
        // Every value takes at least one byte: more pending values than bytes
        // left means the input is truncated (and bounds the loop).
        if at > bytes.len() || pending > bytes.len() - at {
            return None;
        }
    }
    Some(at)
}

/// An empty map.
struct NoArgs;

impl<'de> MapAccess<'de> for NoArgs {
    type Error = DecodeError;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        _seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        Ok(None)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        _seed: V,
    ) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("a value was requested from an empty map"))
    }
}

/// Raw bytes, accepted as MessagePack `bin`, a string, or an array of
/// integers (what serde makes of a `Vec<u8>`).
pub struct ByteVec(pub Vec<u8>);

impl<'de> de::Deserialize<'de> for ByteVec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BytesVisitor;
        impl<'de> Visitor<'de> for BytesVisitor {
            type Value = ByteVec;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("bytes")
            }

            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<ByteVec, E> {
                Ok(ByteVec(v.to_vec()))
            }

            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<ByteVec, E> {
                Ok(ByteVec(v))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<ByteVec, E> {
                Ok(ByteVec(v.as_bytes().to_vec()))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<ByteVec, E> {
                Ok(ByteVec(v.into_bytes()))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ByteVec, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
                while let Some(byte) = seq.next_element::<u8>()? {
                    out.push(byte);
                }
                Ok(ByteVec(out))
            }
        }
        deserializer.deserialize_any(BytesVisitor)
    }
}

/// `unknown argument `x`; did you mean `y`?`
#[cold]
pub fn unknown_arg<E: de::Error>(key: &str, known: &[&str]) -> E {
    if known.is_empty() {
        return E::custom(format_args!(
            "unknown argument `{key}`: this command takes no arguments"
        ));
    }
    match crate::tool::closest(key, known.iter().copied()) {
        Some(near) => E::custom(format_args!(
            "unknown argument `{key}`; did you mean `{near}`?"
        )),
        None => E::custom(format_args!(
            "unknown argument `{key}`; expected one of {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// An argument name that is not UTF-8.
#[cold]
pub fn non_utf8_arg_name<E: de::Error>() -> E {
    E::custom("an argument name is not valid UTF-8")
}

/// `missing required argument `x``
#[cold]
pub fn missing_arg<E: de::Error>(name: &str) -> E {
    E::custom(format_args!("missing required argument `{name}`"))
}

/// `argument `x` given more than once`
#[cold]
pub fn duplicate_arg<E: de::Error>(name: &str) -> E {
    E::custom(format_args!("argument `{name}` given more than once"))
}

/// `invalid value for argument `x`: ...`
#[cold]
pub fn invalid_arg<E: de::Error>(name: &str, error: impl Display) -> E {
    E::custom(format_args!("invalid value for argument `{name}`: {error}"))
}

/// `too many arguments: this command takes N`
#[cold]
pub fn too_many_args<E: de::Error>(count: usize) -> E {
    E::custom(format_args!(
        "too many positional values: this command takes {count} argument{}",
        if count == 1 { "" } else { "s" }
    ))
}

#[cfg(test)]
mod tests {
    use super::msgpack_value_len;

    fn encoded(value: &serde_json::Value) -> Vec<u8> {
        rmp_serde::to_vec_named(value).unwrap()
    }

    #[test]
    fn value_length_matches_the_encoder() {
        let long_text = "x".repeat(70_000);
        let values = [
            serde_json::json!(null),
            serde_json::json!(true),
            serde_json::json!(5),
            serde_json::json!(-5),
            serde_json::json!(300),
            serde_json::json!(-40_000),
            serde_json::json!(u64::MAX),
            serde_json::json!(1.5),
            serde_json::json!("short"),
            serde_json::json!("a".repeat(40)),
            serde_json::json!("b".repeat(300)),
            serde_json::json!(long_text),
            serde_json::json!([1, [2, [3, {"k": [4]}]], "x"]),
            serde_json::json!({"query": "rust", "limit": 5, "tags": ["a", "b"], "nested": {"x": null}}),
            serde_json::Value::Array((0..20).map(serde_json::Value::from).collect()),
            serde_json::Value::Array((0..70_000).map(|_| serde_json::Value::Null).collect()),
        ];
        for value in &values {
            let bytes = encoded(value);
            assert_eq!(msgpack_value_len(&bytes), Some(bytes.len()), "{value}");
            let mut trailing = bytes.clone();
            trailing.extend([0xc0, 0xc0]);
            assert_eq!(msgpack_value_len(&trailing), Some(bytes.len()));
            for cut in 0..bytes.len().min(64) {
                assert_eq!(
                    msgpack_value_len(&bytes[..cut]),
                    None,
                    "{value} cut at {cut}"
                );
            }
        }
    }

    #[test]
    fn binary_and_extension_values() {
        let mut bin = vec![0xc4, 3, 1, 2, 3];
        assert_eq!(msgpack_value_len(&bin), Some(5));
        bin.pop();
        assert_eq!(msgpack_value_len(&bin), None);
        assert_eq!(msgpack_value_len(&[0xd4, 1, 2]), Some(3), "fixext 1");
        assert_eq!(msgpack_value_len(&[0xc7, 2, 9, 1, 2]), Some(5), "ext 8");
        assert_eq!(msgpack_value_len(&[0xc1]), None, "the reserved marker");
        assert_eq!(msgpack_value_len(&[]), None);
    }

    #[test]
    fn hostile_lengths_end_quickly_without_panicking() {
        // A map claiming four billion entries in five bytes.
        assert_eq!(msgpack_value_len(&[0xdf, 0xff, 0xff, 0xff, 0xff]), None);
        assert_eq!(
            msgpack_value_len(&[0xdb, 0xff, 0xff, 0xff, 0xff, b'a']),
            None
        );
        // Pseudo-random bytes: any answer is fine, a panic is not.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let len = (state % 24) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            if let Some(n) = msgpack_value_len(&bytes) {
                assert!(n <= bytes.len());
            }
        }
    }
}
