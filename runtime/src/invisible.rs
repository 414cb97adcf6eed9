//! Characters that change how the text around them is shown without
//! showing themselves: what every place that puts text from elsewhere in
//! front of a person (the client's messages, a policy's question) keeps
//! out, or writes as an escape.

/// Whether `c` is invisible yet changes what is shown: a format character
/// (Unicode's category Cf: direction marks, overrides and isolates,
/// zero-width spaces and joiners, tag characters), a line or paragraph
/// separator, a filler that renders as nothing, or a variation selector.
/// Control characters are not in it: callers keep the ones they allow.
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{0600}'..='\u{0605}'
            | '\u{061C}'
            | '\u{06DD}'
            | '\u{070F}'
            | '\u{0890}'..='\u{0891}'
            | '\u{08E2}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            // Zero-width space, joiners, direction marks.
            | '\u{200B}'..='\u{200F}'
            // Line and paragraph separators, bidirectional embeddings and
            // overrides.
            | '\u{2028}'..='\u{202E}'
            // Word joiner, invisible operators, bidirectional isolates,
            // deprecated format characters.
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFFB}'
            | '\u{110BD}'
            | '\u{110CD}'
            | '\u{13430}'..='\u{1343F}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            // Tag characters, which can carry hidden text, and the
            // variation selectors past them.
            | '\u{E0000}'..='\u{E0FFF}'
    )
}
