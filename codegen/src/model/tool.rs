//! The model of `#[tool]`: a struct written in clap's own vocabulary,
//! resolved from what `clap_attr` read into the facts the schema needs, the
//! way clap's derive resolves them (flag names, positionals, defaults, what
//! is required). Resolving reports nothing; `valid` checks the same
//! attributes against the result.

use syn::{Expr, Ident, Type};

use super::clap_attr::{ArgAttrs, ArgRename, ToolDefault, ToolOpts, string_literals, value_count};
use super::ctxt::crate_or_default;
use super::docs::docs;
use super::param::ParamSpec;
use super::ty::{self, ArgShape, Decode, KindSource};
use crate::case::{cli_long_name, kebab_case};
use crate::schema::{ValueCount, ValueKind};

/// A `#[tool]` struct, checked.
#[derive(Debug)]
pub struct ToolModel {
    /// The struct's name.
    pub ident: Ident,
    /// The tool's name.
    pub name: String,
    /// Whether every word goes to the tool's own parser untouched.
    pub verbatim: bool,
    /// The path of the `gangway` crate in generated code.
    pub krate: syn::Path,
    /// One paragraph saying what the tool does.
    pub description: String,
    /// The rest of the docs.
    pub long_description: String,
    /// Whether the struct sets clap's `#[command(name = ...)]` itself.
    pub has_command_name: bool,
    /// The fields clap parses or gangway fills, in order.
    pub fields: Vec<ToolField>,
}

/// One argument field of a tool.
#[derive(Debug)]
pub struct ToolField {
    /// The field's name.
    pub ident: Ident,
    /// The field's type.
    pub ty: Type,
    /// What the type means.
    pub shape: ArgShape,
    /// The parameter's name: the long flag for an option, the field's name
    /// for a positional.
    pub name: String,
    /// The long flag, without `--`.
    pub long: String,
    /// The short flag.
    pub short: Option<char>,
    /// Other long names.
    pub aliases: Vec<String>,
    /// Position among the positionals.
    pub positional: Option<u16>,
    /// Whether clap requires it.
    pub required: bool,
    /// The default, as clap has it.
    pub default: ToolDefault,
    /// The help text.
    pub description: String,
    /// `ArgAction::Count`.
    pub count: bool,
    /// `num_args`.
    pub consumes: Option<ValueCount>,
    /// `hide`: left out of help and JSON Schema.
    pub hidden: bool,
    /// The values of `value_parser = ["a", "b"]`.
    pub enum_values: Option<Vec<String>>,
    /// Whether the field names its own `value_parser`.
    pub has_value_parser: bool,
    /// A raw-bytes field: clap skips it; `bind` reads it from the arguments.
    pub bytes: bool,
}

impl ToolModel {
    /// The model the attributes describe, as far as they can be followed;
    /// where they cannot, the choice a check reports on.
    pub(super) fn resolve(opts: &ToolOpts<'_>) -> ToolModel {
        let item = opts.item;
        let mut next_positional = 0u16;
        let fields = opts
            .fields
            .iter()
            .filter_map(|(field, attrs)| {
                resolve_field(field, attrs, opts.rename_all, &mut next_positional)
            })
            .collect();
        ToolModel {
            ident: item.ident.clone(),
            name: tool_name(opts),
            verbatim: opts.verbatim,
            krate: crate_or_default(opts.krate.as_ref()),
            description: opts.description.clone(),
            long_description: opts.long_description.clone(),
            has_command_name: opts.has_command_name,
            fields,
        }
    }

    /// The field named `ident`, when it is in the model.
    pub(super) fn field(&self, ident: &Ident) -> Option<&ToolField> {
        self.fields.iter().find(|f| f.ident == *ident)
    }
}

/// The name given with `#[tool(name = "...")]`, or the type's in kebab-case.
fn tool_name(opts: &ToolOpts<'_>) -> String {
    match &opts.name {
        Some(name) => name.value.clone(),
        None => {
            let ident = opts.item.ident.to_string();
            kebab_case(ident.strip_prefix("r#").unwrap_or(&ident))
        }
    }
}

fn resolve_field(
    field: &syn::Field,
    attrs: &ArgAttrs,
    rename_all: Option<ArgRename>,
    next_positional: &mut u16,
) -> Option<ToolField> {
    let ident = field.ident.clone()?;
    if attrs.flatten.is_some() || attrs.skip {
        return None;
    }
    // A type that cannot be an argument leaves the field out.
    let shape = ty::classify(&field.ty).ok()?;
    let (description, _) = docs(&field.attrs);
    let description = attrs.help.clone().unwrap_or(description);
    let raw = ident.to_string();
    let raw = raw.strip_prefix("r#").unwrap_or(&raw).to_owned();
    let is_option = attrs.short.is_some() || attrs.long.is_some();
    let long = match &attrs.long {
        Some(Some(long)) => long.clone(),
        _ => match rename_all {
            Some(rule) => rule.apply(&raw),
            None => cli_long_name(&raw),
        },
    };
    let short = match attrs.short {
        Some(Some(c)) => Some(c),
        Some(None) => raw.chars().next(),
        None => None,
    };
    let action = attrs.action.as_ref().map(|(name, _)| name.as_str());
    let count = action == Some("Count");
    // clap binds `bool` as a flag unless the action says to take a value,
    // and `Option<bool>` as an option that takes `true` or `false`.
    let is_bool = ty::is_bool(&field.ty);
    let flag_kind = is_bool && !shape.optional && action != Some("Set");
    let bool_takes_value = is_bool && !flag_kind;
    let positional = (!is_option).then(|| {
        let index = *next_positional;
        *next_positional += 1;
        index
    });
    let consumes = match &attrs.num_args {
        // An expression not read as a count is reported by a check.
        Some(expr) => value_count(expr),
        None if bool_takes_value => Some(ValueCount {
            min: 1,
            max: Some(1),
        }),
        None => None,
    };
    let enum_values = attrs.value_parser.as_ref().and_then(|expr| {
        let values = string_literals(expr);
        (!values.is_empty() && matches!(expr, Expr::Array(_) | Expr::Reference(_)))
            .then_some(values)
    });
    let default = match attrs.default.clone() {
        Some(default) => default,
        None if flag_kind && !count => ToolDefault::Text("false".to_owned()),
        None => ToolDefault::None,
    };
    // clap's rules: `Option`, lists, flags and counts are optional, as is
    // anything with a default or an environment variable to fall back on;
    // `required = ...` decides over them.
    let optional_by_type = shape.optional || shape.repeatable || flag_kind || count;
    let has_default = !matches!(default, ToolDefault::None);
    let required = attrs
        .required
        .unwrap_or(!optional_by_type && !has_default && !attrs.env);
    Some(ToolField {
        name: if positional.is_some() {
            raw.clone()
        } else {
            long.clone()
        },
        ident,
        ty: field.ty.clone(),
        long,
        short,
        aliases: attrs.aliases.clone(),
        positional,
        required,
        default,
        description,
        count,
        consumes,
        bytes: shape.decode == Decode::Bytes,
        hidden: attrs.hide,
        enum_values,
        has_value_parser: attrs.value_parser.is_some(),
        shape,
    })
}

impl ToolField {
    /// The kind of one value, when the syntax tells it.
    pub fn known_kind(&self) -> Option<ValueKind> {
        if self.count {
            return Some(ValueKind::Count);
        }
        if let Some(values) = &self.enum_values {
            return Some(ValueKind::enum_of(values.iter().cloned()));
        }
        match &self.shape.kind {
            KindSource::Known(kind) => Some(kind.clone()),
            KindSource::Named(_) => None,
        }
    }

    /// Whether one occurrence takes several words (`num_args` above one).
    pub fn takes_several(&self) -> bool {
        self.consumes.is_some_and(|c| c.max != Some(1))
    }

    /// Whether the value is free-form JSON (`serde_json::Value`).
    pub fn is_json(&self) -> bool {
        matches!(self.shape.kind, KindSource::Known(ValueKind::Json))
    }

    /// The element type whose kind is looked up at run time.
    pub fn element_type(&self) -> Option<&Type> {
        match &self.shape.kind {
            KindSource::Named(ty) if !self.count => Some(ty),
            _ => None,
        }
    }

    /// The parameter, for its schema as tokens.
    pub fn param(&self) -> ParamSpec<'_> {
        ParamSpec {
            name: &self.name,
            long: &self.long,
            short: self.short,
            aliases: &self.aliases,
            repeatable: self.shape.repeatable && !self.count,
            required: self.required,
            optional: self.shape.optional,
            description: &self.description,
            positional: self.positional,
            stdin: false,
            consumes: self.consumes,
            hidden: self.hidden,
            secret: false,
        }
    }
}
