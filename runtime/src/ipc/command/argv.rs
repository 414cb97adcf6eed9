//! Calls made from a shell: argv bound by the command's schema (the same
//! binder tools use), piped standard input merged in, then encoded as the
//! command's MessagePack params.

use super::router::IpcRouter;
use crate::ipc::error::ipc_error::IpcError;
use crate::tool::{BindError, ParamSchema, ToolArgs, ToolSchema, Value, ValueKind};

/// What a call from argv would do, decided before running it: whether it
/// would read piped standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgvPlan {
    /// `-h`/`--help`: the help text; nothing runs.
    Help(String),
    /// The command takes piped standard input, and these words do not give
    /// its stdin argument.
    NeedsStdin,
    /// The command runs without standard input.
    Run,
}

/// What a call from argv produced.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgvOutcome {
    /// The handler's MessagePack-encoded response.
    Response(Vec<u8>),
    /// `-h`/`--help` was given: the command's help text, and no call made.
    Help(String),
}

impl IpcRouter {
    /// Calls a command with shell words, as a wrapper script does:
    /// `argv` (everything after the command name) is bound by the command's
    /// schema, `stdin` (piped standard input, when the caller read any) fills
    /// the command's stdin argument unless that argument was given
    /// explicitly, and the result is dispatched like
    /// [`dispatch`](IpcRouter::dispatch).
    ///
    /// Empty input is no input: `Some(vec![])` leaves an `Option` stdin
    /// argument `None` (and a defaulted one its default), and gives a
    /// required `String`/`Vec<u8>` one its empty value, so a command started
    /// with stdin on `/dev/null` behaves as one given nothing.
    ///
    /// ```
    /// use gangway::IpcCommand;
    /// use gangway::ipc::{ArgvOutcome, IpcRouter};
    ///
    /// /// Repeat a word.
    /// #[derive(Clone, serde::Serialize, IpcCommand)]
    /// #[ipc(response = String)]
    /// struct Repeat {
    ///     #[ipc(positional)]
    ///     word: String,
    ///     #[ipc(short = 'n', default = 2)]
    ///     times: usize,
    /// }
    /// impl Repeat {
    ///     async fn handle(&mut self) -> String { self.word.repeat(self.times) }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let router = IpcRouter::new().register(Repeat { word: String::new(), times: 0 });
    /// let ArgvOutcome::Response(reply) = router.dispatch_argv("repeat", &["-n", "3", "ab"], None).await.unwrap()
    ///     else { unreachable!() };
    /// assert_eq!(rmp_serde::from_slice::<String>(&reply).unwrap(), "ababab");
    ///
    /// let error = router.dispatch_argv("repeat", &["--tims", "3", "ab"], None).await.unwrap_err();
    /// assert_eq!(error.to_string(), "repeat: unknown flag `--tims`; did you mean `--times`?");
    /// assert_eq!(error.exit_code(), 2);
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`IpcError::UnknownMethod`]; [`IpcError::Usage`] for words that do not
    /// fit the schema (naming the argument and the nearest valid spelling);
    /// then whatever [`dispatch`](IpcRouter::dispatch) returns.
    pub async fn dispatch_argv<S: AsRef<str>>(
        &self,
        method: &str,
        argv: &[S],
        stdin: Option<Vec<u8>>,
    ) -> Result<ArgvOutcome, IpcError> {
        let Some(info) = self.command(method) else {
            return Err(self.unknown_method(method));
        };
        match bind_argv(&info.schema, method, argv, stdin)? {
            BoundArgv::Help(text) => Ok(ArgvOutcome::Help(text)),
            BoundArgv::Params(params) => self
                .dispatch(method, &params)
                .await
                .map(ArgvOutcome::Response),
        }
    }
}

/// Shell words bound to a command's schema: the help they ask for, or the
/// command's MessagePack params.
pub(crate) enum BoundArgv {
    /// `-h`/`--help`: the command's help text; nothing runs.
    Help(String),
    /// The params the handler (and the guard) receive.
    Params(Vec<u8>),
}

/// Binds `argv` (and piped standard input) to `method`'s `schema`: what
/// [`IpcRouter::dispatch_argv`] does before dispatching, shared with
/// [`CallInfo::from_argv`](crate::ipc::CallInfo::from_argv) so that what
/// a policy is explained on is what a guard would see.
pub(crate) fn bind_argv<S: AsRef<str>>(
    schema: &ToolSchema,
    method: &str,
    argv: &[S],
    stdin: Option<Vec<u8>>,
) -> Result<BoundArgv, IpcError> {
    let usage = |error: BindError| IpcError::Usage {
        method: method.to_owned(),
        error,
    };
    let mut args = match schema.parse_words(argv) {
        Ok(args) => args,
        Err(error) if error.is_help() => return Ok(BoundArgv::Help(schema.help_text())),
        Err(error) => return Err(usage(error)),
    };
    if let (Some(bytes), Some(param)) = (stdin, schema.stdin_param())
        && !given(&args, param)
        // Empty input is no input: an `Option` stays `None` and a
        // default applies (a runner that starts commands on `/dev/null`
        // gives nothing), while a required argument gets its empty value.
        && (!bytes.is_empty() || param.required)
    {
        args.named
            .insert(param.name.to_string(), Value::Bytes(bytes));
    }
    schema.check_required(&args).map_err(usage)?;
    let params = encode_params(schema, &args).map_err(|message| IpcError::InvalidParams {
        method: method.to_owned(),
        message,
    })?;
    Ok(BoundArgv::Params(params))
}

impl IpcRouter {
    /// Binds `argv` as [`dispatch_argv`](IpcRouter::dispatch_argv) would,
    /// without calling, to say whether the call would take piped standard
    /// input, so a client reads stdin only when it will be used.
    ///
    /// # Errors
    ///
    /// [`IpcError::UnknownMethod`], or [`IpcError::Usage`] for words that do
    /// not fit the schema.
    pub fn plan_argv<S: AsRef<str>>(&self, method: &str, argv: &[S]) -> Result<ArgvPlan, IpcError> {
        let Some(info) = self.command(method) else {
            return Err(self.unknown_method(method));
        };
        let schema = &info.schema;
        let usage = |error| IpcError::Usage {
            method: method.to_owned(),
            error,
        };
        let mut args = match schema.parse_words(argv) {
            Ok(args) => args,
            Err(error) if error.is_help() => return Ok(ArgvPlan::Help(schema.help_text())),
            Err(error) => return Err(usage(error)),
        };
        let plan = match schema.stdin_param() {
            Some(param) if !given(&args, param) => {
                // Whatever stdin holds, a missing argument fails the call:
                // say so now rather than after reading all of stdin.
                args.named
                    .insert(param.name.to_string(), Value::Bytes(Vec::new()));
                ArgvPlan::NeedsStdin
            }
            _ => ArgvPlan::Run,
        };
        schema.check_required(&args).map_err(usage)?;
        Ok(plan)
    }
}

/// Whether the arguments already give this parameter.
fn given(args: &ToolArgs, param: &ParamSchema) -> bool {
    args.named.contains_key(&*param.name)
        || args.flags.contains(&*param.name)
        || param
            .positional
            .is_some_and(|index| args.positional.len() > usize::from(index))
}

/// Bound arguments as the MessagePack map `apply_args` reads: each parameter
/// under its wire name, typed by its kind.
pub(crate) fn encode_params(schema: &ToolSchema, args: &ToolArgs) -> Result<Vec<u8>, String> {
    let mut entries: Vec<(&str, Encoded)> = Vec::with_capacity(schema.params.len());
    for param in schema.params.iter() {
        let name = &*param.name;
        let value = match param.positional {
            Some(index) if param.repeatable => {
                let rest = args
                    .positional
                    .get(usize::from(index)..)
                    .unwrap_or_default();
                if rest.is_empty() {
                    args.named
                        .get(name)
                        .map(|v| element_list(param, v))
                        .transpose()?
                } else {
                    Some(Encoded::List(
                        rest.iter()
                            .map(|v| scalar(param, v))
                            .collect::<Result<_, _>>()?,
                    ))
                }
            }
            Some(index) => match args
                .positional
                .get(usize::from(index))
                .or_else(|| args.named.get(name))
            {
                Some(value) => Some(scalar(param, value)?),
                None => None,
            },
            None if args.flags.contains(name) => Some(match param.kind {
                ValueKind::Count => Encoded::Int(1),
                _ => Encoded::Bool(true),
            }),
            None => match args.named.get(name) {
                Some(value) if param.is_list() => Some(element_list(param, value)?),
                Some(value) => Some(scalar(param, value)?),
                None => None,
            },
        };
        if let Some(value) = value {
            entries.push((name, value));
        }
    }
    let mut out = Vec::with_capacity(64);
    let len = u32::try_from(entries.len()).map_err(|_| "too many arguments".to_owned())?;
    rmp::encode::write_map_len(&mut out, len).map_err(|e| e.to_string())?;
    for (key, value) in entries {
        rmp::encode::write_str(&mut out, key).map_err(|e| e.to_string())?;
        value.write(&mut out)?;
    }
    Ok(out)
}

/// A value ready to be written as MessagePack.
enum Encoded {
    Nil,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Bin(Vec<u8>),
    Json(serde_json::Value),
    List(Vec<Encoded>),
}

impl Encoded {
    /// Writes the value. Writing into a `Vec` cannot fail for lack of room;
    /// the errors kept are the encoder's own.
    fn write(&self, out: &mut Vec<u8>) -> Result<(), String> {
        fn text(error: impl std::fmt::Display) -> String {
            error.to_string()
        }
        match self {
            Encoded::Nil => rmp::encode::write_nil(out).map_err(text),
            Encoded::Bool(b) => rmp::encode::write_bool(out, *b).map_err(text),
            Encoded::Int(n) => rmp::encode::write_sint(out, *n).map(drop).map_err(text),
            Encoded::UInt(n) => rmp::encode::write_uint(out, *n).map(drop).map_err(text),
            Encoded::Float(x) => rmp::encode::write_f64(out, *x).map_err(text),
            Encoded::Str(value) => rmp::encode::write_str(out, value).map_err(text),
            Encoded::Bin(bytes) => rmp::encode::write_bin(out, bytes).map_err(text),
            Encoded::Json(json) => rmp_serde::encode::write_named(out, json).map_err(text),
            Encoded::List(items) => {
                let len = u32::try_from(items.len()).map_err(|_| "too many values".to_owned())?;
                rmp::encode::write_array_len(out, len).map_err(text)?;
                items.iter().try_for_each(|item| item.write(out))
            }
        }
    }
}

/// One bound value, typed by its parameter's kind.
fn scalar(param: &ParamSchema, value: &Value) -> Result<Encoded, String> {
    let name = &param.name;
    Ok(match (&param.kind, value) {
        (_, Value::Null) => Encoded::Nil,
        (ValueKind::Bytes, Value::Bytes(bytes)) => Encoded::Bin(bytes.clone()),
        (ValueKind::Bytes, Value::String(text)) => Encoded::Bin(text.clone().into_bytes()),
        (_, Value::Bytes(bytes)) => match std::str::from_utf8(bytes) {
            Ok(text) => Encoded::Str(text.to_owned()),
            Err(_) => {
                return Err(format!(
                    "`{name}` takes text, but the {} bytes given (standard input?) are not UTF-8",
                    bytes.len()
                ));
            }
        },
        (_, Value::String(text)) => Encoded::Str(text.clone()),
        (_, Value::Bool(b)) => Encoded::Bool(*b),
        (ValueKind::Float, Value::Int(n)) => Encoded::Float(*n as f64),
        (_, Value::Int(n)) => Encoded::Int(*n),
        (_, Value::Float(x)) => Encoded::Float(*x),
        (_, Value::Json(json)) => json_scalar(json),
    })
}

/// A list parameter's value (a JSON array, or one value) as a list.
fn element_list(param: &ParamSchema, value: &Value) -> Result<Encoded, String> {
    match value {
        Value::Json(serde_json::Value::Array(items)) => Ok(Encoded::List(
            items
                .iter()
                .map(|item| match (&param.kind, item) {
                    (ValueKind::Bytes, serde_json::Value::String(text)) => {
                        Encoded::Bin(text.clone().into_bytes())
                    }
                    (_, other) => json_scalar(other),
                })
                .collect(),
        )),
        single => Ok(Encoded::List(vec![scalar(param, single)?])),
    }
}

fn json_scalar(json: &serde_json::Value) -> Encoded {
    match json {
        serde_json::Value::Null => Encoded::Nil,
        serde_json::Value::Bool(b) => Encoded::Bool(*b),
        serde_json::Value::String(text) => Encoded::Str(text.clone()),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Encoded::Int(i),
            (None, Some(u), _) => Encoded::UInt(u),
            (_, _, Some(x)) => Encoded::Float(x),
            _ => Encoded::Json(json.clone()),
        },
        other => Encoded::Json(other.clone()),
    }
}
