//! Support for code the macros generate, reached as
//! `::gangway::__private::...`. Not a public API: anything here may change
//! in any release.
//!
//! - `decode`: `#[derive(IpcCommand)]`'s argument decoding.
//! - `reply`: how a derived command's response travels.
//! - `schema`: a derived command's response schema (`#[ipc(output_schema)]`).
//! - `tool`: the run-time half of `#[gangway::tool]`.
//!
//! Every path the macros emit is re-exported here, so the generated code
//! names one module whatever file its item lives in.

mod reply;
mod schema;
mod tool;

pub use clap;
pub use serde;
pub use serde_json;
pub use std::borrow::Cow;
pub use std::marker::PhantomData;

pub use crate::ipc::{DecodeError, EncodeError};

pub use crate::msgpack_args::{
    ByteVec, arg_deserializer, decode_arg, decode_args, decode_secret_arg, duplicate_arg,
    invalid_arg, missing_arg, msgpack_value_len, non_utf8_arg_name, secret_hidden, split_args,
    too_many_args, unknown_arg,
};
pub use reply::{BytesReply, PlainReply, ReplyProbe, ResultReply};
pub use schema::{
    JsonProbe, PlainJson, PlainSchema, ResponseSchema, ResultJson, ResultSchema, SchemaProbe,
};
pub use tool::{
    DefaultText, DefaultViaDisplay, DefaultViaValueEnum, KindProbe, ViaArgType, ViaText,
    ViaValueEnum, bind_with_clap, missing_bytes, parse_json_arg, tool_bytes, tool_help,
    value_enum_names,
};
