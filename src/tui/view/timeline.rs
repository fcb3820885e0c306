//! The timeline: the run's actions in tree order beside a time axis (lease windows,
//! execution instants).

use super::*;

/// A time axis with long idle gaps compressed (and remembered, to mark them).
pub struct Axis {
    /// (time, position) anchors, sorted.
    anchors: Vec<(f64, f64)>,
    total: f64,
    /// (position, idle duration) of each compressed gap.
    pub gaps: Vec<(f64, f64)>,
}

impl Axis {
    /// Builds an axis over `times`; gaps longer than both 8× the median gap and 15 % of
    /// the span are drawn as a short `⋯`.
    pub fn new(mut times: Vec<f64>) -> Axis {
        times.retain(|t| t.is_finite());
        times.sort_by(f64::total_cmp);
        times.dedup();
        if times.len() < 2 {
            let t = times.first().copied().unwrap_or(0.0);
            return Axis {
                anchors: vec![(t, 0.0), (t + 1.0, 1.0)],
                total: 1.0,
                gaps: Vec::new(),
            };
        }
        let mut diffs: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        let span = times[times.len() - 1] - times[0];
        diffs.sort_by(f64::total_cmp);
        let median = diffs[diffs.len() / 2];
        let threshold = (median * 8.0).max(span * 0.15);
        let compressed = (span * 0.04).max(1.0);
        let mut anchors = vec![(times[0], 0.0)];
        let mut gaps = Vec::new();
        let mut pos = 0.0;
        for w in times.windows(2) {
            let d = w[1] - w[0];
            if d > threshold && times.len() > 2 {
                gaps.push((pos + compressed / 2.0, d));
                pos += compressed;
            } else {
                pos += d;
            }
            anchors.push((w[1], pos));
        }
        Axis {
            anchors,
            total: pos.max(1.0),
            gaps,
        }
    }

    /// Position of a time in [0, total] (extrapolated linearly outside the anchors).
    fn pos(&self, t: f64) -> f64 {
        let a = &self.anchors;
        let i = a.partition_point(|(x, _)| *x <= t);
        if i == 0 {
            return a[0].1 - (a[0].0 - t);
        }
        if i == a.len() {
            let (lt, lp) = a[a.len() - 1];
            return lp + (t - lt);
        }
        let ((t0, p0), (t1, p1)) = (a[i - 1], a[i]);
        p0 + (t - t0) / (t1 - t0) * (p1 - p0)
    }

    /// Column of a time for a width, zoom and pan; None when off-screen.
    pub fn x(&self, t: f64, width: u16, zoom: f64, pan: f64) -> Option<u16> {
        let frac = (self.pos(t) / self.total - pan) * zoom;
        let x = (frac * f64::from(width.saturating_sub(1))).round();
        (0.0..f64::from(width)).contains(&x).then_some(x as u16)
    }

    /// Column (clamped) for drawing ranges.
    pub(super) fn x_clamped(&self, t: f64, width: u16, zoom: f64, pan: f64) -> i32 {
        let frac = (self.pos(t) / self.total - pan) * zoom;
        (frac * f64::from(width.saturating_sub(1))).round() as i32
    }

    /// The time at a column (inverse of `x`).
    pub fn time_at(&self, x: u16, width: u16, zoom: f64, pan: f64) -> f64 {
        let frac = f64::from(x) / f64::from(width.saturating_sub(1).max(1)) / zoom + pan;
        let p = frac * self.total;
        let a = &self.anchors;
        let i = a.partition_point(|(_, q)| *q <= p).clamp(1, a.len() - 1);
        let ((t0, p0), (t1, p1)) = (a[i - 1], a[i]);
        if p1 > p0 {
            t0 + (p - p0) / (p1 - p0) * (t1 - t0)
        } else {
            t0
        }
    }
}

/// The axis of the selected run (action times and lease window bounds).
pub fn run_axis(s: &State, d: &Data) -> Axis {
    let g = &d.analysis.graph;
    let Some(run) = g.runs.get(s.run) else {
        return Axis::new(Vec::new());
    };
    let mut times: Vec<f64> = run
        .nodes
        .iter()
        .filter_map(|n| g.nodes[*n as usize].time)
        .collect();
    for n in &run.nodes {
        if let Some(l) = d.analysis.leases.by_node.get(n) {
            times.extend(l.granted_at_ms);
            times.extend(l.expires_at_ms);
        }
    }
    Axis::new(times)
}

pub(super) fn time_of_day(ms: f64) -> String {
    let full = format_ms(ms);
    full.get(11..23).map(str::to_string).unwrap_or(full)
}

pub(super) fn timeline(s: &State, area: Rect, buf: &mut Buffer) {
    let t = &s.theme;
    let Some(d) = s.data.as_ref() else {
        let block = pane_block(s, Pane::Timeline, Line::from(" Timeline "));
        let inner = block.inner(area);
        block.render(area, buf);
        Paragraph::new(format!("{} {}", s.progress.phase, progress_pct(s)))
            .style(t.dim)
            .render(inner, buf);
        return;
    };
    if d.corpus.is_empty() && !s.errors.is_empty() {
        let block = pane_block(s, Pane::Timeline, Line::from(" Timeline "));
        let inner = block.inner(area);
        block.render(area, buf);
        Paragraph::new(format!(
            "Nothing loaded: {} load error{} (listed under Runs). Check the paths and the file formats.",
            s.errors.len(),
            if s.errors.len() == 1 { "" } else { "s" }
        ))
        .style(t.bad)
        .wrap(Wrap { trim: true })
        .render(inner, buf);
        return;
    }
    let g = &d.analysis.graph;
    let run = g.runs.get(s.run);
    let times: Vec<f64> = run
        .map(|r| {
            r.nodes
                .iter()
                .filter_map(|n| g.nodes[*n as usize].time)
                .collect()
        })
        .unwrap_or_default();
    let (lo, hi) = times
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        });
    let title = format!(
        " Timeline · {} · {} → {} · zoom {}× ",
        sanitize(run.map(|r| r.id.as_str()).unwrap_or("")),
        if lo.is_finite() {
            time_of_day(lo)
        } else {
            "?".into()
        },
        if hi.is_finite() {
            time_of_day(hi)
        } else {
            "?".into()
        },
        s.zoom
    );
    let block = pane_block(s, Pane::Timeline, Line::from(title));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height < 2 || inner.width < 20 {
        return;
    }
    let tree_w = (inner.width / 2).min(46);
    let axis_x = inner.x + tree_w + 1;
    // One column spare on the right: markers such as ⌛ are two cells wide.
    let axis_w = inner.width.saturating_sub(tree_w + 2);
    for y in inner.y..inner.y + inner.height {
        buf.set_string(inner.x + tree_w, y, "│", t.border);
    }
    let axis = run_axis(s, d);
    // Axis row: tick labels and compressed gaps.
    buf.set_string(inner.x, inner.y, "action", t.dim);
    let ticks = (axis_w / 16).max(1);
    for i in 0..ticks {
        let x = i * (axis_w / ticks);
        let label = time_of_day(axis.time_at(x, axis_w, s.zoom, s.pan));
        buf.set_stringn(
            axis_x + x,
            inner.y,
            format!("│{label}"),
            (axis_w - x) as usize,
            t.dim,
        );
    }
    for (pos, idle) in &axis.gaps {
        let frac = (pos / axis.total - s.pan) * s.zoom;
        let x = (frac * f64::from(axis_w.saturating_sub(1))).round();
        if (0.0..f64::from(axis_w)).contains(&x) {
            let label = format!("⋯{}⋯", format_duration_ms(*idle));
            let x = (x as u16).min(axis_w.saturating_sub(label.chars().count() as u16));
            buf.set_string(axis_x + x, inner.y, label, t.warn);
        }
    }
    let body_h = (inner.height - 1) as usize;
    let cursor = s.cursor_row().unwrap_or(0);
    let offset = window(cursor, s.rows.len(), body_h);
    let searching = !s.search.text.is_empty();
    for (i, row) in s.rows.iter().enumerate().skip(offset).take(body_h) {
        let y = inner.y + 1 + (i - offset) as u16;
        let selected = i == cursor && s.node == Some(row.node);
        timeline_row(
            s,
            d,
            &axis,
            row,
            Rect::new(inner.x, y, tree_w, 1),
            axis_x,
            axis_w,
            buf,
        );
        let dim = (searching && !s.search_hits.contains(&row.node)) || !s.passes(row.node);
        if selected {
            buf.set_style(Rect::new(inner.x, y, tree_w, 1), t.selected);
        } else if dim {
            buf.set_style(Rect::new(inner.x, y, tree_w, 1), t.dim);
        } else if searching {
            buf.set_style(Rect::new(inner.x, y, tree_w, 1), t.matched);
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn timeline_row(
    s: &State,
    d: &Data,
    axis: &Axis,
    row: &Row,
    tree: Rect,
    axis_x: u16,
    axis_w: u16,
    buf: &mut Buffer,
) {
    let t = &s.theme;
    let g = &d.analysis.graph;
    let Some((_, a)) = g.action(&d.corpus, row.node) else {
        return;
    };
    let own = d.flags[row.node as usize];
    let shown = if row.folded { row.subtree } else { own };
    let indent = "  ".repeat((row.depth as usize).min(8));
    let marker = if row.has_children {
        if row.folded { "▸" } else { "▾" }
    } else if row.depth > 0 {
        "└"
    } else {
        " "
    };
    let cross = if g.parent_is_cross_run(row.node) {
        "↖"
    } else {
        ""
    };
    let line = Line::from(vec![
        Span::raw(format!("{indent}{marker}{cross}")),
        Span::raw(sanitize(a.id().unwrap_or("(no id)")).into_owned()),
        Span::raw(" "),
        Span::styled(sanitize(a.tool().unwrap_or("?")).into_owned(), t.accent),
        Span::raw(" "),
        Span::styled(glyphs(shown), flag_style(s, shown)),
    ]);
    buf.set_line(tree.x, tree.y, &line, tree.width);
    // Lease window under the action, then the execution instant.
    if let Some(l) = d.analysis.leases.by_node.get(&row.node) {
        draw_window(s, axis, l, axis_x, axis_w, tree.y, buf);
    }
    if let Some(time) = g.nodes[row.node as usize].time
        && let Some(x) = axis.x(time, axis_w, s.zoom, s.pan)
    {
        // One meaning per glyph (the help's legend lists them).
        let (glyph, style) = if own & flag::EXEC_AFTER_DENY != 0 {
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
        };
        buf.set_string(axis_x + x, tree.y, glyph, style);
    }
}
