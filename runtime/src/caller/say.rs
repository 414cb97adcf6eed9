//! What the client says on standard error, and the help it prints: text
//! from the host (a handler's error, a usage message, a suggestion) or the
//! caller's own words, shown to a person's terminal, so stripped of every
//! control character but the newline and the tab. An escape sequence in a
//! handler's error would otherwise retitle the terminal (`ESC ] 0 ;`),
//! clear it (`ESC [ 2 J`) or worse. A command's own output (its response,
//! what it streams) is data, and is written byte for byte elsewhere.

use std::borrow::Cow;
use std::io::Write;

use crate::invisible::is_invisible;
use crate::ipc::ClientError;

/// `text` without its control characters (C0, DEL and C1) other than
/// `\n` and `\t`, and without the invisible characters that reorder or
/// hide text (bidirectional overrides and isolates, zero-width spaces and
/// joiners): a message shows what it says.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
    if text.chars().any(hidden) {
        Cow::Owned(text.chars().filter(|c| !hidden(*c)).collect())
    } else {
        Cow::Borrowed(text)
    }
}

/// Whether `c` is left out of a message shown to a terminal: a control
/// character (but `\n` and `\t`), or one that is invisible yet changes
/// what is shown.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_invisible(c)
}

/// Writes `message` and a newline to standard error, without the control
/// and invisible characters a terminal would act on (as every message the
/// client prints is shown): for text that may come from the host.
pub fn say(message: impl AsRef<str>) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{}", shown(message.as_ref()));
}

/// Says why a call failed, giving the exit code: the host's message (with
/// a hint to `--help` for a usage error), or the client's own error.
pub(crate) fn report_error(command: &str, error: &ClientError) -> i32 {
    match error.remote() {
        Some(remote) => {
            say(&remote.message);
            if matches!(remote.kind.as_str(), "usage" | "invalid_params") {
                say(format!("try `{command} --help` for the arguments it takes"));
            }
            remote.exit
        }
        None => {
            say(format!("{command}: {error}"));
            error.exit_code()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_go_and_newlines_and_tabs_stay() {
        let hostile = "\u{1b}]0;pwned\u{7}\u{1b}[2Jline\tone\nline two\u{7f}\u{9b}31m";
        assert_eq!(shown(hostile), "]0;pwned[2Jline\tone\nline two31m");
        assert!(matches!(shown("plain text"), Cow::Borrowed(_)));
        // Text that reads backwards, or hides a word, shows as it is.
        let reordered = "fine\u{202E}txt.exe\u{2066}x\u{2069}\u{200B}y\u{FEFF}";
        assert_eq!(shown(reordered), "finetxt.exexy");
        let tagged = "ok\u{E0001}\u{E0069}\u{E0067}\u{AD}\u{2028}\u{206A}!";
        assert_eq!(shown(tagged), "ok!");
        assert_eq!(shown("naïve café 日本"), "naïve café 日本");
    }
}
