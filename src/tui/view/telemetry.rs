//! The agent's telemetry in the explorer (`--traces`): the telemetry lane under a traced
//! run's timeline, the span joined to an action (Record tab), and a capture gap `e` stopped
//! at, described whole in the detail pane.

use super::*;
use crate::analysis::capture::{Capture, JoinRule};
use crate::model::telemetry::TraceSpan;

/// The lane's row under a traced run's actions: its name and counts on the left, on the
/// axis a `┆` for each span joined to an action and a `✚` for each span without one (a
/// capture gap, the one `e` stopped at highlighted), placed at their evidence time.
#[allow(clippy::too_many_arguments)]
pub(super) fn telemetry_lane(
    s: &State,
    d: &Data,
    c: &Capture,
    axis: &Axis,
    tree: Rect,
    axis_x: u16,
    axis_w: u16,
    buf: &mut Buffer,
) {
    let t = &s.theme;
    let run = s.timeline.run();
    let Some(counts) = (d.analysis.graph.runs.get(run)).and_then(|r| c.run(&r.id)) else {
        return;
    };
    let gaps = counts.spans_without_action;
    let head = vec![
        Span::styled("telemetry ", t.accent),
        Span::styled(format!("{} spans", counts.spans), t.dim),
        if gaps > 0 {
            Span::styled(format!(" ✚{gaps} not in evidence"), t.bad)
        } else {
            Span::styled(" · complete", t.good)
        },
    ];
    let line = fit_line(Line::from(head), usize::from(tree.width));
    buf.set_line(tree.x, tree.y, &line, tree.width);
    let (zoom, pan) = (s.timeline.zoom(), s.timeline.pan());
    // Joined spans first, so that a gap at the same column is the one seen.
    let mut spans: Vec<u32> = c.spans_in(run as u32).to_vec();
    spans.sort_by_key(|&i| c.joins[i as usize].is_none());
    for i in spans {
        let Some(x) = axis.x(c.evidence_time(i), axis_w, zoom, pan) else {
            continue;
        };
        let (glyph, style) = match c.joins[i as usize] {
            Some(_) => ("┆", t.dim),
            None if s.timeline.gap() == Some(i) => ("✚", t.selected),
            None => ("✚", t.bad),
        };
        buf.set_string(axis_x + x, tree.y, glyph, style);
    }
}

/// A span's fields and attributes, for the Record tab and a gap's description.
pub(super) fn span_lines<'a>(
    s: &State,
    c: &Capture,
    span: &TraceSpan,
    rule: Option<JoinRule>,
) -> Vec<Line<'a>> {
    let offset = c.offset_ms.unwrap_or(0.0);
    let mut lines = vec![
        kv(
            s,
            "joined by",
            rule.map_or("no action: a capture gap", JoinRule::explain),
        ),
        kv(s, "span", &span.name),
        kv(s, "span id", &span.span_id),
        kv(s, "trace id", &span.trace_id),
    ];
    if let Some(p) = &span.parent_span_id {
        lines.push(kv(s, "parent span", p));
    }
    let start = if offset == 0.0 {
        format_ms(span.start_ms())
    } else {
        format!(
            "{} (telemetry clock) = {} (evidence clock, offset {:+.3} s)",
            format_ms(span.start_ms()),
            format_ms(span.start_ms() - offset),
            offset / 1000.0
        )
    };
    lines.push(kv(s, "start", &start));
    lines.push(kv(
        s,
        "duration",
        &format_duration_ms(span.end_ms() - span.start_ms()),
    ));
    let status = if span.status_message.is_empty() {
        span.status.name().to_uppercase()
    } else {
        format!(
            "{} ({})",
            span.status.name().to_uppercase(),
            span.status_message
        )
    };
    lines.push(kv(s, "status", &status));
    if let Some(service) = &span.service {
        lines.push(kv(s, "service", service));
    }
    lines.push(kv(
        s,
        "where",
        &format!("{} {}", span.place(), span.pointer),
    ));
    lines.push(Line::styled("ATTRIBUTES", s.theme.title));
    for (k, v) in &span.attributes {
        lines.push(Line::from(vec![
            Span::styled(format!("  {} = ", sanitize(k)), s.theme.accent),
            Span::raw(sanitize(v).into_owned()),
        ]));
    }
    lines
}

/// The telemetry section of the Record tab: the span joined to `node`, or that the run's
/// telemetry has none for it; nothing when the run is not traced (nothing is claimed).
pub(super) fn action_telemetry_lines<'a>(s: &State, d: &Data, node: NodeId) -> Vec<Line<'a>> {
    let Some(c) = d.capture.as_deref() else {
        return Vec::new();
    };
    let g = &d.analysis.graph;
    let run = &g.runs[g.nodes[node as usize].run as usize].id;
    if c.run(run).is_none() {
        return Vec::new();
    }
    let mut lines = vec![Line::styled(
        "TELEMETRY (the agent's own traces)",
        s.theme.title,
    )];
    match c.span_of(node) {
        Some((span, rule)) => lines.extend(span_lines(s, c, span, Some(rule))),
        None => lines.push(Line::styled(
            "no span of the run's telemetry saw this action",
            s.theme.warn,
        )),
    }
    lines
}

/// The capture gap `g` described whole in the detail pane: what the telemetry saw, the
/// finding it raised, and the span with its attributes.
pub(super) fn gap_detail(s: &State, d: &Data, g: u32, area: Rect, buf: &mut Buffer) {
    let Some(c) = d.capture.as_deref() else {
        return;
    };
    let Some(span) = c.spans.get(g as usize) else {
        return;
    };
    let t = &s.theme;
    let block = pane_block(
        s,
        Pane::Detail,
        Line::from(" Capture gap · e: next problem "),
    );
    let inner = block.inner(area);
    block.render(area, buf);
    let mut lines = vec![
        Line::from(vec![
            Span::styled("▲ high ", t.bad),
            Span::styled("F-CAPTURE-GAP", t.title),
        ]),
        Line::raw(format!(
            "The agent's telemetry saw a {} tool call that no action in the evidence records.",
            sanitize(span.tool.as_deref().unwrap_or("(unnamed)"))
        )),
        Line::styled(
            "Telemetry is unsigned: it witnesses that a call happened, it vouches for no record.",
            t.dim,
        ),
        Line::raw(""),
    ];
    lines.extend(span_lines(s, c, span, None));
    let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
    let scroll = s.detail.scroll() as u16;
    paragraph.scroll((scroll, 0)).render(inner, buf);
}
