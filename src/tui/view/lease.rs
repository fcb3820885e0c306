//! Lease windows: the one drawer of a lease window (timeline rows and the Lease tab),
//! and the Lease tab.

use super::*;

/// The cells of a lease window on an axis `w` columns wide: `[═══)` for a recorded or
/// supplied window (start = grant, else first use), `┄┄┄` open-ended for one inferred
/// from its uses. The one drawer for the timeline rows and the Lease tab.
fn window_cells(axis: &Axis, l: &LeaseView, w: u16, zoom: f64, pan: f64) -> Vec<(u16, char)> {
    let (start, end, open) = match l.source {
        LeaseSource::Inferred => (l.first_use_ms, l.last_use_ms, true),
        _ => (l.granted_at_ms.or(l.first_use_ms), l.expires_at_ms, false),
    };
    let (Some(start), Some(end)) = (start, end) else {
        return Vec::new();
    };
    let a = axis.x_clamped(start, w, zoom, pan);
    let b = axis.x_clamped(end, w, zoom, pan);
    (a.max(0)..=b.min(i32::from(w) - 1))
        .map(|x| {
            let ch = if open {
                '┄'
            } else if x == a {
                '['
            } else if x == b {
                ')'
            } else {
                '═'
            };
            (x as u16, ch)
        })
        .collect()
}

/// Draws a lease window on a timeline row.
pub(super) fn draw_window(
    s: &State,
    axis: &Axis,
    l: &LeaseView,
    x0: u16,
    w: u16,
    y: u16,
    buf: &mut Buffer,
) {
    for (x, ch) in window_cells(axis, l, w, s.timeline.zoom(), s.timeline.pan()) {
        buf.set_string(x0 + x, y, ch.to_string(), s.theme.dim);
    }
}

pub(super) fn lease_lines<'a>(
    s: &State,
    d: &Data,
    lease: Option<&LeaseView>,
    receipt: Option<&crate::analysis::lease::SuppliedReceipt>,
    width: u16,
) -> Vec<Line<'a>> {
    let t = &s.theme;
    // A supplied ApprovalReceipt this action matches (tool, window, arguments digest),
    // with the file and line it is on.
    let approval = |lines: &mut Vec<Line<'a>>| {
        if let Some(r) = receipt {
            lines.push(Line::raw(""));
            lines.push(Line::styled(
                "APPROVAL RECEIPT (lease file)".to_string(),
                t.title,
            ));
            lines.push(kv(s, "receipt", &r.receipt_id));
            lines.push(kv(s, "from", &format!("{}:{}", r.path, r.line)));
            lines.push(kv(s, "tool", r.tool.as_deref().unwrap_or("(none)")));
            lines.push(kv(s, "approved", &format_ms(r.approved_ms)));
            let expires = format_ms(r.expires_ms);
            let expires = if r.expiry_given {
                expires
            } else {
                format!("{expires} (no expiresAt: the gateway's default 60 s)")
            };
            lines.push(kv(s, "expires", &expires));
            if let Some(a) = &r.args_digest {
                lines.push(kv(
                    s,
                    "arguments digest",
                    &format!("{a}… (the first 16 hex of the recorded digest)"),
                ));
            }
            lines.push(Line::styled(
                "matched by tool, execution time inside its window and arguments digest: a receipt names no action".to_string(),
                t.dim,
            ));
        }
    };
    let Some(l) = lease else {
        let mut lines = vec![Line::styled("not under a lease (no scope_lease_id)", t.dim)];
        approval(&mut lines);
        return lines;
    };
    let ms = |v: Option<f64>| v.map_or_else(|| "unknown".into(), format_ms);
    let mut lines = vec![
        kv(s, "lease", &l.lease_id),
        kv(s, "window source", l.source.name()),
        kv(s, "granted", &ms(l.granted_at_ms)),
        kv(s, "expires", &ms(l.expires_at_ms)),
        kv(s, "executed", &ms(l.executed_at_ms)),
        Line::from(vec![
            Span::styled(format!("{:<18}", "verdict"), t.accent),
            Span::styled(
                format!(
                    "{} {}",
                    if l.verdict.is_outside() { "⌛" } else { "⧗" },
                    l.verdict.name()
                ),
                if l.verdict.is_outside() {
                    t.bad
                } else {
                    t.good
                },
            ),
        ]),
    ];
    if let (Some(o), Some(m)) = (l.ordinal, l.max_invocations) {
        lines.push(kv(s, "budget", &format!("invocation {o} of {m}")));
    }
    if let Some(label) = &l.label {
        lines.push(kv(
            s,
            "recorded label",
            &format!(
                "{label}{}",
                if l.label_contradicted {
                    " — contradicted by the recorded times"
                } else {
                    ""
                }
            ),
        ));
    }
    // The lease's own timeline: window and every invocation with its verdict.
    if let Some(summary) = d
        .analysis
        .leases
        .summaries
        .iter()
        .find(|x| x.lease_id == l.lease_id.as_str())
    {
        let mut times: Vec<f64> = summary
            .nodes
            .iter()
            .filter_map(|n| d.analysis.graph.nodes[*n as usize].time())
            .collect();
        let views: Vec<&LeaseView> = summary
            .nodes
            .iter()
            .filter_map(|n| d.analysis.leases.by_node.get(n))
            .collect();
        times.extend(views.iter().filter_map(|v| v.granted_at_ms));
        times.extend(views.iter().filter_map(|v| v.expires_at_ms));
        let axis = Axis::new(times);
        let w = width.saturating_sub(2).max(10);
        let mut bar: Vec<char> = vec![' '; w as usize];
        for (x, ch) in window_cells(&axis, l, w, 1.0, 0.0) {
            bar[x as usize] = ch;
        }
        // One cell per column; `⌛` is double width, so it takes the next cell too.
        let mut ticks: Vec<Option<char>> = vec![Some(' '); w as usize];
        for (k, n) in summary.nodes.iter().enumerate() {
            let v = d.analysis.leases.by_node.get(n);
            if let Some(x) = v
                .and_then(|v| v.executed_at_ms)
                .and_then(|t| axis.x(t, w, 1.0, 0.0))
            {
                let x = (x as usize).min(ticks.len().saturating_sub(2));
                if v.is_some_and(|v| v.verdict.is_outside()) {
                    ticks[x] = Some('⌛');
                    ticks[x + 1] = None;
                } else if ticks[x].is_some() {
                    ticks[x] = char::from_digit(((k + 1) % 10) as u32, 10);
                }
            }
        }
        lines.push(Line::styled("LEASE TIMELINE".to_string(), t.title));
        lines.push(Line::styled(bar.into_iter().collect::<String>(), t.dim));
        lines.push(Line::raw(ticks.into_iter().flatten().collect::<String>()));
        let budget = summary.max_invocations.map_or_else(
            || format!("{} invocations, no budget recorded", summary.nodes.len()),
            |m| format!("{}/{m} invocations", summary.nodes.len()),
        );
        lines.push(Line::styled(budget, t.dim));
        for (k, n) in summary.nodes.iter().enumerate() {
            let v = d.analysis.leases.by_node.get(n);
            let id = d
                .analysis
                .graph
                .action(&d.corpus, *n)
                .and_then(|(_, a)| a.id())
                .unwrap_or("?");
            let verdict = v.map_or("?", |v| v.verdict.name());
            let style = if v.is_some_and(|v| v.verdict.is_outside()) {
                t.bad
            } else {
                t.base
            };
            lines.push(Line::styled(
                format!(
                    "  #{} {} at {} → {verdict}",
                    k + 1,
                    sanitize(id),
                    ms(v.and_then(|v| v.executed_at_ms))
                ),
                style,
            ));
        }
    }
    for n in l.notes.iter() {
        lines.push(Line::styled(format!("note: {n}"), t.dim));
    }
    approval(&mut lines);
    lines
}
