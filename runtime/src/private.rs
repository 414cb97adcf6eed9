//! Support for code the derive macros generate. Not a public API: anything
//! here may change in any release.

use std::fmt::{self, Display};

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

pub use serde;
pub use std::borrow::Cow;
pub use std::marker::PhantomData;

use crate::ipc::Reply;

/// The error `apply_args` returns.
pub type DecodeError = rmp_serde::decode::Error;

/// The error `encode_reply` returns.
pub type EncodeError = rmp_serde::encode::Error;

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
    let mut deserializer = rmp_serde::Deserializer::from_read_ref(params);
    (&mut deserializer).deserialize_struct("arguments", &[], visitor)
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

/// Autoref probe choosing how a response type travels: a `Result` as a
/// success payload or a failure, anything else as a whole success.
pub struct ReplyProbe<R>(PhantomData<R>);

impl<R> ReplyProbe<R> {
    /// The probe for response type `R`.
    #[inline]
    pub fn new() -> Self {
        ReplyProbe(PhantomData)
    }
}

impl<R> Default for ReplyProbe<R> {
    fn default() -> Self {
        ReplyProbe::new()
    }
}

/// The `Result` case, found first by method resolution.
pub trait ResultReply<R> {
    /// `Ok(t)` as a success carrying `t`, `Err(e)` as a failure.
    fn encode_reply(self, response: &R) -> Result<Reply, rmp_serde::encode::Error>;
    /// The inverse of `encode_reply`.
    fn decode_reply(self, reply: &Reply) -> Result<R, DecodeError>;
}

impl<T, E> ResultReply<Result<T, E>> for ReplyProbe<Result<T, E>>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
    E: serde::Serialize + serde::de::DeserializeOwned + Display,
{
    #[inline]
    fn encode_reply(self, response: &Result<T, E>) -> Result<Reply, rmp_serde::encode::Error> {
        Ok(match response {
            Ok(value) => Reply::Success(rmp_serde::to_vec_named(value)?),
            Err(error) => Reply::Failure {
                message: error.to_string(),
                data: rmp_serde::to_vec_named(error)?,
            },
        })
    }

    fn decode_reply(self, reply: &Reply) -> Result<Result<T, E>, DecodeError> {
        match reply {
            Reply::Success(payload) => rmp_serde::from_slice(payload).map(Ok),
            Reply::Failure { data, .. } => rmp_serde::from_slice(data).map(Err),
        }
    }
}

/// Any other response: always a success carrying the whole response.
pub trait PlainReply<R> {
    /// The response as a success.
    fn encode_reply(self, response: &R) -> Result<Reply, rmp_serde::encode::Error>;
    /// The inverse of `encode_reply`.
    fn decode_reply(self, reply: &Reply) -> Result<R, DecodeError>;
}

impl<R> PlainReply<R> for &ReplyProbe<R>
where
    R: serde::Serialize + serde::de::DeserializeOwned,
{
    #[inline]
    fn encode_reply(self, response: &R) -> Result<Reply, rmp_serde::encode::Error> {
        Ok(Reply::Success(rmp_serde::to_vec_named(response)?))
    }

    fn decode_reply(self, reply: &Reply) -> Result<R, DecodeError> {
        match reply {
            Reply::Success(payload) | Reply::Failure { data: payload, .. } => {
                rmp_serde::from_slice(payload)
            }
        }
    }
}
