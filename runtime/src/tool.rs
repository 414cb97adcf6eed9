//! Tools and their schemas: what a command or tool accepts, as data.
//!
//! Every command has a [`ToolSchema`], known at compile time: its name, its
//! description, and each argument's wire name, flag names, type, default and
//! description. The router publishes the schemas in its
//! [`Manifest`], which the `gangway` CLI turns into shell wrappers.
//!
//! ```
//! use gangway::IpcCommand;
//! use gangway::tool::ValueKind;
//! use serde::Serialize;
//!
//! /// Search the web.
//! #[derive(Clone, Serialize, IpcCommand)]
//! #[ipc(response = Vec<String>)]
//! struct WebSearch {
//!     /// What to search for.
//!     #[ipc(positional)]
//!     query: String,
//!     /// How many results to print.
//!     #[ipc(short = 'n', default = 10)]
//!     max_results: u32,
//! }
//! # impl WebSearch { async fn handle(&mut self) -> Vec<String> { vec![] } }
//!
//! let schema = <WebSearch as IpcCommand>::SCHEMA.unwrap();
//! let limit = schema.param("max_results").unwrap();
//! assert_eq!(limit.long, "max-results");
//! assert_eq!(limit.short, Some('n'));
//! assert_eq!(limit.kind, ValueKind::UInt);
//! assert_eq!(limit.default.as_deref(), Some("10"));
//! ```

pub use gangway_codegen::schema::{
    Annotations, ArgBinding, ArgType, Manifest, OutputSchema, OutputSchemaError, ParamSchema,
    ToolSchema, ValueKind, cli_long_name, closest, is_valid_command_name,
};

pub use gangway_codegen::args::{ToolArgs, ToolArgvError, Value};
pub use gangway_codegen::bind::{BindError, BindErrorKind};
pub use gangway_codegen::schema::ValueCount;

/// Turns a struct written in clap's vocabulary into a [`Tool`].
///
/// The struct keeps its `#[command(...)]`, `#[arg(...)]` and doc comments;
/// `#[tool]` adds `#[derive(clap::Parser)]` (so the crate needs `clap` with
/// its `derive` feature, and must not derive `Parser` itself), gives every
/// option a long flag if it has only a short one, and implements [`Tool`]:
///
/// - [`Tool::schema`]: every argument with its real type (`int`, `uint`,
///   `float`, `bool`, `count` for `ArgAction::Count`, `string`, `path`,
///   `bytes`, an enum's names from its `clap::ValueEnum`, lists for `Vec`),
///   description (first paragraph of `///`, or `help`), default
///   (`default_value`, `default_value_t`), short flag, aliases, and value
///   count (`num_args`). Built once, on first use, since a `ValueEnum`'s
///   names and a `default_value_t`'s text are only known by running code.
/// - [`Tool::bind`]: the clap builtin pattern. Fields of a bytes type
///   (`Vec<u8>`, `Option<Vec<u8>>`) are left out of clap (`#[arg(skip)]`)
///   and read raw from the arguments, so binary never crosses argv; a
///   positional bytes field must be the last positional, after required
///   ones.
///
/// Keys: `#[tool(name = "...")]` (default: the type's name in kebab-case),
/// `#[tool(verbatim)]` (the tool's own clap parser sees every word as
/// written; see [`ArgBinding::Verbatim`]), `#[tool(crate = path)]`.
///
/// ```
/// use gangway::tool::{Tool, ToolArgs, Value, tool};
///
/// /// Save bytes to a file.
/// #[tool(name = "save")]
/// struct Save {
///     /// Where to write.
///     path: std::path::PathBuf,
///     /// Append instead of replacing.
///     #[arg(short, long)]
///     append: bool,
///     /// What to write, kept binary.
///     #[arg(long)]
///     data: Vec<u8>,
/// }
///
/// let mut args = ToolArgs::new();
/// args.positional.push(Value::String("out.bin".into()));
/// args.named.insert("data".into(), Value::Bytes(vec![0, 255, 10]));
/// let save = Save::bind(&args).unwrap();
/// assert_eq!(save.data, [0, 255, 10]);
/// assert!(!save.append);
/// ```
pub use gangway_macros::tool;

use std::fmt;

/// A tool: a clap-style struct with a schema and a binder.
///
/// `#[tool]` implements it for a struct written in clap's own vocabulary
/// (`#[command(...)]`, `#[arg(...)]`, doc comments): the struct gets
/// `clap::Parser`, [`schema`](Tool::schema) describes every argument, and
/// [`bind`](Tool::bind) turns [`ToolArgs`] into the struct through clap, the
/// "clap builtin pattern": `flagify_bool_named`, `to_argv_excluding` the
/// byte fields, `try_parse_from`, then the byte fields read raw.
///
/// ```
/// use gangway::tool::{Tool, tool};
///
/// /// Count lines.
/// #[tool]
/// struct Count {
///     /// Files to read.
///     paths: Vec<std::path::PathBuf>,
///     /// Print totals only.
///     #[arg(short, long)]
///     summary: bool,
///     /// Stop after this many lines.
///     #[arg(long, default_value_t = 100)]
///     limit: u32,
/// }
///
/// let count = Count::bind_words(&["-s", "a.txt", "b.txt"]).unwrap();
/// assert!(count.summary);
/// assert_eq!(count.paths.len(), 2);
/// assert_eq!(count.limit, 100);
/// assert_eq!(Count::schema().name, "count");
/// ```
pub trait Tool: Sized {
    /// Everything the tool accepts.
    fn schema() -> &'static ToolSchema;

    /// Builds the tool from parsed arguments.
    ///
    /// # Errors
    ///
    /// A [`ToolBindError`] with clap's message and exit code 2 for bad
    /// arguments.
    fn bind(args: &ToolArgs) -> Result<Self, ToolBindError>;

    /// The tool's help text.
    fn help() -> String {
        Self::schema().help_text()
    }

    /// Binds shell words (everything after the tool's name) through the
    /// schema, then [`bind`](Tool::bind).
    ///
    /// # Errors
    ///
    /// A usage error (exit code 2), or for `-h`/`--help` the help text as an
    /// error with exit code 0, as clap does.
    fn bind_words<S: AsRef<str>>(words: &[S]) -> Result<Self, ToolBindError> {
        match Self::schema().parse_words(words) {
            Ok(args) => Self::bind(&args),
            Err(error) if error.is_help() => Err(ToolBindError::help(Self::help())),
            Err(error) => Err(error.into()),
        }
    }

    /// Binds a JSON object of arguments (an LLM tool call), then
    /// [`bind`](Tool::bind).
    ///
    /// # Errors
    ///
    /// A usage error (exit code 2) naming the argument.
    fn bind_json(arguments: &serde_json::Value) -> Result<Self, ToolBindError> {
        let args = Self::schema().parse_json(arguments)?;
        Self::bind(&args)
    }
}

/// Why a tool could not be bound: clap's (or the binder's) message and the
/// exit code a command-line tool would use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolBindError {
    message: String,
    exit_code: i32,
    help: bool,
}

impl ToolBindError {
    /// A usage error with this message (exit code 2).
    pub fn usage(message: impl Into<String>) -> Self {
        ToolBindError {
            message: message.into(),
            exit_code: crate::exit::USAGE,
            help: false,
        }
    }

    /// Help was asked for: the text to print, exit code 0.
    pub fn help(text: impl Into<String>) -> Self {
        ToolBindError {
            message: text.into(),
            exit_code: crate::exit::OK,
            help: true,
        }
    }

    /// The message, as clap renders it (without terminal styling).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The exit code a command-line tool would use: 2 for usage errors, 0
    /// for help.
    pub fn exit_code(&self) -> i32 {
        self.exit_code
    }

    /// Whether this is help text rather than an error.
    pub fn is_help(&self) -> bool {
        self.help
    }
}

impl fmt::Display for ToolBindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message.trim_end())
    }
}

impl std::error::Error for ToolBindError {}

impl From<clap::Error> for ToolBindError {
    fn from(error: clap::Error) -> Self {
        use clap::error::ErrorKind;
        let help = matches!(
            error.kind(),
            ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        );
        ToolBindError {
            message: error.render().to_string(),
            exit_code: error.exit_code(),
            help,
        }
    }
}

impl From<BindError> for ToolBindError {
    fn from(error: BindError) -> Self {
        if error.is_help() {
            ToolBindError::help(error.message())
        } else {
            // Worded as clap words its own errors.
            ToolBindError::usage(format!("error: {}", error.message()))
        }
    }
}

impl From<ToolArgvError> for ToolBindError {
    fn from(error: ToolArgvError) -> Self {
        ToolBindError::usage(format!("error: {error}"))
    }
}
