//! A derived command's response schema (`#[ipc(output_schema)]`): the
//! autoref probe ([`SchemaProbe`] with [`ResultSchema`] and
//! [`PlainSchema`]) that describes a `Result`'s success and any other
//! response whole, through [`ResponseSchema`] (schemars, with the `mcp`
//! feature); and the same choice for an answer's JSON ([`JsonProbe`] with
//! [`ResultJson`] and [`PlainJson`]).

use std::marker::PhantomData;

use serde_json::Value as Json;

/// A type whose JSON Schema gangway can write: any `schemars::JsonSchema`
/// type, with the `mcp` feature.
#[cfg(feature = "mcp")]
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no JSON Schema, which `#[ipc(output_schema)]` publishes",
    label = "the response type (for a `Result`, its success type) does not implement `schemars::JsonSchema`",
    note = "derive `schemars::JsonSchema` (schemars 1) for it beside `Serialize`, or remove `#[ipc(output_schema)]`"
)]
pub trait ResponseSchema {
    /// The JSON Schema (draft 2020-12) of the type as it is serialized.
    fn response_schema() -> Json;
}

#[cfg(feature = "mcp")]
impl<T: schemars::JsonSchema + ?Sized> ResponseSchema for T {
    fn response_schema() -> Json {
        schemars::generate::SchemaSettings::draft2020_12()
            .for_serialize()
            .into_generator()
            .into_root_schema_for::<T>()
            .to_value()
    }
}

/// A type whose JSON Schema gangway can write: none, without the `mcp`
/// feature.
#[cfg(not(feature = "mcp"))]
#[diagnostic::on_unimplemented(
    message = "`#[ipc(output_schema)]` needs gangway's `mcp` feature",
    label = "the output schema of this response is written by schemars, which comes with `mcp`",
    note = "turn on the feature (`gangway-runtime = {{ version = \"...\", features = [\"mcp\"] }}`), or remove `#[ipc(output_schema)]`"
)]
pub trait ResponseSchema {
    /// The JSON Schema of the type.
    fn response_schema() -> Json;
}

/// Autoref probe choosing which type a response's schema describes: a
/// `Result`'s success, or the whole response.
pub struct SchemaProbe<R>(PhantomData<R>);

impl<R> SchemaProbe<R> {
    /// The probe for response type `R`.
    #[inline]
    pub fn new() -> Self {
        SchemaProbe(PhantomData)
    }
}

impl<R> Default for SchemaProbe<R> {
    fn default() -> Self {
        SchemaProbe::new()
    }
}

/// The `Result` case, found first by method resolution: the success is
/// what a successful call answers. The bound sits on the method, so a
/// success type with no schema is reported there.
pub trait ResultSchema {
    /// The success type.
    type Ok;
    /// The success type's JSON Schema.
    fn response_json_schema(self) -> Json
    where
        Self::Ok: ResponseSchema;
}

impl<T, E> ResultSchema for SchemaProbe<Result<T, E>> {
    type Ok = T;
    fn response_json_schema(self) -> Json
    where
        T: ResponseSchema,
    {
        T::response_schema()
    }
}

/// Any other response: described whole.
pub trait PlainSchema<R> {
    /// The response type's JSON Schema.
    fn response_json_schema(self) -> Json
    where
        R: ResponseSchema;
}

impl<R> PlainSchema<R> for &SchemaProbe<R> {
    fn response_json_schema(self) -> Json
    where
        R: ResponseSchema,
    {
        R::response_schema()
    }
}

/// Autoref probe choosing what an answer's JSON is: a `Result`'s success,
/// or the whole response.
pub struct JsonProbe<'a, R>(pub &'a R);

/// The `Result` case, found first by method resolution.
pub trait ResultJson {
    /// The success value's JSON.
    fn success_json(self) -> Result<Json, String>;
}

impl<T: serde::Serialize, E> ResultJson for JsonProbe<'_, Result<T, E>> {
    fn success_json(self) -> Result<Json, String> {
        match self.0 {
            Ok(value) => serde_json::to_value(value).map_err(|error| error.to_string()),
            // A success payload decodes as `Ok`.
            Err(_) => Err("the answer is a failure, which has no structured form".to_owned()),
        }
    }
}

/// Any other response: its JSON whole.
pub trait PlainJson {
    /// The response's JSON.
    fn success_json(self) -> Result<Json, String>;
}

impl<R: serde::Serialize> PlainJson for &JsonProbe<'_, R> {
    fn success_json(self) -> Result<Json, String> {
        serde_json::to_value(self.0).map_err(|error| error.to_string())
    }
}
