//! Making record text safe to show: nothing from a record reaches a terminal raw.

use std::borrow::Cow;
use std::fmt::Write as _;

/// True for characters that must never reach a terminal raw: C0/C1 controls, DEL,
/// bidi embedding/override/isolate marks, and the invisible ones that move or hide text
/// (U+2028/U+2029 separators, zero-width space and joiners, BOM, soft hyphen, word
/// joiner and invisible operators, tag characters U+E0000–U+E007F).
pub fn is_terminal_control(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{ad}'
        | '\u{061c}'
        | '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}'
        | '\u{e0000}'..='\u{e007f}')
}

/// True for the noncharacters (U+FDD0–U+FDEF and the last two code points of every plane,
/// U+FFFE/U+FFFF among them): XML 1.0 cannot hold U+FFFE/U+FFFF, and none is text.
pub fn is_noncharacter(c: char) -> bool {
    matches!(c, '\u{fdd0}'..='\u{fdef}') || (c as u32) & 0xfffe == 0xfffe
}

/// The text with every terminal control and noncharacter shown visibly escaped (`\u{1b}` →
/// `\e`, others as `\u{XXXX}`, tab/newline as `\t`/`\n`); borrowed when nothing needs
/// escaping. What every output shows of record text: a terminal, XML, SVG and HTML all
/// receive it safely.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| is_terminal_control(c) || is_noncharacter(c);
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\u{1b}' => out.push_str("\\e"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if unsafe_char(c) => {
                let _ = write!(out, "\\u{{{:04X}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A count with thousands separators: `1,234,567`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` and the noun, plural unless `n` is 1: `1 input`, `3 inputs`, `0 load errors`.
pub fn counted(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// The last component of a path, escaped for a terminal (`incident.ndjson`), or the
/// whole path when it has none.
pub fn file_name(path: &str) -> String {
    let name = std::path::Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned());
    sanitize(&name).into_owned()
}

/// One argument of a command line a reader can paste into a POSIX shell: as it is when
/// it is plain, else single-quoted — escaped like any record text either way.
pub fn shell_word(arg: &str) -> String {
    let a = sanitize(arg);
    if !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@+,".contains(c))
    {
        a.into_owned()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

/// `line` in lines of at most `width` terminal cells (a wide character such as `⌛` is two),
/// broken only at its spaces — its own spacing kept, so columns stay aligned — with every
/// line after the first indented by `indent` (a hanging indent). A word longer than a whole
/// line is the only thing ever split, and nothing is cut.
pub fn wrap_line(line: &str, width: usize, indent: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthStr;
    let width = width.max(indent + 8);
    if line.width() <= width {
        return vec![line.to_string()];
    }
    let pad = " ".repeat(indent);
    let mut lines: Vec<String> = Vec::new();
    let (mut out, mut cells, mut fresh) = (String::new(), 0, false);
    let mut rest = line;
    while !rest.is_empty() {
        // The spaces before the next word, and the word.
        let gap_len = rest.len() - rest.trim_start_matches(' ').len();
        let (gap, after) = rest.split_at(gap_len);
        let word_len = after.find(' ').unwrap_or(after.len());
        let (word, next) = after.split_at(word_len);
        rest = next;
        let gap = if fresh { "" } else { gap };
        if cells + gap.width() + word.width() <= width {
            out.push_str(gap);
            out.push_str(word);
            cells += gap.width() + word.width();
            fresh = false;
            continue;
        }
        let mut word = word;
        if !fresh && (cells > 0 || !lines.is_empty()) {
            lines.push(std::mem::replace(&mut out, pad.clone()));
            cells = indent;
        }
        // Alone, the word is longer than a line: its parts fill whole lines.
        while cells + word.width() > width {
            let mut room = width - cells;
            let cut = (word.char_indices())
                .find(|&(_, c)| {
                    let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                    let over = w > room;
                    room = room.saturating_sub(w);
                    over
                })
                .map_or(word.len(), |(i, _)| {
                    i.max(word.chars().next().map_or(1, char::len_utf8))
                });
            out.push_str(&word[..cut]);
            word = &word[cut..];
            lines.push(std::mem::replace(&mut out, pad.clone()));
            cells = indent;
        }
        out.push_str(word);
        cells += word.width();
        fresh = word.is_empty();
    }
    if out.trim().is_empty() && !lines.is_empty() {
        return lines;
    }
    lines.push(out);
    lines
}

/// `text`'s lines each [`wrap_line`]d to `width` with a hanging indent of `hanging`
/// cells past the line's own leading spaces: what every text report prints on a terminal
/// (`None`, piped: every line whole).
pub fn wrap_lines(text: &str, width: Option<usize>, hanging: usize) -> String {
    let Some(width) = width else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in text.lines() {
        let lead = line.len() - line.trim_start_matches(' ').len();
        for part in wrap_line(line, width, lead + hanging) {
            out.push_str(&part);
            out.push('\n');
        }
    }
    out
}

/// A stored member's value in one line of text a reviewer reads: a string as it is, an
/// epoch time in a `*_ms` member as ISO-8601 UTC with the raw value beside it, anything
/// else as JSON — escaped like any record text.
pub fn value_line(name: &str, value: &super::json::Json) -> String {
    if let Some((iso, raw)) = super::time::epoch_member(name, value) {
        return format!("{iso} ({raw})");
    }
    match value {
        super::json::Json::String(s) => sanitize(&s.lossy()).into_owned(),
        other => sanitize(&serde_json::to_string(other).unwrap_or_default()).into_owned(),
    }
}

/// An id as shown in a list or title: escaped like any record text, and, when it is not
/// in Unicode NFC or mixes scripts (a Cyrillic `о` among Latin letters), marked with its
/// code points, so an NFC and an NFD spelling of one name, or a homoglyph of it, never
/// print identically (`step-ñ⟨not NFC: step-n\u{303}⟩`).
pub fn show_id(id: &str) -> Cow<'_, str> {
    use unicode_security::MixedScript;
    let why = if !unicode_normalization::is_nfc(id) {
        "not NFC"
    } else if !id.is_single_script() {
        "mixed scripts"
    } else {
        return sanitize(id);
    };
    Cow::Owned(format!("{}⟨{why}: {}⟩", sanitize(id), code_points(id)))
}

/// The text with every non-ASCII character written as its code point (`\u{f1}`).
pub fn code_points(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c.to_string()
            } else {
                format!("\\u{{{:x}}}", c as u32)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Broken only at spaces, counted in display cells, with a hanging indent; the line's
    /// own spacing kept; nothing lost.
    #[test]
    fn lines_wrap_at_spaces_in_display_cells_and_nothing_is_lost() {
        use unicode_width::UnicodeWidthStr;
        let text = "HIGH   F-GAP  the link of a/very/long/path/to/incident.ndjson:3 resolves ⌛⌛ to no record";
        for width in [16, 24, 40, 48, 80] {
            let lines = wrap_line(text, width, 7);
            assert!(
                lines.iter().all(|l| l.width() <= width.max(15)),
                "{width}: {lines:?}"
            );
            assert!(
                lines[1..].iter().all(|l| l.starts_with("       ")),
                "{lines:?}"
            );
            let words: Vec<&str> = lines.iter().flat_map(|l| l.split_whitespace()).collect();
            let whole: Vec<&str> = text.split_whitespace().collect();
            if width >= 48 {
                assert_eq!(words, whole, "{width}: no word broken");
            }
            assert_eq!(words.concat(), whole.concat(), "{width}: nothing lost");
            assert!(
                lines[0].starts_with("HIGH   F-GAP"),
                "spacing kept: {lines:?}"
            );
        }
        assert_eq!(wrap_line("short  line", 80, 4), ["short  line"]);
        let wide = wrap_line("⌛⌛⌛⌛⌛⌛⌛⌛⌛⌛", 10, 0);
        assert!(wide.iter().all(|l| l.width() <= 10), "{wide:?}");
        assert_eq!(wrap_lines("a\n  b c\n", None, 4), "a\n  b c\n");
    }

    #[test]
    fn homoglyph_ids_are_marked() {
        assert_eq!(show_id("act-\u{e9}"), "act-\u{e9}");
        assert_eq!(
            show_id("\u{43e}p-o"),
            "\u{43e}p-o⟨mixed scripts: \\u{43e}p-o⟩"
        );
    }

    #[test]
    fn non_nfc_ids_are_marked() {
        assert_eq!(show_id("step-\u{f1}"), "step-\u{f1}");
        assert_eq!(
            show_id("step-n\u{303}"),
            "step-n\u{303}⟨not NFC: step-n\\u{303}⟩"
        );
        assert_ne!(show_id("step-n\u{303}"), show_id("step-\u{f1}"));
        assert_eq!(code_points("a\u{2028}b"), "a\\u{2028}b");
    }

    #[test]
    fn escapes_controls_and_bidi() {
        assert_eq!(sanitize("plain"), "plain");
        assert_eq!(sanitize("a\u{1b}]52;c;x\u{7}b"), "a\\e]52;c;x\\u{0007}b");
        assert_eq!(sanitize("x\u{202e}y\u{9b}"), "x\\u{202E}y\\u{009B}");
        assert!(!sanitize("\u{1b}[2J\u{0}").chars().any(is_terminal_control));
    }
}
