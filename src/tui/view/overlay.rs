//! Overlays drawn over the screen: help (keys and the glyph legend) and the copy menu.

use super::*;

/// Every glyph and its one meaning.
pub const GLYPH_LEGEND: [&str; 4] = [
    "glyphs: ⊘ denied (the first of a tree starts a chain)  ↻ re-approved after a deny  ≠ drift  ‼ executed despite a deny",
    "        ● executed, success  ◆ executed, failure  ◌ no outcome recorded  ✗ invalid signature or failed check",
    "        ⧗ under a lease  ⌛ outside its lease  ◉ comparable  ◐ weaker assumption  ≉ not comparable",
    "        ✓ verified  ○ nothing to check (unsigned, no link, unknown key)  ~ incomplete  ▲■· findings  ? missing parent  ⋯ idle",
];

pub(super) fn help(s: &State, area: Rect, buf: &mut Buffer) {
    let t = &s.theme;
    let mut lines = Vec::new();
    for b in &s.keymap.bindings {
        lines.push(Line::from(vec![
            Span::styled(format!("{:<16}", s.keymap.keys_of(b)), t.hint_key),
            Span::raw(b.help),
        ]));
    }
    lines.push(Line::raw(""));
    for legend in GLYPH_LEGEND {
        lines.push(Line::styled(legend, t.dim));
    }
    let rect = centered(area, 100, lines.len() as u16 + 2);
    Clear.render(rect, buf);
    Paragraph::new(lines)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(" Help · keys from the keymap (Esc closes) ")
                .border_style(t.focus_border),
        )
        .style(t.base)
        .render(rect, buf);
}

pub(super) fn copy_menu(
    s: &State,
    items: &[CopyTarget],
    cursor: usize,
    area: Rect,
    buf: &mut Buffer,
) {
    let t = &s.theme;
    let lines: Vec<Line> = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let preview: String = match item {
                CopyTarget::Value(_, text) => sanitize(text).chars().take(48).collect(),
                _ => String::new(),
            };
            let style = if i == cursor { t.selected } else { t.base };
            Line::styled(format!("{} {:<28} {preview}", i + 1, item.label()), style)
        })
        .collect();
    let rect = centered(area, 84, lines.len() as u16 + 2);
    Clear.render(rect, buf);
    Paragraph::new(lines)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(" Copy (number or Enter; Esc closes) ")
                .border_style(t.focus_border),
        )
        .render(rect, buf);
}
