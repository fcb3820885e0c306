//! The timeline: the run's actions in tree order beside a time axis (lease windows,
//! execution instants).

use super::*;

/// A tick label as precise as its step: `10:02` for minutes, `10:02:30` for seconds,
/// `10:02:30.250` below.
fn tick_label(ms: f64, step: f64) -> String {
    let full = format_ms(ms);
    let end = if step >= 60_000.0 {
        16
    } else if step >= 1000.0 {
        19
    } else {
        23
    };
    full.get(11..end).map(str::to_string).unwrap_or(full)
}

/// True when columns `x..end` touch a label already drawn (a column apart at least, so
/// two labels never read as one).
fn overlaps(taken: &[(u16, u16)], x: u16, end: u16) -> bool {
    taken.iter().any(|(a, b)| x <= *b && *a <= end)
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
    let run = g.runs.get(s.timeline.run());
    let times: Vec<f64> = run
        .map(|r| {
            r.nodes
                .iter()
                .filter_map(|n| g.nodes[*n as usize].time())
                .collect()
        })
        .unwrap_or_default();
    let (lo, hi) = times
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        });
    let axis = run_axis(s, d);
    // The tree on the left, the axis on the right (one column spare: markers such as ⌛
    // are two cells wide); the title names the axis's visible window.
    let inner = area.inner(ratatui::layout::Margin::new(1, 1));
    let tree_w = (inner.width / 2).min(46);
    let axis_w = inner.width.saturating_sub(tree_w + 2);
    let date = if lo.is_finite() {
        format_ms(lo)
            .get(..10)
            .map(str::to_string)
            .unwrap_or_default()
    } else {
        String::new()
    };
    let span = |a: f64, b: f64| {
        if a.is_finite() && b.is_finite() {
            format!("{} → {}", time_of_day(a), time_of_day(b))
        } else {
            "no times recorded".to_string()
        }
    };
    // The date, the run's span, and the visible window when zoomed in.
    let showing = if s.timeline.zoom() > 1.0 {
        let a = axis.time_at(0, axis_w, s.timeline.zoom(), s.timeline.pan());
        let b = axis.time_at(
            axis_w.saturating_sub(1),
            axis_w,
            s.timeline.zoom(),
            s.timeline.pan(),
        );
        format!(" · showing {}", span(a, b))
    } else {
        String::new()
    };
    // Parts of the title in the order they are given up when the pane is narrow (the
    // zoom first, the run's span next): a part is shown whole or not at all.
    let run_name = super::compare::cell(&sanitize(run.map_or("", |r| r.id.as_str())), 40);
    let run_name = run_name.trim_end();
    let parts = [
        format!(" Timeline · {run_name}"),
        format!(" · {date} {}", span(lo, hi)),
        showing,
        format!(" · zoom {}×", s.timeline.zoom()),
    ];
    let room = usize::from(area.width).saturating_sub(8);
    let mut kept = [true; 4];
    let width = |kept: &[bool; 4]| -> usize {
        (parts.iter().zip(kept))
            .filter(|(_, k)| **k)
            .map(|(p, _)| p.chars().count())
            .sum::<usize>()
            + 1
    };
    for give_up in [3, 1, 2] {
        if width(&kept) <= room {
            break;
        }
        kept[give_up] = false;
    }
    let shown: String = (parts.iter().zip(kept))
        .filter(|(_, k)| *k)
        .map(|(p, _)| p.as_str())
        .collect();
    let title = format!("{shown} ");
    let mut block = pane_block(s, Pane::Timeline, Line::from(title));
    // One lane per emitter chain of the run (its rows lettered), named below.
    let lanes = s.timeline.lanes();
    if !lanes.is_empty() {
        let named: Vec<String> = (lanes.iter().enumerate())
            .map(|(i, &n)| {
                let c = d.analysis.graph.chain_name(&d.corpus, n);
                let head = c.head.rsplit_once('/').map_or(c.head.as_str(), |(_, h)| h);
                let signer = c
                    .signer
                    .as_deref()
                    .map(|k| format!(", {k}"))
                    .unwrap_or_default();
                format!("{} {}{}", lane_letter(i), sanitize(head), sanitize(&signer))
            })
            .collect();
        let legend = format!(" {} emitter chains: {} ", lanes.len(), named.join(" · "));
        let room = usize::from(area.width.saturating_sub(4));
        block = block.title_bottom(fit_line(Line::styled(legend, t.accent), room));
    }
    let proven = run.map(|r| proven_times(d, &r.nodes)).unwrap_or_default();
    if !proven.is_empty() {
        let legend = Line::styled(
            format!(" ▼ {} time(s) proven by a TSA ", proven.len()),
            t.good,
        );
        block = block.title_bottom(legend.right_aligned());
    }
    block.render(area, buf);
    if inner.height < 2 || inner.width < 20 {
        return;
    }
    let axis_x = inner.x + tree_w + 1;
    for y in inner.y..inner.y + inner.height {
        buf.set_string(inner.x + tree_w, y, "│", t.border);
    }
    // Axis row: compressed gaps (`⋯41s⋯`), then round tick labels where they do not
    // cover a gap's label.
    buf.set_string(inner.x, inner.y, "action", t.dim);
    let mut taken: Vec<(u16, u16)> = Vec::new();
    for (pos, idle) in &axis.gaps {
        let frac = (axis.frac_at(*pos) - s.timeline.pan()) * s.timeline.zoom();
        let x = (frac * f64::from(axis_w.saturating_sub(1))).round();
        if (0.0..f64::from(axis_w)).contains(&x) {
            let label = format!("⋯{}⋯", format_duration_ms(*idle));
            let len = label.chars().count() as u16;
            let x = (x as u16).min(axis_w.saturating_sub(len));
            if len <= axis_w && !overlaps(&taken, x, x + len) {
                buf.set_string(axis_x + x, inner.y, label, t.warn);
                taken.push((x, x + len));
            }
        }
    }
    // Each record's time an RFC 3161 token proves, on the axis row (tick labels keep
    // clear of them).
    for time in proven {
        if let Some(x) = axis.x(time, axis_w, s.timeline.zoom(), s.timeline.pan())
            && !overlaps(&taken, x, x + 1)
        {
            buf.set_string(axis_x + x, inner.y, "▼", t.good);
            taken.push((x, x + 1));
        }
    }
    let (step, mut ticks) = axis.ticks(axis_w, s.timeline.zoom(), s.timeline.pan(), 16);
    // The left edge is always labelled (precisely) unless a round tick is next to it.
    if ticks.first().is_none_or(|(_, x)| *x >= 16) {
        ticks.insert(
            0,
            (
                axis.time_at(0, axis_w, s.timeline.zoom(), s.timeline.pan()),
                0,
            ),
        );
    }
    for (time, x) in ticks {
        let label = format!("│{}", tick_label(time, step));
        let end = x + label.chars().count() as u16;
        // A label is shown whole or not at all: never one cut at the pane's edge.
        if end > axis_w || overlaps(&taken, x, end) {
            continue;
        }
        buf.set_string(axis_x + x, inner.y, label, t.dim);
        taken.push((x, end));
    }
    // A traced run keeps its last row for the telemetry lane.
    let capture = (d.capture.as_deref())
        .filter(|c| run.is_some_and(|r| c.run(&r.id).is_some()) && inner.height > 3);
    let body_h = (inner.height - 1) as usize - usize::from(capture.is_some());
    if let Some(c) = capture {
        let y = inner.y + inner.height - 1;
        let tree = Rect::new(inner.x, y, tree_w, 1);
        telemetry_lane(s, d, c, &axis, tree, axis_x, axis_w, buf);
    }
    let cursor = s.cursor_row().unwrap_or(0);
    let offset = window(cursor, s.timeline.rows().len(), body_h);
    let searching = !s.search.text().is_empty();
    for (i, row) in s
        .timeline
        .rows()
        .iter()
        .enumerate()
        .skip(offset)
        .take(body_h)
    {
        let y = inner.y + 1 + (i - offset) as u16;
        let selected = i == cursor && s.timeline.node() == Some(row.node);
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
        let dim = (searching && !s.search.hits().contains(&row.node)) || !s.passes(row.node);
        if selected {
            buf.set_style(Rect::new(inner.x, y, tree_w, 1), t.selected);
        } else if dim {
            buf.set_style(Rect::new(inner.x, y, tree_w, 1), t.dim);
        } else if searching {
            buf.set_style(Rect::new(inner.x, y, tree_w, 1), t.matched);
        }
    }
}

/// The `genTime` of each record of `nodes` whose RFC 3161 token is verified (only a
/// verified token proves a time; every other proof is a claim, not marked).
fn proven_times(d: &Data, nodes: &[NodeId]) -> Vec<f64> {
    let Some(report) = d.report.as_ref() else {
        return Vec::new();
    };
    let mut records: Vec<usize> = (nodes.iter())
        .map(|&n| d.analysis.graph.nodes[n as usize].record as usize)
        .collect();
    records.sort_unstable();
    records.dedup();
    (records.into_iter())
        .filter_map(|r| report.records.get(r))
        .map(|r| &r.authenticity)
        .filter(|a| a.proves_time())
        .filter_map(|a| a.timestamp_token.as_ref()?.gen_time_ms)
        .map(|ms| ms as f64)
        .collect()
}

/// The letter of lane `i` (`A`…`Z`, then its number).
fn lane_letter(i: usize) -> String {
    u8::try_from(i)
        .ok()
        .filter(|i| *i < 26)
        .map_or_else(|| (i + 1).to_string(), |i| char::from(b'A' + i).to_string())
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
    let mut head = Vec::new();
    if !s.timeline.lanes().is_empty() {
        head.push(Span::styled(
            format!("{} ", lane_letter(row.lane.into())),
            t.accent,
        ));
    }
    head.push(Span::raw(format!("{indent}{marker}{cross}")));
    head.extend(node_mark(s, row.node));
    let name = vec![
        Span::raw(show_id(a.id().unwrap_or("(no id)")).into_owned()),
        Span::raw(" "),
        Span::styled(sanitize(a.tool().unwrap_or("?")).into_owned(), t.accent),
    ];
    // The status glyphs keep their column: the name gives way (with `…`).
    let marks = glyphs(shown);
    let tail = if marks.is_empty() {
        Vec::new()
    } else {
        vec![Span::raw(" "), Span::styled(marks, flag_style(s, shown))]
    };
    let line = fit_name(head, name, tail, usize::from(tree.width));
    buf.set_line(tree.x, tree.y, &line, tree.width);
    // Lease window under the action, then the execution instant.
    if let Some(l) = d.analysis.leases.by_node.get(&row.node) {
        draw_window(s, axis, l, axis_x, axis_w, tree.y, buf);
    }
    let time = g.nodes[row.node as usize].time();
    let (zoom, pan) = (s.timeline.zoom(), s.timeline.pan());
    // Zoomed in, an action outside the visible window gets an arrow at the edge it is past.
    if let Some(when) = time
        && axis.x(when, axis_w, zoom, pan).is_none()
        && axis_w > 1
    {
        let at = axis.x_clamped(when, axis_w, zoom, pan);
        let (x, arrow) = if at < 0 {
            (axis_x, "←")
        } else {
            (axis_x + axis_w - 1, "→")
        };
        buf.set_string(x, tree.y, arrow, t.dim);
    }
    if let Some(time) = time
        && let Some(x) = axis.x(time, axis_w, zoom, pan)
    {
        let (glyph, style) = point_glyph(t, own);
        buf.set_string(axis_x + x, tree.y, glyph, style);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_fall_on_round_times_and_keep_their_spacing() {
        let axis = Axis::new(vec![1_000.0, 11_000.0]);
        let (step, ticks) = axis.ticks(100, 1.0, 0.0, 16);
        assert_eq!(step, 2000.0);
        assert!(!ticks.is_empty());
        for w in ticks.windows(2) {
            assert!(w[1].1 >= w[0].1 + 16, "{ticks:?}");
        }
        for (t, _) in &ticks {
            assert_eq!(t % step, 0.0, "{t} is a multiple of {step}");
        }
        assert_eq!(tick_label(1_780_000_002_000.0, 2000.0).len(), 8, "HH:MM:SS");
    }
}
