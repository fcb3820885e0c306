//! The navigator: its list tabs and the visible slice of the selected list.

use super::*;
use crate::review::marks::Place;
use crate::tui::state::NavTarget;

/// The list tabs as spans (` Runs │ Chains │ …`), and the list each span is (for mouse
/// hit-testing). The same line titles the navigator and makes the narrow tab bar; in
/// fewer than `width` columns the titles shorten and the separators close up, so no tab
/// is ever cut away.
pub(super) fn nav_tabs<'a>(s: &State, width: u16) -> (Vec<Span<'a>>, Vec<Option<NavList>>) {
    let full: usize = NavList::ALL
        .iter()
        .map(|l| l.title().len() + 3)
        .sum::<usize>();
    let short = full > usize::from(width);
    let mut spans = vec![Span::raw(" ")];
    let mut lists = vec![None];
    for (i, l) in NavList::ALL.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(
                if short { "│" } else { " │ " },
                s.theme.border,
            ));
            lists.push(None);
        }
        let style = if *l == s.nav.list() {
            s.theme.title
        } else {
            s.theme.dim
        };
        spans.push(Span::styled(
            if short { l.short() } else { l.title() },
            style,
        ));
        lists.push(Some(*l));
    }
    spans.push(Span::raw(" "));
    lists.push(None);
    (spans, lists)
}

pub(super) fn tab_bar(s: &State, area: Rect, buf: &mut Buffer) {
    let (mut spans, _) = nav_tabs(s, area.width);
    spans.push(Span::styled("│", s.theme.border));
    if let Some(item) = s.nav.items().get(s.nav.cursor()) {
        spans.push(Span::raw(format!(
            " {} {}",
            glyphs(item.flags),
            nav_text(s, item)
        )));
    }
    spans.push(Span::styled("  (Tab: list)", s.theme.dim));
    Line::from(spans).render(area, buf);
}

pub(super) fn navigator(s: &State, area: Rect, buf: &mut Buffer) {
    // The title's room: the pane less its corners and the focus key (` F2 `).
    let (title, _) = nav_tabs(s, area.width.saturating_sub(6));
    let block = pane_block(s, Pane::Navigator, Line::from(title));
    let inner = block.inner(area);
    block.render(area, buf);
    if s.data.is_none() {
        Paragraph::new("loading…")
            .style(s.theme.dim)
            .render(inner, buf);
        return;
    }
    if s.nav.items().is_empty() {
        // The filter is named only when one is applied.
        let empty = if s.filter.is_applied() {
            "nothing passes the filter (f changes it)"
        } else {
            "nothing here"
        };
        Paragraph::new(empty).style(s.theme.dim).render(inner, buf);
        return;
    }
    let h = inner.height as usize;
    let offset = window(s.nav.cursor(), s.nav.items().len(), h);
    for (i, item) in s.nav.items().iter().enumerate().skip(offset).take(h) {
        let y = inner.y + (i - offset) as u16;
        let marker = if item.foldable {
            if item.folded { "▸ " } else { "▾ " }
        } else {
            "  "
        };
        let style = if i == s.nav.cursor() {
            s.theme.selected
        } else {
            s.theme.base
        };
        let g = glyphs(item.flags);
        let mark = match item.target {
            NavTarget::Finding(f) => s
                .review
                .finding_mark(f)
                .map(|m| vec![mark_span(s, m, Place::Finding(f)), Span::raw(" ")])
                .unwrap_or_default(),
            NavTarget::Step(_, n) | NavTarget::LeaseUse(_, n) => node_mark(s, n),
            NavTarget::Run(run) => {
                let marked = s.data.as_ref().map_or(0, |d| {
                    s.review
                        .by_node
                        .keys()
                        .filter(|n| d.run_of(**n) == run)
                        .count()
                });
                if marked == 0 {
                    Vec::new()
                } else {
                    vec![Span::styled(format!("⚑{marked} "), s.theme.accent)]
                }
            }
            _ => Vec::new(),
        };
        let mut line = Line::from(vec![
            Span::raw("  ".repeat(item.depth as usize)),
            Span::raw(marker),
            Span::styled(
                if g.is_empty() {
                    String::new()
                } else {
                    format!("{g} ")
                },
                flag_style(s, item.flags),
            ),
        ]);
        for span in mark {
            line.push_span(span);
        }
        line.push_span(Span::raw(nav_text(s, item)));
        buf.set_style(Rect::new(inner.x, y, inner.width, 1), style);
        let line = fit_line(line, usize::from(inner.width));
        buf.set_line(inner.x, y, &line, inner.width);
    }
}

pub(super) fn flag_style(s: &State, bits: u16) -> Style {
    if bits & (flag::DENIED | flag::INVALID | flag::LEASE_OUT | flag::HIGH) != 0 {
        s.theme.bad
    } else if bits & flag::DRIFT != 0 {
        s.theme.warn
    } else if bits & flag::REAPPROVED != 0 {
        s.theme.good
    } else {
        s.theme.info
    }
}
