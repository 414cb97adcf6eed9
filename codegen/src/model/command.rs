//! The model of `#[derive(IpcCommand)]`: a command struct resolved into
//! everything the macro expands and the scanner publishes, from the
//! attributes `attr` read: each argument's wire name, flags, place among the
//! positionals, and what happens when a request leaves it out. Resolving
//! reports nothing; `valid` checks the same attributes against the result.

use syn::{Expr, ExprPath, Ident, Type};

use super::attr::{CommandOpts, FieldOpts, literal_text};
use super::ctxt::crate_or_default;
use super::docs::docs;
use super::param::ParamSpec;
use super::serde_attr::{SerdeContainer, SerdeDefault};
use super::ty::{self, ArgShape, Decode, KindSource};
use crate::case::{cli_long_name, snake_case};
use crate::schema::{Annotations, HELP_SHORT, ToolSchema, ValueKind};

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
    /// `#[ipc(timeout = "...")]`, in milliseconds, when it reads as a
    /// duration (the check reports it when it does not).
    pub timeout_ms: Option<u64>,
    /// `#[ipc(read_only)]`, `#[ipc(destructive)]`, `#[ipc(idempotent)]` and
    /// `#[ipc(open_world)]`: the behaviour hints, as written.
    pub annotations: Annotations,
    /// `#[ipc(output_schema)]`: the response type's JSON Schema is the
    /// tool's output schema.
    pub output_schema: bool,
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
    /// Receives the call's `CallContext`.
    Context,
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
    /// `#[ipc(secret)]`: the value is a secret.
    pub secret: bool,
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

    /// The parameter, for its schema as a value or as tokens.
    pub fn param(&self) -> ParamSpec<'_> {
        ParamSpec {
            name: &self.wire,
            long: &self.long,
            short: self.short,
            aliases: &self.aliases,
            repeatable: self.shape.repeatable,
            required: self.required(),
            optional: self.shape.optional,
            description: &self.description,
            positional: self.positional,
            stdin: self.stdin,
            consumes: None,
            hidden: false,
            secret: self.secret,
        }
    }
}

impl CommandModel {
    /// The argument fields, in declaration order.
    pub fn args(&self) -> impl Iterator<Item = (&FieldModel, &ArgModel)> {
        self.fields.iter().filter_map(|f| match &f.role {
            FieldRole::Arg(arg) => Some((f, &**arg)),
            _ => None,
        })
    }

    /// The field named `ident`, when it is in the model (a field whose type
    /// cannot be an argument is not).
    pub(super) fn field(&self, ident: &Ident) -> Option<&FieldModel> {
        self.fields.iter().find(|f| f.ident == *ident)
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
            params.push(arg.param().schema(kind, arg.default_text.as_deref()));
        }
        let mut schema = ToolSchema::new(self.name.clone())
            .with_description(self.description.clone())
            .with_long_description(self.long_description.clone())
            .with_annotations(self.annotations);
        schema.params = params.into();
        Ok(schema)
    }

    /// The model the attributes describe, as far as they can be followed;
    /// where they cannot, the choice a check reports on.
    pub(super) fn resolve(opts: &CommandOpts) -> CommandModel {
        let (description, long_description) = docs(&opts.attrs);
        let mut next_positional: u16 = 0;
        let fields = opts
            .fields
            .iter()
            .filter_map(|field| resolve_field(field, &opts.serde, &mut next_positional))
            .collect();
        CommandModel {
            ident: opts.ident.clone(),
            generics: opts.generics.clone(),
            krate: crate_or_default(opts.krate.as_ref()),
            response: opts
                .response
                .clone()
                .unwrap_or_else(|| syn::parse_quote!(())),
            handler: opts
                .handler
                .clone()
                .unwrap_or_else(|| Ident::new("handle", opts.ident.span())),
            name: command_name(opts),
            description,
            long_description,
            fields,
            container_default: opts.serde.default.clone(),
            bound: opts.bound.clone(),
            serde_reports_error: opts.serde.serde_reports_error,
            timeout_ms: opts
                .timeout
                .as_ref()
                .and_then(|text| parse_duration_ms(&text.value).ok()),
            annotations: Annotations::__from_static(
                opts.hints.read_only.is_present(),
                opts.hints.destructive.is_present(),
                opts.hints.idempotent.is_present(),
                opts.hints.open_world.is_present(),
            ),
            output_schema: opts.output_schema.is_present(),
        }
    }

    /// The field that receives the call's context.
    pub fn context_field(&self) -> Option<&Ident> {
        self.fields
            .iter()
            .find(|f| matches!(f.role, FieldRole::Context))
            .map(|f| &f.ident)
    }
}

/// A duration as `#[ipc(timeout = "...")]` takes it: a whole number and a
/// unit, `ms`, `s`, `m` or `h` (`"300ms"`, `"30s"`, `"5m"`), more than zero
/// and at most a year; in milliseconds, or what is wrong with it.
pub fn parse_duration_ms(text: &str) -> Result<u64, String> {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &text[digits.len()..];
    let per_unit: u64 = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "" => return Err("it has no unit".to_owned()),
        other => return Err(format!("`{other}` is not a unit")),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{digits}` is not a whole number"));
    }
    let number: u64 = digits.parse().map_err(|_| "it is over a year".to_owned())?;
    match number.checked_mul(per_unit) {
        Some(0) => Err("it must be more than zero".to_owned()),
        Some(ms) if ms <= 365 * 24 * 3_600_000 => Ok(ms),
        _ => Err("it is over a year".to_owned()),
    }
}

/// The name given with `#[ipc(name = "...")]`, or the type's in snake_case.
pub(super) fn command_name(opts: &CommandOpts) -> String {
    match &opts.name {
        Some(name) => name.value.clone(),
        None => {
            let ident = opts.ident.to_string();
            snake_case(ident.strip_prefix("r#").unwrap_or(&ident))
        }
    }
}

/// Whether `c` can be a short flag: an ASCII letter or digit that `--help`
/// does not own.
pub(super) fn usable_short(c: char) -> bool {
    c.is_ascii_alphanumeric() && c != HELP_SHORT
}

/// The key on the wire: serde's `rename`, else the struct's `rename_all`
/// applied to the field's name.
pub(super) fn wire_name(ident: &Ident, field: &FieldOpts, container: &SerdeContainer) -> String {
    let raw = ident.to_string();
    let raw = raw.strip_prefix("r#").unwrap_or(&raw).to_owned();
    match (&field.serde.rename, container.rename_all) {
        (Some(rename), _) => rename.clone(),
        (None, Some(rule)) => rule.apply_to_field(&raw),
        (None, None) => raw,
    }
}

fn resolve_field(
    field: &FieldOpts,
    container: &SerdeContainer,
    next_positional: &mut u16,
) -> Option<FieldModel> {
    let ident = field.ident.clone()?;
    let not_an_arg = if field.state.is_present() {
        Some(FieldRole::State)
    } else if field.method.is_present() {
        Some(FieldRole::Method)
    } else if field.context.is_present() {
        Some(FieldRole::Context)
    } else if field.serde.skip_deserializing.is_some() {
        Some(FieldRole::State)
    } else {
        None
    };
    if let Some(role) = not_an_arg {
        return Some(FieldModel {
            ident,
            ty: field.ty.clone(),
            role,
        });
    }
    // A type that cannot be an argument leaves the field out.
    let shape = ty::classify(&field.ty).ok()?;
    let wire = wire_name(&ident, field, container);
    let (missing, default_text) = missing(field, container, &shape);
    let positional = field.positional.is_present().then(|| {
        let index = *next_positional;
        *next_positional += 1;
        index
    });
    let (description, _) = docs(&field.attrs);
    Some(FieldModel {
        role: FieldRole::Arg(Box::new(ArgModel {
            long: cli_long_name(&wire),
            wire,
            short: field
                .short
                .as_ref()
                .map(|s| s.value)
                .filter(|&c| usable_short(c)),
            aliases: field.serde.aliases.clone(),
            missing,
            default_text,
            description,
            positional,
            stdin: field.stdin.is_present(),
            secret: field.secret.is_present(),
            deserialize_with: field.serde.deserialize_with.clone(),
            shape,
        })),
        ident,
        ty: field.ty.clone(),
    })
}

/// What happens when a request leaves the argument out, and the default as
/// help shows it: the field's own default first, then the struct's (as serde
/// does), then what the type implies; `default_text` overrides the text.
fn missing(
    field: &FieldOpts,
    container: &SerdeContainer,
    shape: &ArgShape,
) -> (Missing, Option<String>) {
    let (missing, default_text) = match (&field.default, &field.serde.default) {
        // Both: a check reports it; the field's own wins.
        (Some(expr), _) => (Missing::DefaultExpr(expr.clone()), literal_text(expr)),
        (None, Some((SerdeDefault::Trait, _))) => {
            (Missing::DefaultTrait, trait_default_text(shape))
        }
        (None, Some((SerdeDefault::Path(path), _))) => (Missing::DefaultPath(path.clone()), None),
        (None, None) if container.default.is_some() => (Missing::Container, None),
        (None, None) if shape.optional => (Missing::None, None),
        (None, None) if ty::is_bool(&field.ty) => (Missing::DefaultTrait, Some("false".to_owned())),
        (None, None) if shape.repeatable => (Missing::DefaultTrait, None),
        (None, None) => (Missing::Required, None),
    };
    let default_text = match &field.default_text {
        Some(text) => Some(text.value.clone()),
        None => default_text,
    };
    (missing, default_text)
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
    use crate::model::Rejected;

    fn model(src: &str) -> Result<CommandModel, Rejected<CommandModel>> {
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

    #[test]
    fn hints_reach_the_schema_and_contradictions_are_refused() {
        let hinted = model(
            "#[ipc(response = u8, read_only, idempotent)] #[ipc(open_world)] struct S { a: u8 }",
        )
        .unwrap();
        let schema = hinted.schema(|_| None).unwrap();
        assert_eq!(
            schema.annotations,
            Annotations::default().read_only().idempotent().open_world()
        );
        let plain = model("#[ipc(response = u8)] struct S { a: u8 }").unwrap();
        assert!(plain.annotations.is_empty());

        for attrs in ["read_only, destructive", "destructive, read_only"] {
            let err = model(&format!(
                "#[ipc(response = u8, {attrs})] struct S {{ a: u8 }}"
            ))
            .unwrap_err();
            assert_eq!(err.error.len(), 1, "{}", err.error);
            assert!(
                err.error
                    .to_string()
                    .contains("cannot be both `read_only` and `destructive`"),
                "{}",
                err.error
            );
        }
        let twice = model("#[ipc(response = u8, open_world, open_world)] struct S {}").unwrap_err();
        assert_eq!(
            twice.error.to_string(),
            "`open_world` is given twice; keep one"
        );
        let valued = model("#[ipc(response = u8, idempotent = true)] struct S {}").unwrap_err();
        assert_eq!(
            valued.error.to_string(),
            "`idempotent` takes no value: write `#[ipc(idempotent)]`"
        );
    }

    #[test]
    fn secret_marks_arguments_and_only_arguments() {
        let secrets = model(
            r#"
            #[ipc(response = u8)]
            struct S {
                #[ipc(secret, positional)] token: String,
                #[ipc(secret, stdin)] key: Option<String>,
                #[ipc(secret)] insecure: bool,
                plain: u8,
            }
            "#,
        )
        .unwrap();
        let schema = secrets.schema(|_| None).unwrap();
        let secret: Vec<bool> = schema.params.iter().map(|p| p.secret).collect();
        assert_eq!(secret, [true, true, true, false]);

        for key in ["state", "method", "context"] {
            let err = model(&format!(
                "#[ipc(response = u8)] struct S {{ #[ipc(secret, {key})] #[serde(skip)] f: String }}"
            ))
            .unwrap_err();
            let message = err.error.to_string();
            assert!(
                message.contains(&format!(
                    "`secret` marks an argument, and `#[ipc({key})]` field `f` is not one: \
                     remove `secret`"
                )),
                "{message}"
            );
        }
    }
}
