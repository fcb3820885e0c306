//! The fork view (`b`): from the record two branches claim as their predecessor, both
//! branches side by side, a row per action id after it — `=` the same on both, `Δ` the
//! same id with members that differ (named), `–` on one branch only — each action with
//! its record's verdict, tool, outcome and time.

use super::compare::cell;
use super::*;
use crate::analysis::graph::NodeId;

/// Draws the fork view.
pub(super) fn fork(s: &State, scroll: usize, area: Rect, buf: &mut Buffer) {
    let t = &s.theme;
    let (Some(d), Some(node)) = (&s.data, s.timeline.node()) else {
        return;
    };
    let Some(f) = crate::analysis::compare::fork(&d.analysis, &d.corpus, node) else {
        return;
    };
    let g = &d.analysis.graph;
    let width = area.width.min(160);
    let inner = usize::from(width.saturating_sub(2));
    let id_w = (f.rows.iter().map(|r| r.id.chars().count()).max())
        .unwrap_or(0)
        .clamp(6, (inner / 4).max(6));
    let col = inner.saturating_sub(id_w + 6) / 2;
    // A record's place as the header names it: file name and line (the Inputs overlay and
    // the Record tab have the whole path).
    let place = |record: u32| {
        let r = d.corpus.record(record as usize);
        let file = crate::model::text::file_name(&r.source.path);
        format!("{}:{}", sanitize(&file), r.source.line)
    };
    // A record's verdict, as every action shown carries it.
    let verdict = |record: u32| match d
        .report
        .as_ref()
        .and_then(|r| r.records.get(record as usize))
    {
        Some(v) => crate::verify::verdict::RecordVerdict::of(v)
            .glyph()
            .to_string(),
        None => "unverified".into(),
    };
    let action = |n: Option<NodeId>| -> String {
        let Some(n) = n else {
            return "– not on this branch".into();
        };
        let node = &g.nodes[n as usize];
        let Some(a) = g.facts(&d.corpus, n) else {
            return String::new();
        };
        let time = node
            .time()
            .map(crate::model::time::format_ms)
            .unwrap_or_default();
        format!(
            "{} {} {} {}",
            verdict(node.record),
            sanitize(a.tool().unwrap_or("(no tool)")),
            point_glyph(t, d.flags[n as usize]).0,
            time.get(11..23).unwrap_or(&time)
        )
    };
    let head = |c: u32| g.lineages.chains[c as usize].head;
    let head_verdict = |c: u32| match d
        .report
        .as_ref()
        .and_then(|r| r.records.get(head(c) as usize))
    {
        Some(v) => crate::verify::verdict::RecordVerdict::of(v).short(),
        None => "record not verified".into(),
    };
    let mut lines = vec![Line::styled(
        cell(
            &match f.point {
                Some(p) => format!(
                    "forked at {}: both branches name this record as their predecessor",
                    place(p)
                ),
                None => "forked at a record that is not loaded".into(),
            },
            inner,
        ),
        t.title,
    )];
    if f.more > 0 {
        lines.push(Line::styled(
            format!("{} more branches from the same record, not shown", f.more),
            t.warn,
        ));
    }
    let [left, right] = f.branches;
    let pair =
        |l: String, r: String| format!("  {} {}  {}", cell("", id_w), cell(&l, col), cell(&r, col));
    lines.push(Line::styled(
        pair(
            format!("branch from {}", place(head(left))),
            format!("branch from {}", place(head(right))),
        ),
        t.title,
    ));
    lines.push(Line::styled(
        pair(head_verdict(left), head_verdict(right)),
        t.base,
    ));
    let mut parted = 0;
    for r in &f.rows {
        let (mark, style) = match (r.left, r.right) {
            (Some(_), Some(_)) if r.differs.is_empty() => ("=", t.dim),
            (Some(_), Some(_)) => ("Δ", t.bad),
            _ => ("–", t.warn),
        };
        if mark != "=" {
            parted += 1;
        }
        let selected = r.left == Some(node) || r.right == Some(node);
        lines.push(Line::styled(
            format!(
                "{mark} {} {}  {}",
                cell(&sanitize(&r.id), id_w),
                cell(&action(r.left), col),
                cell(&action(r.right), col)
            ),
            if selected { t.selected } else { style },
        ));
        if !r.differs.is_empty() {
            lines.push(Line::styled(
                cell(
                    &format!("  {} differs: {}", " ".repeat(id_w), r.differs.join(", ")),
                    inner,
                ),
                t.bad,
            ));
        }
    }
    lines.push(Line::styled(
        cell(
            &format!(
                "{parted} of {} actions after the fork differ or are on one branch only · = on an action compares it with its twin",
                f.rows.len()
            ),
            inner,
        ),
        t.base,
    ));
    scrolled_box(s, "Fork", lines, width, scroll, area, buf);
}
