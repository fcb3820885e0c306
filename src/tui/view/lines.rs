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

/// The style of a verification glyph: `✓` good, `○` dim (nothing to check), `~` a
/// warning (incomplete), `✗` and `⋎` (a fork) bad.
pub(super) fn glyph_style(t: &crate::tui::theme::Theme, glyph: char) -> Style {
    match glyph {
        '✓' => t.good,
        '○' => t.dim,
        '~' => t.warn,
        _ => t.bad,
    }
}

/// `line` fitted to `width` columns: when it is wider, the end of its last spans gives way
/// to `…` (never its first spans, the glyphs), so a cut is seen to be one.
pub(super) fn fit_line(line: Line<'_>, width: usize) -> Line<'_> {
    use unicode_width::UnicodeWidthChar;
    if line.width() <= width {
        return line;
    }
    let mut room = width.saturating_sub(1);
    let mut spans = Vec::with_capacity(line.spans.len() + 1);
    for span in line.spans {
        let w = span.width();
        if w <= room {
            room -= w;
            spans.push(span);
            continue;
        }
        let mut kept = String::new();
        for c in span.content.chars() {
            let cw = c.width().unwrap_or(0);
            if cw > room {
                break;
            }
            room -= cw;
            kept.push(c);
        }
        spans.push(Span::styled(kept, span.style));
        break;
    }
    spans.push(Span::raw("…"));
    Line::from(spans).style(line.style)
}

/// `head`, `name` and `tail` in one line of at most `width` columns: when they do not fit,
/// `name` is cut with `…` so that `tail` (a row's status glyphs) is never cut away.
pub(super) fn fit_name<'a>(
    head: Vec<Span<'a>>,
    name: Vec<Span<'a>>,
    tail: Vec<Span<'a>>,
    width: usize,
) -> Line<'a> {
    let w = |spans: &[Span<'_>]| spans.iter().map(Span::width).sum::<usize>();
    let (hw, nw, tw) = (w(&head), w(&name), w(&tail));
    let mut spans = head;
    if hw + nw + tw <= width {
        spans.extend(name);
    } else if hw + tw < width {
        spans.extend(fit_line(Line::from(name), width - hw - tw).spans);
    }
    spans.extend(tail);
    fit_line(Line::from(spans), width)
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

/// What happened to an action, as one glyph (one meaning each; the help's legend lists
/// them): executed despite a deny, denied, outside its lease, failed, succeeded, no outcome.
pub(super) fn point_glyph(t: &crate::tui::theme::Theme, own: u16) -> (&'static str, Style) {
    use crate::tui::data::flag;
    if own & flag::EXEC_AFTER_DENY != 0 {
        ("‼", t.bad)
    } else if own & flag::DENIED != 0 {
        ("⊘", t.bad)
    } else if own & flag::LEASE_OUT != 0 {
        ("⌛", t.bad)
    } else if own & flag::FAILED != 0 {
        ("◆", t.bad)
    } else if own & flag::EXECUTED != 0 {
        ("●", t.good)
    } else {
        ("◌", t.dim)
    }
}
