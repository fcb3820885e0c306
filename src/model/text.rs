//! Making record text safe to show: nothing from a record reaches a terminal raw.

use std::borrow::Cow;

/// True for characters that must never reach a terminal raw: C0/C1 controls, DEL and
/// bidi embedding/override/isolate marks.
pub fn is_terminal_control(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// The text with every terminal control shown visibly escaped (`\u{1b}` → `\e`,
/// others as `\u{XXXX}`, tab/newline as `\t`/`\n`); borrowed when nothing needs escaping.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_terminal_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\u{1b}' => out.push_str("\\e"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if is_terminal_control(c) => out.push_str(&format!("\\u{{{:04X}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_bidi() {
        assert_eq!(sanitize("plain"), "plain");
        assert_eq!(sanitize("a\u{1b}]52;c;x\u{7}b"), "a\\e]52;c;x\\u{0007}b");
        assert_eq!(sanitize("x\u{202e}y\u{9b}"), "x\\u{202E}y\\u{009B}");
        assert!(!sanitize("\u{1b}[2J\u{0}").chars().any(is_terminal_control));
    }
}
