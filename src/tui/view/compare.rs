//! The comparison overlay (`=`): the selected action beside its counterpart, a row per
//! member (differing rows marked Δ and highlighted), then what changed between approval
//! and execution for the right-hand action.

use super::*;

/// `text` cut to `width` characters (… marks a cut).
pub(super) fn cell(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        format!("{text:<width$}")
    } else {
        let cut: String = text.chars().take(width.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// Draws the comparison overlay.
pub(super) fn compare(s: &State, scroll: usize, area: Rect, buf: &mut Buffer) {
    let t = &s.theme;
    let (Some(d), Some(node)) = (&s.data, s.timeline.node()) else {
        return;
    };
    let Some(pair) = crate::tui::state::comparison(s, d, node) else {
        return;
    };
    let width = area.width.min(160);
    let inner = usize::from(width.saturating_sub(2));
    // The member names in full when they fit in a third of the box.
    let longest = pair
        .rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0);
    let name_w = longest.clamp(8, (inner / 3).max(8));
    let col = inner.saturating_sub(name_w + 4) / 2;
    let mut lines = vec![
        // Headings too long for the overlay end in `…`, never cut silently at its edge.
        Line::styled(cell(pair.why, inner), t.title),
        Line::styled(
            format!(
                "{} {}  {}",
                cell("", name_w),
                cell(&sanitize(&pair.left.label), col),
                cell(&sanitize(&pair.right.label), col)
            ),
            t.title,
        ),
    ];
    // Each side's record verdict: a side from a record that does not verify says so.
    let trust = |node: Option<crate::analysis::graph::NodeId>| {
        let record = node
            .and_then(|n| d.analysis.graph.nodes.get(n as usize))?
            .record;
        let verdict = d.report.as_ref()?.records.get(record as usize)?;
        Some(crate::verify::verdict::RecordVerdict::of(verdict).short())
    };
    let unverified = || "record not verified".to_string();
    lines.push(Line::styled(
        format!(
            "{} {}  {}",
            cell("record", name_w),
            cell(&trust(pair.left.node).unwrap_or_else(unverified), col),
            cell(&trust(pair.right.node).unwrap_or_else(unverified), col)
        ),
        t.base,
    ));
    let differing = pair.rows.iter().filter(|r| r.differs).count();
    for r in &pair.rows {
        // An epoch time as ISO-8601 UTC, its raw value beside it (the Raw tab has it too).
        let value = |v: Option<&Json>| match v {
            None => "—".to_string(),
            Some(v) => match crate::model::time::epoch_member(&r.name, v) {
                Some((iso, raw)) => format!("{iso} ({raw})"),
                None => value_text(v),
            },
        };
        let mark = if r.differs { "Δ" } else { " " };
        let style = if r.differs { t.bad } else { t.dim };
        lines.push(Line::styled(
            format!(
                "{mark}{} {}  {}",
                cell(&sanitize(&r.name), name_w),
                cell(&value(r.left), col),
                cell(&value(r.right), col)
            ),
            style,
        ));
    }
    lines.push(Line::styled(
        format!("{differing} of {} members differ", pair.rows.len()),
        t.base,
    ));
    if let Some(report) = pair.right.node.and_then(|n| {
        d.analysis.show(
            &d.corpus,
            n,
            &d.findings,
            d.report.as_ref().map(|r| &r.records[..]),
        )
    }) {
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            "WHAT CHANGED BETWEEN APPROVAL AND EXECUTION (right)",
            t.title,
        ));
        for c in &report.authority.changed {
            lines.push(Line::styled(
                cell(
                    &format!(
                        "{:<20} {:<14} {}",
                        c.what,
                        c.status.name(),
                        sanitize(&c.summary.to_string())
                    ),
                    inner,
                ),
                t.base,
            ));
        }
    }
    scrolled_box(s, "Compare", lines, width, scroll, area, buf);
}
