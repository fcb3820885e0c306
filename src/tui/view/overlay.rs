//! Overlays drawn over the screen: help (keys and the glyph legend) and the copy menu.

use super::*;

/// Every glyph and its one meaning, one a line.
pub const GLYPH_LEGEND: [&str; 27] = [
    "⊘  denied (the first deny of a tree starts a chain)",
    "↻  re-approved after a deny",
    "≠  argument drift",
    "Δ  changed (between approval and execution; between two actions compared)",
    "=  unchanged",
    "–  does not apply",
    "‼  executed despite a deny",
    "●  executed, success",
    "◆  executed, failure",
    "◌  no outcome recorded",
    "✗  invalid signature, or a failed check",
    "⧗  under a lease",
    "⌛ outside its lease",
    "◉  digests comparable",
    "◐  comparable under a weaker assumption",
    "≉  not comparable",
    "✓  verified",
    "○  nothing to check (unsigned, no link, unknown key, not recorded)",
    "~  incomplete (partial or orphaned chain)",
    "⋎  forked chain (two records claim one predecessor)",
    "▲  high finding (■ medium, · low, i info)",
    "?  parent not found",
    "⋯  idle time compressed on the timeline",
    "✚  a tool call the agent's telemetry saw and no action records (capture gap)",
    "┆  a telemetry span joined to its action (telemetry lane)",
    "▼  a record's time an RFC 3161 token proves (timeline axis; --tsa-certs)",
    "⚑  marked by you (colour: verdict; ⚑! the evidence changed since)",
];

/// Help: every key from the keymap first (what a newcomer looks for), then the command
/// line, the note editor and the glyph legend; scrolls with the movement keys when it is
/// taller than the screen.
pub(super) fn help(s: &State, scroll: usize, area: Rect, buf: &mut Buffer) {
    let t = &s.theme;
    let mut lines = vec![Line::styled("KEYS", t.title)];
    for b in &s.keymap.bindings {
        lines.push(Line::from(vec![
            Span::styled(format!("{:<16}", s.keymap.keys_of(b)), t.hint_key),
            Span::raw(b.help),
        ]));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled("COMMAND LINE (:)", t.title));
    for (name, arg, help) in crate::tui::state::COMMANDS {
        lines.push(Line::from(vec![
            Span::styled(format!("{:<16}", format!("{name} {arg}")), t.hint_key),
            Span::raw(help),
        ]));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled("NOTE EDITOR (a)", t.title));
    for (keys, help) in crate::tui::state::NOTE_EDITOR_KEYS {
        lines.push(Line::from(vec![
            Span::styled(format!("{keys:<16}"), t.hint_key),
            Span::raw(help),
        ]));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled("GLYPHS", t.title));
    for legend in GLYPH_LEGEND {
        lines.push(Line::styled(legend, t.base));
    }
    scrolled_box(s, "Help", lines, 100, scroll, area, buf);
}

/// A centred box `width` wide over the screen, showing `lines` from `scroll` (clamped),
/// its title saying how to scroll and close and whether more lies below.
pub(super) fn scrolled_box(
    s: &State,
    title: &str,
    lines: Vec<Line>,
    width: u16,
    scroll: usize,
    area: Rect,
    buf: &mut Buffer,
) {
    let rect = centered(area, width, lines.len() as u16 + 2);
    let visible = usize::from(rect.height.saturating_sub(2));
    let scroll = scroll.min(lines.len().saturating_sub(visible));
    let more = if scroll + visible < lines.len() {
        " · ↓ more"
    } else {
        ""
    };
    Clear.render(rect, buf);
    Paragraph::new(lines)
        .scroll((scroll as u16, 0))
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(format!(" {title} · ↑↓ scroll · Esc closes{more} "))
                .border_style(s.theme.focus_border),
        )
        .style(s.theme.base)
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
    small_box(s, " Copy (number or Enter; Esc closes) ", lines, area, buf);
}

/// `R`'s prompt: the formats (the chosen one highlighted) and the path being typed.
pub(super) fn report_prompt(
    s: &State,
    p: &crate::tui::state::ReportPrompt,
    area: Rect,
    buf: &mut Buffer,
) {
    let t = &s.theme;
    let mut formats = vec![Span::styled("format  ", t.accent)];
    for f in crate::review::report::Format::ALL {
        let style = if f == p.format { t.selected } else { t.dim };
        formats.push(Span::styled(format!(" {} ", f.name()), style));
        formats.push(Span::raw(" "));
    }
    let lines = vec![
        Line::from(formats),
        Line::from(vec![
            Span::styled("file    ", t.accent),
            Span::raw(sanitize(&p.path).into_owned()),
            Span::styled("█", t.accent),
        ]),
        Line::styled(
            "←→ format · type the file · Enter writes · Esc cancels",
            t.dim,
        ),
    ];
    small_box(s, " Write the report ", lines, area, buf);
}

/// `:`: the command line at the top of the screen (as in k9s and vim), its completions
/// below it, the highlighted one marked, and the keys it takes.
pub(super) fn palette(s: &State, p: &crate::tui::state::Palette, area: Rect, buf: &mut Buffer) {
    let t = &s.theme;
    let list = crate::tui::state::suggestions(s, &p.text);
    let width = area.width.min(100);
    let inner_w = usize::from(width.saturating_sub(2));
    let mut lines = vec![Line::from(vec![
        Span::styled(":", t.accent),
        Span::raw(sanitize(&p.text).into_owned()),
        Span::styled("█", t.accent),
    ])];
    for (i, sug) in list.iter().enumerate() {
        let chosen = p.selected == Some(i);
        let line = Line::from(vec![
            Span::styled(if chosen { "▸ " } else { "  " }, t.accent),
            Span::styled(
                sanitize(&sug.line).into_owned(),
                if chosen { t.selected } else { t.base },
            ),
            Span::raw("  "),
            Span::styled(sanitize(&sug.help).into_owned(), t.dim),
        ]);
        lines.push(fit_line(line, inner_w));
    }
    if list.is_empty() && !p.text.is_empty() {
        lines.push(Line::styled(
            "  no completion: Enter runs what is typed",
            t.dim,
        ));
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect =
        Rect::new(area.x + (area.width - width) / 2, area.y + 1, width, height).intersection(area);
    Clear.render(rect, buf);
    Paragraph::new(lines)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(" Command ")
                .title_bottom(Line::styled(
                    " Tab complete · ↑↓ choose · Enter run · Esc close ",
                    t.dim,
                ))
                .border_style(s.theme.focus_border),
        )
        .render(rect, buf);
}

/// `lines` in a focused box of 84 columns, centred over what is below it.
fn small_box(s: &State, title: &str, lines: Vec<Line<'_>>, area: Rect, buf: &mut Buffer) {
    let rect = centered(area, 84, lines.len() as u16 + 2);
    Clear.render(rect, buf);
    Paragraph::new(lines)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(title.to_string())
                .border_style(s.theme.focus_border),
        )
        .render(rect, buf);
}
