//! The review in the views: the mark glyph (`⚑`, coloured by verdict; `⚑!` when the
//! evidence changed since the mark was made), the mark line at the top of the detail
//! pane, and the inline note editor.

use super::*;
use crate::review::marks::{Mark, Place, Verdict};

/// The glyph of a mark, styled by its verdict.
pub(super) fn mark_span<'a>(s: &State, mark: &Mark, place: Place) -> Span<'a> {
    let t = &s.theme;
    let style = match mark.verdict {
        Verdict::RootCause => t.bad,
        Verdict::Suspicious => t.warn,
        Verdict::FollowUp => t.accent,
        Verdict::Benign => t.good,
    };
    let text = if place.warning().is_some() {
        "⚑!"
    } else {
        "⚑"
    };
    Span::styled(text, style)
}

/// The mark glyph of an action, with a space after it, or nothing.
pub(super) fn node_mark<'a>(s: &State, node: NodeId) -> Vec<Span<'a>> {
    match s.review.mark_of(node) {
        Some((m, p)) => vec![mark_span(s, m, p), Span::raw(" ")],
        None => Vec::new(),
    }
}

/// The detail pane's mark lines: the action's mark and the mark on its record, each with
/// its verdict, the note's first line and any warning.
pub(super) fn mark_lines<'a>(s: &State, d: &Data, node: NodeId) -> Vec<Line<'a>> {
    let record = d.analysis.graph.nodes[node as usize].record as usize;
    let marks = [
        (s.review.mark_of(node), ""),
        (s.review.record_mark(record), "record "),
    ];
    let t = &s.theme;
    let mut lines = Vec::new();
    for (m, what) in marks {
        let Some((m, place)) = m else { continue };
        let mut head = vec![
            mark_span(s, m, place),
            Span::styled(
                format!(" {what}{}", m.verdict.name().to_uppercase()),
                t.title,
            ),
        ];
        let mut note = m.note.lines();
        if let Some(first) = note.next() {
            head.push(Span::raw(format!(" · {}", sanitize(first))));
            let more = note.count();
            if more > 0 {
                head.push(Span::styled(format!(" (+{more} lines: a)"), t.dim));
            }
        } else {
            head.push(Span::styled(" · a: add a note", t.dim));
        }
        lines.push(Line::from(head));
        if let Some(w) = place.warning() {
            lines.push(Line::styled(format!("⚠ {w}"), t.bad));
        }
    }
    lines
}

/// The inline note editor over the screen: the text area, its block saying what the
/// note is on and which keys save or leave.
pub(super) fn note_editor(s: &State, area: Rect, buf: &mut Buffer) {
    let Some(e) = &s.review.editor else {
        return;
    };
    let t = &s.theme;
    let width = area.width.min(90);
    let lines = u16::try_from(e.area.lines().len()).unwrap_or(u16::MAX);
    let height = lines
        .saturating_add(4)
        .clamp(8.min(area.height), area.height);
    let rect = centered(area, width, height);
    Clear.render(rect, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(t.focus_border)
        .title(Line::styled(
            format!(" Note on {} ", sanitize(&e.label)),
            t.title,
        ))
        .title_bottom(if e.discarding {
            Line::styled(
                " the note has changed: Esc again discards it · Ctrl-S saves it ",
                t.warn,
            )
        } else {
            Line::styled(
                " Ctrl-S save · Esc cancel · Enter new line · Ctrl-Z undo ",
                t.dim,
            )
        });
    let inner = block.inner(rect);
    block.render(rect, buf);
    e.area.render(inner, buf);
}
