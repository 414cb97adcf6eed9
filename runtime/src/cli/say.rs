//! What the client says on standard error, and the help it prints: text
//! from the host (a handler's error, a usage message, a suggestion) or the
//! caller's own words, shown to a person's terminal, so stripped of every
//! control character but the newline and the tab. An escape sequence in a
//! handler's error would otherwise retitle the terminal (`ESC ] 0 ;`),
//! clear it (`ESC [ 2 J`) or worse. A command's own output (its response,
//! what it streams) is data, and is written byte for byte elsewhere.

use std::borrow::Cow;
use std::io::Write;

/// `text` without its control characters (C0, DEL and C1) other than
/// `\n` and `\t`.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if text.chars().any(unsafe_char) {
        Cow::Owned(text.chars().filter(|c| !unsafe_char(*c)).collect())
    } else {
        Cow::Borrowed(text)
    }
}

/// Writes `message`, shown safely, and a newline to standard error.
pub(crate) fn say(message: impl AsRef<str>) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{}", shown(message.as_ref()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_go_and_newlines_and_tabs_stay() {
        let hostile = "\u{1b}]0;pwned\u{7}\u{1b}[2Jline\tone\nline two\u{7f}\u{9b}31m";
        assert_eq!(shown(hostile), "]0;pwned[2Jline\tone\nline two31m");
        assert!(matches!(shown("plain text"), Cow::Borrowed(_)));
    }
}
