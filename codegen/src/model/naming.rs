//! serde's `rename_all` rules, applied exactly as serde applies them, so the
//! wire name the schema publishes is the name serde serializes. (How a type
//! name becomes a command name, and a wire name a flag, is gangway's own
//! rule, in `crate::case`.)

/// One of serde's `rename_all` rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenameRule {
    /// `lowercase`
    Lower,
    /// `UPPERCASE`
    Upper,
    /// `PascalCase`
    Pascal,
    /// `camelCase`
    Camel,
    /// `snake_case`
    Snake,
    /// `SCREAMING_SNAKE_CASE`
    ScreamingSnake,
    /// `kebab-case`
    Kebab,
    /// `SCREAMING-KEBAB-CASE`
    ScreamingKebab,
}

/// Every rule with the spelling serde accepts.
pub const RULES: &[(&str, RenameRule)] = &[
    ("lowercase", RenameRule::Lower),
    ("UPPERCASE", RenameRule::Upper),
    ("PascalCase", RenameRule::Pascal),
    ("camelCase", RenameRule::Camel),
    ("snake_case", RenameRule::Snake),
    ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnake),
    ("kebab-case", RenameRule::Kebab),
    ("SCREAMING-KEBAB-CASE", RenameRule::ScreamingKebab),
];

impl RenameRule {
    /// The rule serde spells `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        RULES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, rule)| *rule)
    }

    /// Applies the rule to a struct field name (written in snake_case).
    pub fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut out = String::with_capacity(field.len());
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        out.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        out.push(ch);
                    }
                }
                out
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply_to_field(field);
                lowercase_first(&pascal)
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// Applies the rule to an enum variant name (written in PascalCase).
    pub fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => lowercase_first(variant),
            RenameRule::Snake => {
                let mut out = String::with_capacity(variant.len() + 4);
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        out.push('_');
                    }
                    out.push(ch.to_ascii_lowercase());
                }
                out
            }
            RenameRule::ScreamingSnake => RenameRule::Snake
                .apply_to_variant(variant)
                .to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake
                .apply_to_variant(variant)
                .replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }
}

fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_follow_serde() {
        let f = "max_results";
        let expect = [
            ("lowercase", "max_results"),
            ("UPPERCASE", "MAX_RESULTS"),
            ("PascalCase", "MaxResults"),
            ("camelCase", "maxResults"),
            ("snake_case", "max_results"),
            ("SCREAMING_SNAKE_CASE", "MAX_RESULTS"),
            ("kebab-case", "max-results"),
            ("SCREAMING-KEBAB-CASE", "MAX-RESULTS"),
        ];
        for (rule, want) in expect {
            assert_eq!(
                RenameRule::from_name(rule).unwrap().apply_to_field(f),
                want,
                "{rule}"
            );
        }
    }

    #[test]
    fn variants_follow_serde() {
        let v = "VeryFast";
        let expect = [
            ("lowercase", "veryfast"),
            ("UPPERCASE", "VERYFAST"),
            ("PascalCase", "VeryFast"),
            ("camelCase", "veryFast"),
            ("snake_case", "very_fast"),
            ("SCREAMING_SNAKE_CASE", "VERY_FAST"),
            ("kebab-case", "very-fast"),
            ("SCREAMING-KEBAB-CASE", "VERY-FAST"),
        ];
        for (rule, want) in expect {
            assert_eq!(
                RenameRule::from_name(rule).unwrap().apply_to_variant(v),
                want,
                "{rule}"
            );
        }
    }
}
