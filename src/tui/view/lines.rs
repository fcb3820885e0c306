//! Small text helpers shared by the views.

use super::*;

pub(super) fn value_text(v: &Json) -> String {
    match v {
        Json::String(s) => abbreviate(&sanitize(&s.lossy())),
        other => abbreviate(&sanitize(&serde_json::to_string(other).unwrap_or_default())),
    }
}

/// Long hex digests shortened to `sha256:917aef820265…` (the full value is in the Raw
/// tab and the copy menu).
pub fn abbreviate(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.len() >= 40 {
            out.push_str(&run[..12]);
            out.push('…');
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_ascii_hexdigit() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

pub(super) fn kv<'a>(s: &State, k: &str, v: &str) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!("{k:<18}"), s.theme.accent),
        Span::raw(sanitize(v).into_owned()),
    ])
}

/// A finding in one line: its mark (coloured by severity), id and message.
pub(super) fn finding_line<'a>(s: &State, f: &crate::model::finding::Finding) -> Line<'a> {
    use crate::model::finding::Severity;
    let style = match f.severity {
        Severity::High => s.theme.bad,
        Severity::Medium => s.theme.warn,
        Severity::Low | Severity::Info => s.theme.base,
    };
    Line::styled(
        format!(
            "{} {} {}",
            f.severity.mark(),
            f.id,
            abbreviate(&sanitize(&f.message))
        ),
        style,
    )
}
