//! The command model: a `#[derive(IpcCommand)]` struct read, checked and
//! resolved into everything the macro expands and the scanner publishes.
//!
//! Every check reports into one accumulator, so a user sees all the mistakes
//! of one struct at once, each spanned on the offending token.

use darling::error::Accumulator;
use proc_macro2::Span;
use syn::{Expr, ExprPath, Ident, Type};

use super::attr::{self, CommandOpts, FieldOpts, SerdeDefault};
use super::naming::snake_case;
use super::ty::{self, ArgShape, Decode, KindSource};
use crate::schema::{ParamSchema, ToolSchema, ValueKind, cli_long_name, is_valid_command_name};

/// Short flags no argument may take, because `--help` owns them.
const RESERVED_SHORTS: &[char] = &['h'];
/// Long flags no argument may take.
const RESERVED_LONGS: &[&str] = &["help"];

/// Why a command struct was refused: every error found, and the model as far
/// as it could be read (for dummy impls that keep the user's other code from
/// failing too).
#[derive(Debug)]
pub struct Rejected {
    /// All errors, each spanned.
    pub error: darling::Error,
    /// The model, when the attributes could be read at all.
    pub partial: Option<Box<CommandModel>>,
}

/// A `#[derive(IpcCommand)]` struct, checked.
#[derive(Debug)]
pub struct CommandModel {
    /// The struct's name.
    pub ident: Ident,
    /// The struct's generics.
    pub generics: syn::Generics,
    /// The path of the `gangway` crate in generated code.
    pub krate: syn::Path,
    /// The response type.
    pub response: Type,
    /// The inherent method that handles a call.
    pub handler: Ident,
    /// The command name (before any `method` override).
    pub name: String,
    /// First paragraph of the struct's docs.
    pub description: String,
    /// The rest of the struct's docs.
    pub long_description: String,
    /// Every field, in order.
    pub fields: Vec<FieldModel>,
    /// `#[serde(default)]` on the struct.
    pub container_default: Option<SerdeDefault>,
    /// `#[ipc(bound = "...")]`: extra predicates for the impl.
    pub bound: Vec<syn::WherePredicate>,
    /// serde's derive reports an error in the struct's serde attributes, so
    /// generating an impl would only add errors after serde's.
    pub serde_reports_error: bool,
}

/// One field of a command struct.
#[derive(Debug)]
pub struct FieldModel {
    /// The field's name.
    pub ident: Ident,
    /// The field's type.
    pub ty: Type,
    /// What the field is for.
    pub role: FieldRole,
}

/// What a field is for.
#[derive(Debug)]
pub enum FieldRole {
    /// An argument read from each request.
    Arg(Box<ArgModel>),
    /// Host state, left alone by `apply_args`.
    State,
    /// Receives the name the command was called by.
    Method,
}

/// An argument field, resolved.
#[derive(Debug)]
pub struct ArgModel {
    /// The key on the wire.
    pub wire: String,
    /// The long flag, without `--`.
    pub long: String,
    /// The short flag.
    pub short: Option<char>,
    /// Other accepted wire names.
    pub aliases: Vec<String>,
    /// What the type means.
    pub shape: ArgShape,
    /// What happens when a request leaves the argument out.
    pub missing: Missing,
    /// The default as text, when known at compile time.
    pub default_text: Option<String>,
    /// First paragraph of the field's docs.
    pub description: String,
    /// Position among the positionals.
    pub positional: Option<u16>,
    /// Whether piped stdin fills it.
    pub stdin: bool,
    /// serde's `deserialize_with`/`with`.
    pub deserialize_with: Option<ExprPath>,
}

/// What `apply_args` does when a request leaves an argument out.
#[derive(Debug, Clone)]
pub enum Missing {
    /// Fails, naming the argument.
    Required,
    /// `None`.
    None,
    /// `Default::default()` (bools, collections, `#[serde(default)]`).
    DefaultTrait,
    /// Calls `path()` (`#[serde(default = "path")]`).
    DefaultPath(ExprPath),
    /// Evaluates `#[ipc(default = expr)]`.
    DefaultExpr(Expr),
    /// Takes the field from the struct's own default (`#[serde(default)]` on
    /// the struct).
    Container,
}

impl ArgModel {
    /// Whether a request must give this argument.
    pub fn required(&self) -> bool {
        matches!(self.missing, Missing::Required)
    }
}

impl CommandModel {
    /// Reads and checks a `#[derive(IpcCommand)]` input; every problem found is
    /// in the returned error, beside as much of the model as could be read.
    pub fn from_derive_input(input: &syn::DeriveInput) -> Result<Self, Rejected> {
        if let Err(error) = check_shape(input) {
            return Err(Rejected {
                error,
                partial: None,
            });
        }
        let mut errors = darling::Error::accumulator();
        let opts = CommandOpts::read(input, &mut errors);
        let model = build(opts, &mut errors);
        match errors.finish() {
            Ok(()) => Ok(model),
            Err(error) => Err(Rejected {
                error,
                partial: Some(Box::new(model)),
            }),
        }
    }

    /// The argument fields, in declaration order.
    pub fn args(&self) -> impl Iterator<Item = (&FieldModel, &ArgModel)> {
        self.fields.iter().filter_map(|f| match &f.role {
            FieldRole::Arg(arg) => Some((f, &**arg)),
            _ => None,
        })
    }

    /// The field that receives the method name, if any.
    pub fn method_field(&self) -> Option<&Ident> {
        self.fields
            .iter()
            .find(|f| matches!(f.role, FieldRole::Method))
            .map(|f| &f.ident)
    }

    /// The schema, with named types' kinds looked up by `resolve` (the macro
    /// does not call this; it emits `ArgType::KIND` instead).
    pub fn schema(
        &self,
        resolve: impl Fn(&Type) -> Option<ValueKind>,
    ) -> Result<ToolSchema, Box<Type>> {
        let mut params = Vec::new();
        for (_, arg) in self.args() {
            let kind = match &arg.shape.kind {
                KindSource::Known(kind) => kind.clone(),
                KindSource::Named(ty) => resolve(ty).ok_or_else(|| ty.clone())?,
            };
            params.push(arg.param_schema(kind));
        }
        let mut schema = ToolSchema::new(self.name.clone())
            .with_description(self.description.clone())
            .with_long_description(self.long_description.clone());
        schema.params = params.into();
        Ok(schema)
    }
}

impl ArgModel {
    /// The parameter's schema, given the kind of one value.
    pub fn param_schema(&self, kind: ValueKind) -> ParamSchema {
        let mut param = ParamSchema::new(self.wire.clone(), kind)
            .long(self.long.clone())
            .description(self.description.clone());
        param.short = self.short;
        param.aliases = self
            .aliases
            .iter()
            .cloned()
            .map(Into::into)
            .collect::<Vec<_>>()
            .into();
        param.repeatable = self.shape.repeatable;
        param.required = self.required();
        param.optional = self.shape.optional;
        param.default = self.default_text.clone().map(Into::into);
        param.positional = self.positional;
        param.stdin = self.stdin;
        param
    }
}

fn check_shape(input: &syn::DeriveInput) -> darling::Result<()> {
    let what = "`#[derive(IpcCommand)]` needs a struct with named fields";
    match &input.data {
        syn::Data::Struct(data) => match &data.fields {
            syn::Fields::Named(_) | syn::Fields::Unit => Ok(()),
            syn::Fields::Unnamed(fields) => Err(darling::Error::custom(format!(
                "{what}; a tuple struct's fields have no names to use as arguments"
            ))
            .with_span(&fields.paren_token.span.join())),
        },
        syn::Data::Enum(data) => Err(darling::Error::custom(format!(
            "{what}, not an enum; give each command its own struct"
        ))
        .with_span(&data.enum_token)),
        syn::Data::Union(data) => {
            Err(darling::Error::custom(format!("{what}, not a union")).with_span(&data.union_token))
        }
    }
}

fn build(opts: CommandOpts, errors: &mut Accumulator) -> CommandModel {
    let (description, long_description) = attr::docs(&opts.attrs);
    let container = attr::serde_container(&opts.attrs, errors);
    for (key, span) in &container.unsupported {
        errors.push(
            darling::Error::custom(format!(
                "`#[serde({key})]` changes the struct's shape on the wire, which a command's \
                 arguments cannot follow; remove it"
            ))
            .with_span(span),
        );
    }

    let name = match &opts.name {
        Some(name) => {
            if !is_valid_command_name(&name.value) {
                errors.push(
                    darling::Error::custom(format!(
                        "invalid command name `{}`: a name becomes a file name and a shell word, so it \
                         must match `[A-Za-z][A-Za-z0-9_-]*`",
                        name.value
                    ))
                    .with_span(&name.span),
                );
            }
            name.value.clone()
        }
        None => {
            let ident = opts.ident.to_string();
            let name = snake_case(ident.strip_prefix("r#").unwrap_or(&ident));
            if !is_valid_command_name(&name) {
                errors.push(
                    darling::Error::custom(format!(
                        "`{}` would be the command `{name}`, which is not a valid command name (it must \
                         match `[A-Za-z][A-Za-z0-9_-]*`); give it one with `#[ipc(name = \"...\")]`",
                        opts.ident
                    ))
                    .with_span(&opts.ident),
                );
            }
            name
        }
    };

    for param in &opts.generics.params {
        if let syn::GenericParam::Lifetime(lifetime) = param {
            errors.push(
                darling::Error::custom(format!(
                    "a command cannot borrow (`IpcCommand` is `'static`, and arguments are decoded into \
                     owned values); remove the lifetime `{}`",
                    lifetime.lifetime
                ))
                .with_span(&lifetime.lifetime),
            );
        }
    }

    let response = match opts.response {
        Some(ty) => ty,
        None => {
            errors.push(
                darling::Error::custom(format!(
                    "missing `#[ipc(response = Type)]` on `{}`: name the type the handler returns, \
                     for example `#[ipc(response = String)]`",
                    opts.ident
                ))
                .with_span(&opts.ident),
            );
            syn::parse_quote!(())
        }
    };

    let fields = opts.fields;
    let mut models = Vec::with_capacity(fields.len());
    let mut next_positional: u16 = 0;
    for field in fields {
        if let Some(model) = build_field(field, &container, &mut next_positional, errors) {
            models.push(model);
        }
    }

    check_fields(&models, errors);

    CommandModel {
        ident: opts.ident.clone(),
        generics: opts.generics,
        krate: opts.krate.unwrap_or_else(|| syn::parse_quote!(::gangway)),
        response,
        handler: opts
            .handler
            .unwrap_or_else(|| Ident::new("handle", opts.ident.span())),
        name,
        description,
        long_description,
        fields: models,
        container_default: container.default,
        bound: opts.bound,
        serde_reports_error: container.serde_reports_error,
    }
}

fn build_field(
    field: FieldOpts,
    container: &attr::SerdeContainer,
    next_positional: &mut u16,
    errors: &mut Accumulator,
) -> Option<FieldModel> {
    let ident = field.ident.clone()?;
    let serde = attr::serde_field(&field.attrs, errors);
    let (description, _) = attr::docs(&field.attrs);

    if let Some(span) = serde.flatten {
        errors.push(
            darling::Error::custom(
                "`#[serde(flatten)]` is not supported on a command: every argument must be a field \
                 of the command struct itself",
            )
            .with_span(&span),
        );
    }

    // Roles that exclude each other, each named by the key that set it.
    let roles: Vec<(&str, Span)> = [
        ("positional", &field.positional),
        ("stdin", &field.stdin),
        ("state", &field.state),
        ("method", &field.method),
    ]
    .into_iter()
    .filter(|(_, flag)| flag.is_present())
    .map(|(name, flag)| (name, flag.span()))
    .collect();
    if roles.len() > 1 {
        let names = roles
            .iter()
            .map(|(n, _)| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(" and ");
        errors.push(
            darling::Error::custom(format!(
                "field `{ident}` cannot be both {names}: pick the one that says where its value comes from"
            ))
            .with_span(&roles[1].1),
        );
    }

    if field.state.is_present() || field.method.is_present() {
        let key = if field.state.is_present() {
            "state"
        } else {
            "method"
        };
        let key_span = if field.state.is_present() {
            field.state.span()
        } else {
            field.method.span()
        };
        if serde.skip_deserializing.is_none() || !serde.skip_serializing {
            errors.push(
                darling::Error::custom(format!(
                    "`#[ipc({key})]` field `{ident}` must also be `#[serde(skip)]`: it is not an argument, \
                     so a client must never send it"
                ))
                .with_span(&key_span),
            );
        }
        if let Some(short) = &field.short {
            errors.push(
                darling::Error::custom(format!(
                    "`short` is for arguments; `{ident}` is `#[ipc({key})]`"
                ))
                .with_span(&short.span),
            );
        }
        if let Some(default) = &field.default {
            errors.push(
                darling::Error::custom(format!(
                    "`default` is for arguments; `{ident}` is `#[ipc({key})]` and keeps its value"
                ))
                .with_span(default),
            );
        }
        if field.method.is_present() && !ty::is_string(&field.ty) {
            errors.push(
                darling::Error::custom(format!(
                    "`#[ipc(method)]` field `{ident}` must be a `String`: it receives the name the \
                     command was called by"
                ))
                .with_span(&field.ty),
            );
        }
        let role = if field.state.is_present() {
            FieldRole::State
        } else {
            FieldRole::Method
        };
        return Some(FieldModel {
            ident,
            ty: field.ty,
            role,
        });
    }

    if let Some(span) = serde.skip_deserializing {
        errors.push(
            darling::Error::custom(format!(
                "field `{ident}` is skipped by serde, so it is not an argument; mark it \
                 `#[ipc(state)]` to keep it across calls"
            ))
            .with_span(&span),
        );
        return Some(FieldModel {
            ident,
            ty: field.ty,
            role: FieldRole::State,
        });
    }

    let shape = match ty::classify(&field.ty) {
        Ok(shape) => shape,
        Err(ty::ShapeError::Borrowed) => {
            errors.push(
                darling::Error::custom(format!(
                    "argument `{ident}` borrows its value; arguments are decoded into owned values, so \
                     use an owned type such as `String` or `Vec<u8>`"
                ))
                .with_span(&field.ty),
            );
            return None;
        }
    };

    let raw_name = ident.to_string();
    let raw_name = raw_name.strip_prefix("r#").unwrap_or(&raw_name).to_owned();
    let wire = match (&serde.rename, container.rename_all) {
        (Some(rename), _) => rename.clone(),
        (None, Some(rule)) => rule.apply_to_field(&raw_name),
        (None, None) => raw_name,
    };
    let long = cli_long_name(&wire);
    let valid_long = |long: &str| {
        long.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && long
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    if !valid_long(&long) {
        errors.push(
            darling::Error::custom(format!(
                "argument `{ident}` has the wire name `{wire}`, which cannot be a command-line flag; \
                 use ASCII letters, digits, `_` and `-` in `#[serde(rename = \"...\")]`"
            ))
            .with_span(&ident),
        );
    }
    for alias in &serde.aliases {
        if !valid_long(&cli_long_name(alias)) {
            errors.push(
                darling::Error::custom(format!(
                    "argument `{ident}` has the alias `{alias}`, which cannot be a command-line flag; \
                     use ASCII letters, digits, `_` and `-`"
                ))
                .with_span(&ident),
            );
        }
    }

    let is_bool = matches!(shape.kind, KindSource::Known(ValueKind::Bool)) && !shape.repeatable;

    if field.positional.is_present() && is_bool && !shape.optional {
        errors.push(
            darling::Error::custom(format!(
                "`bool` argument `{ident}` cannot be positional: a bool is a flag (`--{long}`) that takes \
                 no value"
            ))
            .with_span(&field.positional.span()),
        );
    }
    if field.positional.is_present()
        && let Some(short) = &field.short
    {
        errors.push(
            darling::Error::custom(format!(
                "positional argument `{ident}` cannot have a `short` flag; remove `short` or `positional`"
            ))
            .with_span(&short.span),
        );
    }
    if field.stdin.is_present() {
        let text_or_bytes = matches!(&shape.kind, KindSource::Known(k) if k.is_text_or_bytes());
        if !text_or_bytes || shape.repeatable || ty::is_char(&field.ty) {
            errors.push(
                darling::Error::custom(format!(
                    "`#[ipc(stdin)]` field `{ident}` must hold text or bytes (`String`, `Vec<u8>`, or \
                     either in an `Option`) to receive piped standard input"
                ))
                .with_span(&field.ty),
            );
        }
    }
    let short = field.short.as_ref().and_then(|short| {
        let c = short.value;
        if !c.is_ascii_alphanumeric() {
            errors.push(
                darling::Error::custom(format!(
                    "short flag `{c}` must be an ASCII letter or digit, as in `short = 'n'`"
                ))
                .with_span(&short.span),
            );
            None
        } else if RESERVED_SHORTS.contains(&c) {
            errors.push(
                darling::Error::custom(format!(
                    "short flag `-{c}` is reserved for `--help`; pick another letter"
                ))
                .with_span(&short.span),
            );
            None
        } else {
            Some(c)
        }
    });

    // The field's own default first, then the struct's (as serde does), then
    // what the type implies.
    let (missing, mut default_text) = match (&field.default, &serde.default) {
        (Some(expr), Some((_, serde_span))) => {
            errors.push(
                darling::Error::custom(format!(
                    "argument `{ident}` has both `#[ipc(default = ...)]` and `#[serde(default)]`; keep one"
                ))
                .with_span(serde_span),
            );
            (Missing::DefaultExpr(expr.clone()), literal_text(expr))
        }
        (Some(expr), None) => (Missing::DefaultExpr(expr.clone()), literal_text(expr)),
        (None, Some((SerdeDefault::Trait, _))) => {
            (Missing::DefaultTrait, trait_default_text(&shape))
        }
        (None, Some((SerdeDefault::Path(path), _))) => (Missing::DefaultPath(path.clone()), None),
        (None, None) if container.default.is_some() => (Missing::Container, None),
        (None, None) if shape.optional => (Missing::None, None),
        (None, None) if is_bool => (Missing::DefaultTrait, Some("false".to_owned())),
        (None, None) if shape.repeatable => (Missing::DefaultTrait, None),
        (None, None) => (Missing::Required, None),
    };
    if let Some(text) = &field.default_text {
        if matches!(missing, Missing::Required) {
            errors.push(
                darling::Error::custom(format!(
                    "`default_text` describes a default, but argument `{ident}` has none; add \
                     `default = ...` or remove `default_text`"
                ))
                .with_span(&text.span),
            );
        }
        default_text = Some(text.value.clone());
    }
    if is_bool
        && !shape.optional
        && let Some(expr) = &field.default
        && literal_text(expr).as_deref() == Some("true")
    {
        errors.push(
            darling::Error::custom(format!(
                "flag `--{long}` would be on by default and could never be turned off; use an \
                 `Option<bool>` (given as `--{long}=false`) or invert it, as in `no_{ident}`"
            ))
            .with_span(expr),
        );
    }

    let positional = field.positional.is_present().then(|| {
        let index = *next_positional;
        *next_positional += 1;
        index
    });

    Some(FieldModel {
        ident,
        ty: field.ty,
        role: FieldRole::Arg(Box::new(ArgModel {
            wire,
            long,
            short,
            aliases: serde.aliases,
            missing,
            default_text,
            description,
            positional,
            stdin: field.stdin.is_present(),
            deserialize_with: serde.deserialize_with,
            shape,
        })),
    })
}

/// Checks across fields: one stdin, one method, positional order, and no two
/// arguments answering to the same flag.
fn check_fields(fields: &[FieldModel], errors: &mut Accumulator) {
    let mut stdin: Option<&Ident> = None;
    let mut method: Option<&Ident> = None;
    for field in fields {
        match &field.role {
            FieldRole::Arg(arg) if arg.stdin => {
                if let Some(first) = stdin {
                    errors.push(
                        darling::Error::custom(format!(
                            "only one field can take standard input, and `{first}` already does; \
                             remove `stdin` from `{}`",
                            field.ident
                        ))
                        .with_span(&field.ident),
                    );
                } else {
                    stdin = Some(&field.ident);
                }
            }
            FieldRole::Method => {
                if let Some(first) = method {
                    errors.push(
                        darling::Error::custom(format!(
                            "only one field can receive the method name, and `{first}` already does"
                        ))
                        .with_span(&field.ident),
                    );
                } else {
                    method = Some(&field.ident);
                }
            }
            _ => {}
        }
    }

    let positionals: Vec<(&FieldModel, &ArgModel)> = fields
        .iter()
        .filter_map(|f| match &f.role {
            FieldRole::Arg(arg) if arg.positional.is_some() => Some((f, &**arg)),
            _ => None,
        })
        .collect();
    for (i, (field, arg)) in positionals.iter().enumerate() {
        let is_last = i + 1 == positionals.len();
        if arg.shape.repeatable && !is_last {
            errors.push(
                darling::Error::custom(format!(
                    "list positional `{}` takes all remaining words, so it must be the last positional",
                    field.ident
                ))
                .with_span(&field.ident),
            );
        }
        // A list that is not last is reported above; it is optional by nature.
        if !arg.required()
            && !arg.shape.repeatable
            && let Some((later, _)) = positionals[i + 1..].iter().find(|(_, a)| a.required())
        {
            errors.push(
                darling::Error::custom(format!(
                    "required positional `{}` comes after optional positional `{}`, so a single word \
                     could fill either; make `{}` required or move it after `{}`",
                    later.ident, field.ident, field.ident, later.ident
                ))
                .with_span(&later.ident),
            );
        }
    }

    let mut longs: Vec<(String, &Ident)> = Vec::new();
    let mut shorts: Vec<(char, &Ident)> = Vec::new();
    for (field, arg) in fields.iter().filter_map(|f| match &f.role {
        FieldRole::Arg(arg) => Some((f, &**arg)),
        _ => None,
    }) {
        let mut names = vec![arg.long.clone()];
        names.extend(arg.aliases.iter().map(|a| cli_long_name(a)));
        for name in names {
            if RESERVED_LONGS.contains(&name.as_str()) {
                errors.push(
                    darling::Error::custom(format!(
                        "argument `{}` would be `--{name}`, which is reserved; rename it with \
                         `#[serde(rename = \"...\")]`",
                        field.ident
                    ))
                    .with_span(&field.ident),
                );
            } else if let Some((_, first)) = longs.iter().find(|(n, _)| *n == name) {
                if *first != &field.ident {
                    errors.push(
                        darling::Error::custom(format!(
                            "arguments `{first}` and `{}` both answer to `--{name}`; rename one with \
                             `#[serde(rename = \"...\")]`",
                            field.ident
                        ))
                        .with_span(&field.ident),
                    );
                }
            } else {
                longs.push((name, &field.ident));
            }
        }
        if let Some(short) = arg.short {
            if let Some((_, first)) = shorts.iter().find(|(c, _)| *c == short) {
                errors.push(
                    darling::Error::custom(format!(
                        "arguments `{first}` and `{}` both use the short flag `-{short}`; give one \
                         another letter",
                        field.ident
                    ))
                    .with_span(&field.ident),
                );
            } else {
                shorts.push((short, &field.ident));
            }
        }
    }
}

/// The text help shows for `#[ipc(default = expr)]`: a literal's value.
/// Any other expression's value is known only at run time, so it has no text
/// unless `default_text` gives one.
fn literal_text(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Lit(lit) => Some(lit_text(&lit.lit)),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            Expr::Lit(lit) => Some(format!("-{}", lit_text(&lit.lit))),
            _ => None,
        },
        Expr::Group(group) => literal_text(&group.expr),
        _ => None,
    }
}

fn lit_text(lit: &syn::Lit) -> String {
    match lit {
        syn::Lit::Str(s) => s.value(),
        syn::Lit::Char(c) => c.value().to_string(),
        syn::Lit::Bool(b) => b.value.to_string(),
        syn::Lit::Int(i) => i.base10_digits().to_owned(),
        syn::Lit::Float(f) => f.base10_digits().to_owned(),
        other => quote::quote!(#other).to_string(),
    }
}

/// What `Default::default()` is, as text, for types whose default is known.
fn trait_default_text(shape: &ArgShape) -> Option<String> {
    if shape.optional || shape.repeatable || shape.decode == Decode::Bytes {
        return None;
    }
    match &shape.kind {
        KindSource::Known(ValueKind::Int | ValueKind::UInt) => Some("0".to_owned()),
        KindSource::Known(ValueKind::Float) => Some("0".to_owned()),
        KindSource::Known(ValueKind::Bool) => Some("false".to_owned()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(src: &str) -> Result<CommandModel, Rejected> {
        let input: syn::DeriveInput = syn::parse_str(src).expect("test input parses as Rust");
        CommandModel::from_derive_input(&input)
    }

    #[test]
    fn odd_attributes_are_errors_never_panics() {
        let struct_attrs = [
            "#[ipc()]",
            "#[ipc(,,)]",
            "#[ipc(= x)]",
            "#[ipc(a b c)]",
            "#[ipc(crate)]",
            "#[ipc(crate = )]",
            "#[ipc(response = )]",
            "#[ipc(response = Vec<)]",
            "#[ipc(response = fn() -> u8, name = \"x\")]",
            "#[ipc(r#type = 1)]",
            "#[ipc(name = 5)]",
            "#[ipc(name = \"\")]",
            "#[ipc(bound = \"T:\")]",
            "#[ipc(handler = 1 + 2)]",
            "#[ipc = \"x\"]",
            "#[ipc(response = u8)] #[ipc(response = u8)]",
        ];
        let field_attrs = [
            "#[ipc(short = '')]",
            "#[ipc(short = 'ab')]",
            "#[ipc(short = \"\")]",
            "#[ipc(default = )]",
            "#[ipc(default = {)]",
            "#[ipc(positional, positional)]",
            "#[ipc(stdin = 1)]",
            "#[serde(rename)]",
            "#[serde(rename = 1)]",
            "#[serde(rename(serialize = \"a\"))]",
            "#[serde(default = 1)]",
            "#[serde(with = \"\")]",
            "#[serde(alias)]",
        ];
        // Inputs the compiler's lexer would refuse never reach the macro.
        let mut tried = 0;
        let sources = struct_attrs
            .iter()
            .map(|attr| format!("{attr} struct S {{ a: String }}"))
            .chain(
                field_attrs
                    .iter()
                    .map(|attr| format!("#[ipc(response = u8)] struct S {{ {attr} a: String }}")),
            );
        for src in sources {
            if let Ok(input) = syn::parse_str::<syn::DeriveInput>(&src) {
                tried += 1;
                let _ = CommandModel::from_derive_input(&input);
            }
        }
        assert!(tried >= 24, "only {tried} inputs parsed");
    }

    #[test]
    fn every_error_of_a_struct_is_reported_together() {
        let err = model(
            r#"
            #[ipc(nmae = "x")]
            struct S {
                #[ipc(short = '-')] a: u8,
                #[ipc(stdin)] b: u8,
                #[ipc(positional)] c: Option<u8>,
                #[ipc(positional)] d: u8,
            }
            "#,
        )
        .unwrap_err();
        // Unknown key, missing response, bad short, stdin type, positional order.
        assert_eq!(err.error.len(), 5, "{}", err.error);
        assert!(
            err.partial.is_some(),
            "the model is kept for the placeholder impl"
        );
    }

    #[test]
    fn a_struct_default_takes_precedence_over_type_defaults() {
        let model = model(
            "#[serde(default)] #[ipc(response = u8)] struct S { flag: bool, list: Vec<u8>, maybe: Option<u8>, n: u8 }",
        )
        .unwrap();
        for (_, arg) in model.args() {
            assert!(matches!(arg.missing, Missing::Container), "{}", arg.wire);
            assert_eq!(arg.default_text, None);
        }
    }
}
