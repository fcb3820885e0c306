//! A finding described whole in the detail pane (k9s' describe): while the navigator's
//! cursor is on a finding (and the timeline is not focused), its rule, whole message,
//! run and actions, every location, its evidence and fingerprint — wrapped, scrolled with
//! the detail pane's keys, nothing cut.

use super::*;
use crate::model::finding::{Finding, describe};
use crate::tui::state::NavTarget;

/// The finding the navigator's cursor is on, when the detail pane describes it.
pub(super) fn described(s: &State) -> Option<usize> {
    if s.focus == Pane::Timeline {
        return None;
    }
    match s.nav.items().get(s.nav.cursor())?.target {
        NavTarget::Finding(i) | NavTarget::FindingGroup(i) => Some(i),
        _ => None,
    }
}

/// The description's lines.
fn finding_lines<'a>(s: &State, d: &Data, f: &Finding) -> Vec<Line<'a>> {
    let t = &s.theme;
    let mut lines = vec![
        Line::from(vec![
            Span::styled(
                format!("{} {} ", f.severity.mark(), f.severity.name()),
                t.bad,
            ),
            Span::styled(f.id, t.title),
        ]),
        Line::styled(describe(f.id).unwrap_or("").to_string(), t.dim),
        Line::raw(""),
        Line::raw(sanitize(&f.message).into_owned()),
        Line::raw(""),
    ];
    if let Some(run) = &f.run_id {
        lines.push(kv(s, "run", run));
    }
    if !f.action_ids.is_empty() {
        let ids: Vec<String> = f
            .action_ids
            .iter()
            .map(|a| show_id(a).into_owned())
            .collect();
        lines.push(kv(s, "actions", &ids.join(", ")));
    }
    if let Some(chain) = &f.chain {
        let tool = f
            .tool
            .as_deref()
            .map_or(String::new(), |t| format!("{t}, "));
        lines.push(kv(s, "action of", &format!("{tool}chain {chain}")));
    }
    let named = d.nodes_of(f).len();
    lines.push(kv(
        s,
        "on the timeline",
        &match named {
            0 => "no action: Enter goes to its record's first action, if it has one".into(),
            1 => "1 action · Enter goes to it".into(),
            n => format!("{n} actions · Enter goes to the first"),
        },
    ));
    lines.push(Line::styled("LOCATIONS", t.title));
    for l in &f.locations {
        let pointer = if l.pointer.is_empty() {
            String::new()
        } else {
            format!(" {}", l.pointer)
        };
        lines.push(Line::raw(format!(
            "  {}:{}{}",
            sanitize(&l.path),
            l.line,
            sanitize(&pointer)
        )));
    }
    lines.push(Line::styled("EVIDENCE", t.title));
    let evidence = serde_json::to_string_pretty(&f.evidence).unwrap_or_default();
    lines.extend(
        evidence
            .lines()
            .map(|l| Line::raw(sanitize(l).into_owned())),
    );
    lines.push(kv(s, "fingerprint", &f.fingerprint));
    lines
}

/// Draws the description of finding `i` in the detail pane.
pub(super) fn finding_detail(s: &State, d: &Data, i: usize, area: Rect, buf: &mut Buffer) {
    let Some(f) = d.findings.get(i) else {
        return;
    };
    let title = Line::from(format!(" Finding {} · Enter: go to it ", f.id));
    let block = pane_block(s, Pane::Detail, title);
    let inner = block.inner(area);
    block.render(area, buf);
    let lines = finding_lines(s, d, f);
    let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
    let total = paragraph.line_count(inner.width);
    let scroll = s.detail.scroll().min(total.saturating_sub(1));
    paragraph.scroll((scroll as u16, 0)).render(inner, buf);
    // More below: say so on the last row, with the way to see it.
    let below = total.saturating_sub(scroll + usize::from(inner.height));
    if below > 0 && inner.height > 0 {
        let text = format!(" … {below} more lines: F4 then ↓ ");
        let x = inner.right().saturating_sub(text.chars().count() as u16);
        buf.set_string(x, inner.bottom() - 1, text, s.theme.warn);
    }
}
