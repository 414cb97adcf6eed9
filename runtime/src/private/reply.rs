//! How a derived command's response travels: the autoref probe
//! ([`ReplyProbe`] with [`ResultReply`] and [`PlainReply`]) that sends a
//! `Result` as a success or a failure and anything else as a success, and
//! [`BytesReply`] for raw bytes sent as MessagePack `bin`.

use std::fmt::Display;
use std::marker::PhantomData;

use crate::ipc::Reply;
use crate::ipc::{DecodeError, EncodeError};

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

/// The `Result` case, found first by method resolution. Its impl has no
/// bounds, so every `Result` response takes this path; the bounds sit on the
/// methods, so a `Result` whose error cannot be shown is a compile error,
/// never a silent success.
pub trait ResultReply {
    /// The success type.
    type Ok;
    /// The error type.
    type Err;

    /// `Ok(t)` as a success carrying `t`, `Err(e)` as a failure.
    fn encode_reply(self, response: &Result<Self::Ok, Self::Err>) -> Result<Reply, EncodeError>
    where
        Self::Ok: serde::Serialize,
        Self::Err: serde::Serialize + Display;

    /// The inverse of `encode_reply`.
    fn decode_reply(self, reply: &Reply) -> Result<Result<Self::Ok, Self::Err>, DecodeError>
    where
        Self::Ok: serde::de::DeserializeOwned,
        Self::Err: serde::de::DeserializeOwned;
}

impl<T, E> ResultReply for ReplyProbe<Result<T, E>> {
    type Ok = T;
    type Err = E;

    #[inline]
    fn encode_reply(self, response: &Result<T, E>) -> Result<Reply, EncodeError>
    where
        T: serde::Serialize,
        E: serde::Serialize + Display,
    {
        Ok(match response {
            Ok(value) => Reply::Success(rmp_serde::to_vec_named(value)?),
            Err(error) => Reply::Failure {
                message: error.to_string(),
                data: rmp_serde::to_vec_named(error)?,
            },
        })
    }

    fn decode_reply(self, reply: &Reply) -> Result<Result<T, E>, DecodeError>
    where
        T: serde::de::DeserializeOwned,
        E: serde::de::DeserializeOwned,
    {
        match reply {
            Reply::Success(payload) => rmp_serde::from_slice(payload).map(Ok),
            Reply::Failure { data, .. } => rmp_serde::from_slice(data).map(Err),
        }
    }
}

/// Any other response: always a success carrying the whole response.
pub trait PlainReply<R> {
    /// The response as a success.
    fn encode_reply(self, response: &R) -> Result<Reply, EncodeError>;
    /// The inverse of `encode_reply`.
    fn decode_reply(self, reply: &Reply) -> Result<R, DecodeError>;
}

impl<R> PlainReply<R> for &ReplyProbe<R>
where
    R: serde::Serialize + serde::de::DeserializeOwned,
{
    #[inline]
    fn encode_reply(self, response: &R) -> Result<Reply, EncodeError> {
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

/// A response of raw bytes in a container serde writes as a sequence
/// (`Vec<u8>`, `Box<[u8]>`, or either as a `Result`'s success): sent as
/// MessagePack `bin`, so clients print it byte for byte. Decoding also takes
/// an array of integers, as an older host sends.
pub trait BytesReply: Sized {
    /// The response as a reply.
    fn encode_bytes_reply(&self) -> Result<Reply, EncodeError>;
    /// The inverse of `encode_bytes_reply`.
    fn decode_bytes_reply(reply: &Reply) -> Result<Self, DecodeError>;
}

fn bytes_payload(bytes: &[u8]) -> Result<Vec<u8>, EncodeError> {
    rmp_serde::to_vec(serde_bytes::Bytes::new(bytes))
}

fn bytes_from_payload(payload: &[u8]) -> Result<Vec<u8>, DecodeError> {
    rmp_serde::from_slice::<serde_bytes::ByteBuf>(payload).map(serde_bytes::ByteBuf::into_vec)
}

impl BytesReply for Vec<u8> {
    fn encode_bytes_reply(&self) -> Result<Reply, EncodeError> {
        bytes_payload(self).map(Reply::Success)
    }

    fn decode_bytes_reply(reply: &Reply) -> Result<Self, DecodeError> {
        match reply {
            Reply::Success(payload) | Reply::Failure { data: payload, .. } => {
                bytes_from_payload(payload)
            }
        }
    }
}

impl BytesReply for Box<[u8]> {
    fn encode_bytes_reply(&self) -> Result<Reply, EncodeError> {
        bytes_payload(self).map(Reply::Success)
    }

    fn decode_bytes_reply(reply: &Reply) -> Result<Self, DecodeError> {
        Vec::<u8>::decode_bytes_reply(reply).map(Vec::into_boxed_slice)
    }
}

impl<T, E> BytesReply for Result<T, E>
where
    T: BytesReply,
    E: serde::Serialize + serde::de::DeserializeOwned + Display,
{
    fn encode_bytes_reply(&self) -> Result<Reply, EncodeError> {
        match self {
            Ok(bytes) => bytes.encode_bytes_reply(),
            Err(error) => Ok(Reply::Failure {
                message: error.to_string(),
                data: rmp_serde::to_vec_named(error)?,
            }),
        }
    }

    fn decode_bytes_reply(reply: &Reply) -> Result<Self, DecodeError> {
        match reply {
            Reply::Success(_) => T::decode_bytes_reply(reply).map(Ok),
            Reply::Failure { data, .. } => rmp_serde::from_slice(data).map(Err),
        }
    }
}
