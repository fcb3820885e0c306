//! The screen, as pure functions of `&State`: header, navigator, timeline, detail tabs,
//! hint bar and overlays. Only the visible slice of each list is turned into cells.

use super::data::{Data, flag, glyphs};
use super::keymap::{Command, Scope};
use super::state::{
    CopyTarget, DetailTab, NavList, Overlay, Pane, Row, State, chain_status, nav_text, raw_lines,
};
use crate::analysis::authority::ChangeStatus;
use crate::analysis::comparability::BadgeState;
use crate::analysis::graph::NodeId;
use crate::analysis::lease::{LeaseSource, LeaseView};
use crate::model::json::Json;
use crate::model::text::{sanitize, show_id};
use crate::model::time::{format_duration_ms, format_ms};
use crate::verify::Report;
use crate::verify::chain::{ChainStatus, LinkState};
use crate::verify::{AuthStatus, CheckStatus};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget, Wrap};

/// Where each pane sits for a terminal size (also used for mouse hit-testing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Areas {
    pub header: Rect,
    /// None when the screen is narrow and the navigator folds into a tab bar.
    pub navigator: Option<Rect>,
    pub tab_bar: Option<Rect>,
    pub timeline: Rect,
    pub detail: Rect,
    pub hints: Rect,
}

/// Lays out the screen. Narrow screens (< 110 columns) fold the navigator into a
/// one-line tab bar; focusing the navigator then shows it in the timeline's place.
pub fn layout(area: Rect, state: &State) -> Areas {
    let [header, body, hints] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(4),
        Constraint::Length(1),
    ])
    .areas(area);
    let [top, detail] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(body);
    if area.width >= 110 {
        let [nav, timeline] =
            Layout::horizontal([Constraint::Length(42), Constraint::Min(20)]).areas(top);
        Areas {
            header,
            navigator: Some(nav),
            tab_bar: None,
            timeline,
            detail,
            hints,
        }
    } else {
        let [bar, rest] = Layout::vertical([Constraint::Length(1), Constraint::Min(2)]).areas(top);
        let nav_focused = state.focus == Pane::Navigator;
        Areas {
            header,
            navigator: nav_focused.then_some(rest),
            tab_bar: Some(bar),
            timeline: if nav_focused { Rect::default() } else { rest },
            detail,
            hints,
        }
    }
}

/// The smallest terminal (columns, rows) the explorer draws its panes in.
pub const MIN_SIZE: (u16, u16) = (60, 16);

/// The whole screen.
pub struct Screen<'a>(pub &'a State);

impl Widget for &Screen<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let s = self.0;
        buf.set_style(area, s.theme.base);
        if area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1 {
            Paragraph::new(format!(
                "terminal too small ({}×{}): aeplens needs at least {}×{}. Enlarge the window, or press q to quit.",
                area.width, area.height, MIN_SIZE.0, MIN_SIZE.1
            ))
            .style(s.theme.warn)
            .wrap(Wrap { trim: true })
            .render(area, buf);
            return;
        }
        let a = layout(area, s);
        header(s, a.header, buf);
        if let Some(bar) = a.tab_bar {
            tab_bar(s, bar, buf);
        }
        if let Some(nav) = a.navigator {
            navigator(s, nav, buf);
        }
        if a.timeline.area() > 0 {
            timeline(s, a.timeline, buf);
        }
        detail(s, a.detail, buf);
        hint_bar(s, a.hints, buf);
        match &s.overlay {
            Overlay::None => {}
            Overlay::Help => help(s, area, buf),
            Overlay::Copy(items, i) => copy_menu(s, items, *i, area, buf),
        }
    }
}

fn pane_block<'a>(s: &State, pane: Pane, title: Line<'a>) -> Block<'a> {
    let style = if s.focus == pane {
        s.theme.focus_border
    } else {
        s.theme.border
    };
    Block::default()
        .borders(Borders::ALL)
        .border_style(style)
        .title(title)
}

/// The header: what can be trusted first (load errors, unknown keys, verdict counts), so
/// it survives a narrow terminal; then findings, filter and banner.
fn header(s: &State, area: Rect, buf: &mut Buffer) {
    let t = &s.theme;
    let mut spans = vec![Span::styled(" aeplens", t.title)];
    if !s.errors.is_empty() {
        let n = s.errors.len();
        spans.push(Span::styled(
            format!(" ⚠ {n} load error{}", if n == 1 { "" } else { "s" }),
            t.bad,
        ));
    }
    match &s.data {
        None => spans.push(Span::styled(
            format!(" · {} {}…", s.progress.phase, progress_pct(s)),
            t.dim,
        )),
        Some(d) => {
            spans.push(Span::raw(format!(
                " · {} inputs · {} records ",
                d.corpus.inputs.len(),
                d.corpus.len()
            )));
            match &d.summary {
                Some(sum) => {
                    let a = &sum.authenticity;
                    spans.push(Span::styled(format!("✓{} ", a.valid), t.good));
                    let bad = a.invalid + a.binding_mismatch + a.unsupported_legacy;
                    spans.push(Span::styled(
                        format!("✗{} ", bad),
                        if bad > 0 { t.bad } else { t.dim },
                    ));
                    let unknown = a.unknown_key;
                    spans.push(Span::raw(format!(
                        "○{} ",
                        (a.unsigned + a.not_checked).saturating_sub(unknown)
                    )));
                    if unknown > 0 {
                        spans.push(Span::styled(
                            format!("○{unknown} unknown key — pass --keys "),
                            t.warn,
                        ));
                    }
                    // Chain paths of the link graph: ✓ only for intact; vacuous ones ○.
                    let count = |k: &str| sum.chain_paths.get(k).copied().unwrap_or(0);
                    spans.push(Span::raw(format!(
                        "· chains ✓{} ○{} ",
                        count("intact"),
                        count("not-present")
                    )));
                    let (named, total) = &d.chain_trouble;
                    if *total > 0 {
                        let more = total.saturating_sub(named.len());
                        let more = if more > 0 {
                            format!(" +{more} more")
                        } else {
                            String::new()
                        };
                        spans.push(Span::styled(
                            format!("✗{total} ({}{more}) ", named.join(", ")),
                            t.bad,
                        ));
                    }
                }
                None => spans.push(Span::styled(
                    format!("{} {} ", s.progress.phase, progress_pct(s)),
                    t.warn,
                )),
            }
            let [high, medium, low] = d.finding_counts;
            spans.push(Span::raw("· findings "));
            spans.push(Span::styled(format!("▲{high} "), t.bad));
            spans.push(Span::styled(format!("■{medium} "), t.warn));
            spans.push(Span::raw(format!("·{low} ")));
            let filter = if s.filter_pass.is_some() {
                sanitize(&s.filter.text).into_owned()
            } else {
                "—".into()
            };
            spans.push(Span::styled(format!("· filter: {filter}"), t.dim));
        }
    }
    if let Some(b) = &s.banner {
        spans.push(Span::styled(format!("  {b}"), t.accent));
    }
    Line::from(spans).render(area, buf);
}

fn progress_pct(s: &State) -> String {
    (s.progress.done * 100)
        .checked_div(s.progress.total)
        .map(|p| format!("{p}%"))
        .unwrap_or_default()
}

fn tab_bar(s: &State, area: Rect, buf: &mut Buffer) {
    let mut spans = Vec::new();
    for l in NavList::ALL {
        let style = if l == s.nav_list {
            s.theme.title
        } else {
            s.theme.dim
        };
        spans.push(Span::styled(format!(" {} ", l.title()), style));
        spans.push(Span::styled("│", s.theme.border));
    }
    if let Some(item) = s.nav_items.get(s.nav_cursor) {
        spans.push(Span::raw(format!(
            " {} {}",
            glyphs(item.flags),
            nav_text(s, item)
        )));
    }
    spans.push(Span::styled("  (Tab: list)", s.theme.dim));
    Line::from(spans).render(area, buf);
}

fn navigator(s: &State, area: Rect, buf: &mut Buffer) {
    let mut title = vec![Span::raw(" ")];
    for (i, l) in NavList::ALL.iter().enumerate() {
        if i > 0 {
            title.push(Span::styled(" │ ", s.theme.border));
        }
        let style = if *l == s.nav_list {
            s.theme.title
        } else {
            s.theme.dim
        };
        title.push(Span::styled(l.title(), style));
    }
    title.push(Span::raw(" "));
    let block = pane_block(s, Pane::Navigator, Line::from(title));
    let inner = block.inner(area);
    block.render(area, buf);
    if s.data.is_none() {
        Paragraph::new("loading…")
            .style(s.theme.dim)
            .render(inner, buf);
        return;
    }
    if s.nav_items.is_empty() {
        Paragraph::new("nothing here (filter?)")
            .style(s.theme.dim)
            .render(inner, buf);
        return;
    }
    let h = inner.height as usize;
    let offset = window(s.nav_cursor, s.nav_items.len(), h);
    for (i, item) in s.nav_items.iter().enumerate().skip(offset).take(h) {
        let y = inner.y + (i - offset) as u16;
        let marker = if item.foldable {
            if item.folded { "▸ " } else { "▾ " }
        } else {
            "  "
        };
        let style = if i == s.nav_cursor {
            s.theme.selected
        } else {
            s.theme.base
        };
        let g = glyphs(item.flags);
        let line = Line::from(vec![
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
            Span::raw(nav_text(s, item)),
        ]);
        buf.set_style(Rect::new(inner.x, y, inner.width, 1), style);
        buf.set_line(inner.x, y, &line, inner.width);
    }
}

/// The first visible index so that `cursor` stays in a window of `height` rows.
pub fn window(cursor: usize, len: usize, height: usize) -> usize {
    if height == 0 || len <= height {
        return 0;
    }
    cursor.saturating_sub(height / 2).min(len - height)
}

fn flag_style(s: &State, bits: u16) -> Style {
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
    fn x_clamped(&self, t: f64, width: u16, zoom: f64, pan: f64) -> i32 {
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

fn time_of_day(ms: f64) -> String {
    let full = format_ms(ms);
    full.get(11..23).map(str::to_string).unwrap_or(full)
}

fn timeline(s: &State, area: Rect, buf: &mut Buffer) {
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
fn timeline_row(
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

fn draw_window(s: &State, axis: &Axis, l: &LeaseView, x0: u16, w: u16, y: u16, buf: &mut Buffer) {
    let (start, end, open) = match l.source {
        LeaseSource::Inferred => (l.first_use_ms, l.last_use_ms, true),
        _ => (l.granted_at_ms.or(l.first_use_ms), l.expires_at_ms, false),
    };
    let (Some(start), Some(end)) = (start, end) else {
        return;
    };
    let a = axis.x_clamped(start, w, s.zoom, s.pan);
    let b = axis.x_clamped(end, w, s.zoom, s.pan);
    let fill = if open { "┄" } else { "═" };
    for x in a.max(0)..=b.min(i32::from(w) - 1) {
        let ch = if !open && x == a {
            "["
        } else if !open && x == b {
            ")"
        } else {
            fill
        };
        buf.set_string(x0 + x as u16, y, ch, s.theme.dim);
    }
}

fn detail(s: &State, area: Rect, buf: &mut Buffer) {
    let t = &s.theme;
    let (Some(d), Some(node)) = (s.data.as_ref(), s.node) else {
        let block = pane_block(s, Pane::Detail, Line::from(" Detail "));
        let inner = block.inner(area);
        block.render(area, buf);
        Paragraph::new("no action selected")
            .style(t.dim)
            .render(inner, buf);
        return;
    };
    let g = &d.analysis.graph;
    let (_, a) = match g.action(&d.corpus, node) {
        Some(x) => x,
        None => return,
    };
    let mut title = vec![Span::styled(
        format!(
            " {} {} · {} ",
            sanitize(a.id().unwrap_or("(no id)")),
            sanitize(a.tool().unwrap_or("?")),
            sanitize(&g.runs[d.run_of(node)].id)
        ),
        t.title,
    )];
    for (i, tab) in DetailTab::ALL.iter().enumerate() {
        let style = if *tab == s.tab { t.title } else { t.dim };
        title.push(Span::styled("│", t.border));
        title.push(Span::styled(format!(" {} {} ", i + 1, tab.title()), style));
    }
    let block = pane_block(s, Pane::Detail, Line::from(title));
    let inner = block.inner(area);
    block.render(area, buf);
    // Findings come from the explorer's index (the Record tab), not a scan of all of them.
    let Some(report) = d.analysis.show(&d.corpus, node, &[]) else {
        return;
    };
    if s.tab == DetailTab::Authority && inner.width >= 60 {
        // What changed comes first: it is the question the reviewer is asking.
        let changed_h = (report.authority.changed.len() as u16 + 1).min(inner.height / 2);
        let [top, bottom] =
            Layout::vertical([Constraint::Length(changed_h), Constraint::Min(2)]).areas(inner);
        let mut lines = vec![Line::styled(
            "CHANGED BETWEEN APPROVAL AND EXECUTION",
            t.title,
        )];
        lines.extend(
            report
                .authority
                .changed
                .iter()
                .map(|c| change_line(s, c.what, c.status, &c.summary.to_string())),
        );
        Paragraph::new(lines).render(top, buf);
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .spacing(2)
                .areas(bottom);
        Paragraph::new(field_lines(s, "AVAILABLE", &report.authority.available()))
            .wrap(Wrap { trim: false })
            .scroll((s.detail_scroll as u16, 0))
            .render(left, buf);
        Paragraph::new(field_lines(s, "EXERCISED", &report.authority.exercised()))
            .wrap(Wrap { trim: false })
            .scroll((s.detail_scroll as u16, 0))
            .render(right, buf);
        return;
    }
    let lines = match s.tab {
        DetailTab::Authority => {
            let mut l = field_lines(s, "AVAILABLE", &report.authority.available());
            l.extend(field_lines(s, "EXERCISED", &report.authority.exercised()));
            l.push(Line::styled("CHANGED", t.title));
            l.extend(
                report
                    .authority
                    .changed
                    .iter()
                    .map(|c| change_line(s, c.what, c.status, &c.summary.to_string())),
            );
            l
        }
        DetailTab::Drift => drift_lines(s, &report),
        DetailTab::Lease => lease_lines(s, d, report.lease, inner.width),
        DetailTab::Digests => digest_lines(s, d, &report),
        DetailTab::Record => record_lines(s, d, node),
        DetailTab::Raw => {
            let raw = raw_lines(s);
            let cursor = s.raw_cursor.min(raw.len().saturating_sub(1));
            let h = inner.height as usize;
            let offset = window(cursor, raw.len(), h);
            for (i, l) in raw.iter().enumerate().skip(offset).take(h) {
                let y = inner.y + (i - offset) as u16;
                let marker = if l.foldable {
                    if l.folded { "▸ " } else { "▾ " }
                } else {
                    "  "
                };
                let text = format!("{}{marker}{}", "  ".repeat(l.depth.min(12)), l.text);
                let style = if i == cursor && s.focus == Pane::Detail {
                    t.selected
                } else {
                    t.base
                };
                buf.set_stringn(inner.x, y, text, inner.width as usize, style);
            }
            if s.show_canonical {
                buf.set_string(
                    inner.right().saturating_sub(24),
                    inner.y,
                    " canonical bytes (C1) ",
                    t.warn,
                );
            }
            return;
        }
    };
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((s.detail_scroll as u16, 0))
        .render(inner, buf);
}

fn value_text(v: &Json) -> String {
    match v {
        Json::String(s) => abbreviate(&sanitize(&s.lossy())),
        other => abbreviate(&sanitize(&serde_json::to_string(other).unwrap_or_default())),
    }
}

/// Long hex digests shortened to `sha256:917aef820265…` (the full value is in the Raw
/// tab and the copy menu).
pub fn abbreviate(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.len() >= 40 {
            out.push_str(&run[..12]);
            out.push('…');
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_ascii_hexdigit() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// A titled list of the recorded fields, then one line naming those not recorded.
fn field_lines<'a>(
    s: &State,
    title: &str,
    fields: &[crate::analysis::authority::Field<'_>],
) -> Vec<Line<'a>> {
    let mut lines = vec![Line::styled(title.to_string(), s.theme.title)];
    lines.extend(
        fields
            .iter()
            .filter(|f| f.value.is_some())
            .map(|f| field_line(s, f)),
    );
    let missing: Vec<&str> = fields
        .iter()
        .filter(|f| f.value.is_none())
        .map(|f| f.name)
        .collect();
    if !missing.is_empty() {
        lines.push(Line::styled(
            format!("not recorded: {}", missing.join(", ")),
            s.theme.dim,
        ));
    }
    lines
}

fn field_line<'a>(s: &State, f: &crate::analysis::authority::Field<'_>) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!("{:<22}", f.name), s.theme.accent),
        Span::raw(
            f.value
                .map(value_text)
                .unwrap_or_else(|| "not recorded".into()),
        ),
        Span::styled(
            if f.dialect == "all" {
                String::new()
            } else {
                format!(" [{}]", f.dialect)
            },
            s.theme.dim,
        ),
    ])
}

fn change_line<'a>(s: &State, what: &str, status: ChangeStatus, summary: &str) -> Line<'a> {
    let (glyph, style) = match status {
        ChangeStatus::Changed => ("≠", s.theme.bad),
        ChangeStatus::Unchanged => ("=", s.theme.good),
        ChangeStatus::Unknown => ("?", s.theme.warn),
        ChangeStatus::NotApplicable => ("·", s.theme.dim),
    };
    Line::from(vec![
        Span::styled(format!("{glyph} {what:<20}"), style),
        Span::raw(abbreviate(&sanitize(summary))),
    ])
}

fn drift_lines<'a>(s: &State, r: &crate::analysis::ActionReport<'_>) -> Vec<Line<'a>> {
    let t = &s.theme;
    let d = &r.drift;
    let result = d.result.name();
    let style = match result {
        "drifted" => t.bad,
        "matched" => t.good,
        _ => t.warn,
    };
    let mut lines = vec![
        Line::from(vec![
            Span::styled("result            ", t.accent),
            Span::styled(
                format!(
                    "{} {result}",
                    if result == "drifted" {
                        "≠"
                    } else if result == "matched" {
                        "="
                    } else {
                        "?"
                    }
                ),
                style,
            ),
            Span::styled(
                format!("  [{}]", d.dialect.unwrap_or("no drift evidence")),
                t.dim,
            ),
        ]),
        kv(
            s,
            "approved digest",
            d.approved_digest.unwrap_or("not recorded"),
        ),
        kv(
            s,
            "observed digest",
            d.observed_digest.unwrap_or("not recorded"),
        ),
        kv(
            s,
            "equality version",
            d.equality_version.unwrap_or("not recorded"),
        ),
        kv(
            s,
            "bound to",
            d.bound_to.unwrap_or("nothing (no approval_or_lease_id)"),
        ),
        kv(s, "binding", d.binding.name()),
    ];
    if let Some(e) = d.expected_binding {
        lines.push(kv(s, "expected artifact", e));
    }
    if let Some(reason) = d.reason {
        lines.push(kv(s, "reason", reason));
    }
    if let Some(i) = &d.interpretation {
        lines.push(Line::styled(
            format!("aeplens interpretation: {}", sanitize(i)),
            t.dim,
        ));
    }
    lines
}

fn kv<'a>(s: &State, k: &str, v: &str) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!("{k:<18}"), s.theme.accent),
        Span::raw(sanitize(v).into_owned()),
    ])
}

fn lease_lines<'a>(s: &State, d: &Data, lease: Option<&LeaseView>, width: u16) -> Vec<Line<'a>> {
    let t = &s.theme;
    let Some(l) = lease else {
        return vec![Line::styled("not under a lease (no scope_lease_id)", t.dim)];
    };
    let ms = |v: Option<f64>| v.map(format_ms).unwrap_or_else(|| "unknown".into());
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
            .filter_map(|n| d.analysis.graph.nodes[*n as usize].time)
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
        let (start, end, open) = match l.source {
            LeaseSource::Inferred => (l.first_use_ms, l.last_use_ms, true),
            _ => (l.granted_at_ms, l.expires_at_ms, false),
        };
        if let (Some(a), Some(b)) = (start, end) {
            let (a, b) = (
                axis.x_clamped(a, w, 1.0, 0.0),
                axis.x_clamped(b, w, 1.0, 0.0),
            );
            for x in a.max(0)..=b.min(i32::from(w) - 1) {
                bar[x as usize] = if open {
                    '┄'
                } else if x == a {
                    '['
                } else if x == b {
                    ')'
                } else {
                    '═'
                };
            }
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
        let budget = summary
            .max_invocations
            .map(|m| format!("{}/{m} invocations", summary.nodes.len()))
            .unwrap_or_else(|| format!("{} invocations, no budget recorded", summary.nodes.len()));
        lines.push(Line::styled(budget, t.dim));
        for (k, n) in summary.nodes.iter().enumerate() {
            let v = d.analysis.leases.by_node.get(n);
            let id = d
                .analysis
                .graph
                .action(&d.corpus, *n)
                .and_then(|(_, a)| a.id())
                .unwrap_or("?");
            let verdict = v.map(|v| v.verdict.name()).unwrap_or("?");
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
    lines
}

fn digest_lines<'a>(s: &State, d: &Data, r: &crate::analysis::ActionReport<'_>) -> Vec<Line<'a>> {
    let t = &s.theme;
    let mut lines = Vec::new();
    if r.digests.is_empty() {
        lines.push(Line::styled("no state digests recorded", t.dim));
    }
    for dv in &r.digests {
        let c = dv.comparability;
        let (glyph, style) = match c.state {
            BadgeState::Comparable => ("◉", t.good),
            BadgeState::Weaker => ("◐", t.warn),
            BadgeState::NotComparable => ("≉", t.bad),
        };
        let why = c
            .assumption
            .as_deref()
            .or(c.reason.as_deref())
            .unwrap_or("");
        lines.push(Line::from(vec![
            Span::styled(format!("{:<5}", dv.which), t.accent),
            Span::raw(format!("{} ", value_text(dv.digest))),
            Span::raw(format!("{} ", sanitize(dv.kind.unwrap_or("no kind")))),
            Span::styled(format!("{glyph} {}", c.state.name()), style),
            Span::raw(if why.is_empty() {
                String::new()
            } else {
                format!(": {}", sanitize(why))
            }),
            Span::styled(
                if c.interpretation {
                    " (aeplens interpretation)"
                } else {
                    ""
                },
                t.dim,
            ),
        ]));
    }
    if let Some(cov) = r.envelope.target_boundary.as_ref() {
        let ids: Vec<String> = cov
            .identity
            .iter()
            .map(|(k, v)| format!("{k}={}", value_text(v)))
            .collect();
        lines.push(kv(s, "identity", &ids.join(" · ")));
    }
    if let Some(p) = &r.pre_post {
        lines.push(kv(
            s,
            "pre → post",
            &format!(
                "{}{}",
                p.verdict,
                p.note
                    .as_deref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            ),
        ));
    }
    lines.push(Line::styled(
        "STATE PAIRS OF THE RUN (post → next pre)".to_string(),
        t.title,
    ));
    let g = &d.analysis.graph;
    let id = |n: NodeId| {
        g.action(&d.corpus, n)
            .and_then(|(_, a)| a.id())
            .map(|s| sanitize(s).into_owned())
            .unwrap_or_default()
    };
    let run = d.run_of(s.node.unwrap_or(0));
    let gaps: Vec<_> = d
        .analysis
        .gaps
        .iter()
        .filter(|gp| d.run_of(gp.from) == run)
        .collect();
    if gaps.is_empty() {
        lines.push(Line::styled(
            "no state gap between recorded actions of this run",
            t.dim,
        ));
    }
    for gp in gaps {
        lines.push(Line::styled(
            format!(
                "▲ state gap: {} post {} ≠ {} pre {}",
                id(gp.from),
                abbreviate(&sanitize(&gp.post)),
                id(gp.to),
                abbreviate(&sanitize(&gp.pre))
            ),
            t.bad,
        ));
    }
    lines
}

fn record_lines<'a>(s: &State, d: &Data, node: NodeId) -> Vec<Line<'a>> {
    let t = &s.theme;
    let n = &d.analysis.graph.nodes[node as usize];
    let record = d.corpus.record(n.record as usize);
    let mut lines = vec![
        kv(s, "source", &record.source.to_string()),
        kv(
            s,
            "copies",
            &format!("{} record(s) hold this action", n.copies),
        ),
        kv(
            s,
            "canonical sha256",
            &d.analysis
                .hashes
                .get(n.record as usize)
                .cloned()
                .unwrap_or_default(),
        ),
    ];
    let Some(report) = d.report.as_ref() else {
        lines.push(Line::styled(
            "verifying… (the five axes appear when done)",
            t.warn,
        ));
        return lines;
    };
    let Some(r) = report.records.get(n.record as usize) else {
        return lines;
    };
    // An axis that was not evaluated carries no status (the verifier-result contract).
    // ✓ only for a positive result: a vacuous chain or an unsigned record is ○.
    let axis = |name: &str, status: Option<(&str, Tone)>| {
        let (st, tone) = status.unwrap_or(("not evaluated", Tone::Vacuous));
        let (g, style) = match tone {
            Tone::Good => ("✓", t.good),
            Tone::Vacuous => ("○", t.dim),
            Tone::Doubt => ("~", t.warn),
            Tone::Bad => ("✗", t.bad),
        };
        Line::from(vec![
            Span::styled(format!("{name:<18}"), t.accent),
            Span::styled(format!("{g} {st}"), style),
        ])
    };
    let check = |c: CheckStatus| {
        let tone = if c == CheckStatus::Pass {
            Tone::Good
        } else {
            Tone::Bad
        };
        (c.name(), tone)
    };
    lines.push(axis("structural", r.structural.status.map(check)));
    lines.push(axis("semantic", r.semantic.status.map(check)));
    lines.push(axis(
        "authenticity",
        r.authenticity.status.map(|a| {
            let tone = match a {
                AuthStatus::Valid => Tone::Good,
                AuthStatus::Unsigned => Tone::Vacuous,
                _ => Tone::Bad,
            };
            (a.name(), tone)
        }),
    ));
    lines.push(axis(
        "chain",
        r.chain.status.map(|c| {
            let tone = match c {
                ChainStatus::Intact => Tone::Good,
                ChainStatus::NotPresent => Tone::Vacuous,
                ChainStatus::Partial | ChainStatus::Orphaned => Tone::Doubt,
                ChainStatus::Broken => Tone::Bad,
            };
            (c.name(), tone)
        }),
    ));
    lines.push(axis("capture", None));
    let a = &r.authenticity;
    if let Some(c) = a.construction {
        lines.push(kv(s, "construction", c));
    }
    if let Some(k) = &a.key_id {
        lines.push(kv(s, "key", k));
    }
    if let Some(reason) = &a.reason {
        lines.push(kv(s, "why", reason));
    }
    for f in &a.failures {
        lines.push(Line::styled(format!("  ✗ {}", sanitize(f)), t.bad));
    }
    if let Some(link) = &r.chain.link {
        lines.push(kv(s, "chain link", link.name()));
    }
    let violations = r.structural.violations.len() + r.semantic.violations.len();
    if violations > 0 {
        lines.push(Line::styled(
            format!("THIS RECORD · {violations} violation(s)"),
            t.title,
        ));
    }
    for v in &r.structural.violations {
        lines.push(Line::styled(
            format!(
                "  structural {}: {}",
                sanitize(&v.path),
                sanitize(&v.message)
            ),
            t.warn,
        ));
    }
    // Each violation names the action it concerns: never read as this action's own.
    let this_id = d
        .analysis
        .graph
        .action(&d.corpus, node)
        .and_then(|(_, a)| a.id());
    for v in &r.semantic.violations {
        let on = match v.action_id.as_deref() {
            Some(id) if Some(id) == this_id => "this action".to_string(),
            Some(id) => format!("on {}", show_id(id)),
            None => "the record".to_string(),
        };
        lines.push(Line::styled(
            format!("  {} [{on}] {}", v.rule, sanitize(&v.message)),
            t.warn,
        ));
    }
    lines.push(kv(s, "record chain", &chain_status(d, d.run_of(node))));
    lines.push(Line::styled("FINDINGS ON THIS ACTION".to_string(), t.title));
    let mut any = false;
    for f in d.findings_of(node) {
        any = true;
        let (mark, style) = match f.severity {
            crate::model::finding::Severity::High => ("▲", t.bad),
            crate::model::finding::Severity::Medium => ("■", t.warn),
            _ => ("·", t.base),
        };
        lines.push(Line::styled(
            format!("{mark} {} {}", f.id, abbreviate(&sanitize(&f.message))),
            style,
        ));
    }
    if !any {
        lines.push(Line::styled("none", t.dim));
    }
    lines.extend(file_view(s, d, report, n.record as usize));
    lines
}

fn hint_bar(s: &State, area: Rect, buf: &mut Buffer) {
    let t = &s.theme;
    if s.search.active || s.filter.active {
        let (label, text) = if s.search.active {
            ("/", &s.search.text)
        } else {
            ("filter: ", &s.filter.text)
        };
        let extra = if s.search.active {
            format!(
                "  ({} matches in this run · Enter: all runs · Esc: cancel)",
                s.search_hits.len()
            )
        } else {
            "  (tool: decision: class: lease: finding: run: · ! negates · Enter applies · Esc cancels)".into()
        };
        Line::from(vec![
            Span::styled(label, t.hint_key),
            Span::raw(sanitize(text).into_owned()),
            Span::styled("█", t.accent),
            Span::styled(extra, t.dim),
        ])
        .render(area, buf);
        return;
    }
    if let Some(m) = s.message.as_ref().or(s.filter_error.as_ref()) {
        Line::styled(format!(" {}", sanitize(m)), t.warn).render(area, buf);
        return;
    }
    let scope = match s.focus {
        Pane::Navigator => Scope::Navigator,
        Pane::Timeline => Scope::Timeline,
        Pane::Detail => Scope::Detail,
    };
    // `? help · q quit` is pinned at the right at every width; the pane's hints fill the
    // rest and are cut, never it.
    let mut pinned = vec![Span::raw(" ")];
    for (command, what) in [(Command::Help, "help"), (Command::Quit, "quit")] {
        if let Some(k) = s.keymap.key_for(command) {
            if pinned.len() > 1 {
                pinned.push(Span::styled(" · ", t.dim));
            }
            pinned.push(Span::styled(k, t.hint_key));
            pinned.push(Span::raw(format!(" {what}")));
        }
    }
    pinned.push(Span::raw(" "));
    let pinned = Line::from(pinned);
    let pinned_width = (pinned.width() as u16).min(area.width);
    let [hints_area, pinned_area] =
        Layout::horizontal([Constraint::Min(0), Constraint::Length(pinned_width)]).areas(area);
    let mut spans = vec![Span::raw(" ")];
    for (i, (k, h)) in s.keymap.hints(scope).into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", t.dim));
        }
        spans.push(Span::styled(k, t.hint_key));
        spans.push(Span::raw(format!(" {h}")));
    }
    Line::from(spans).render(hints_area, buf);
    pinned.render(pinned_area, buf);
}

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// Records shown either side of the selected one in the file view.
const FILE_VIEW_AROUND: usize = 4;

/// The selected record's file in order (a window around it): each record's link state,
/// the expected and actual `prev_record_hash` where a link breaks, and the link-graph
/// path the record lies on.
fn file_view<'a>(s: &State, d: &Data, report: &Report, flat: usize) -> Vec<Line<'a>> {
    let t = &s.theme;
    let corpus = &d.corpus;
    let input = &corpus.inputs[corpus.input_of(flat)];
    let record = corpus.record(flat);
    let start = flat - record.source.index;
    let mut lines = vec![Line::styled(
        format!(
            "FILE {} · {} records · file order {}",
            sanitize(&input.path),
            input.records.len(),
            report
                .chains
                .get(corpus.input_of(flat))
                .and_then(|c| c.status)
                .map_or("not-checked", ChainStatus::name)
        ),
        t.title,
    )];
    if let Some(p) = d
        .path_of
        .get(flat)
        .and_then(|&p| report.links.paths.get(p as usize))
    {
        let at = |r: &crate::verify::links::RecordAt| {
            let file = std::path::Path::new(&r.path)
                .file_name()
                .map_or_else(|| r.path.clone(), |f| f.to_string_lossy().into_owned());
            format!("{}:{}", sanitize(&file), r.line)
        };
        lines.push(kv(
            s,
            "chain path",
            &format!(
                "{} · {} record{} · {} → {}{}",
                p.status.name(),
                p.records.len(),
                if p.records.len() == 1 { "" } else { "s" },
                p.records.first().map(at).unwrap_or_default(),
                p.records.last().map(at).unwrap_or_default(),
                if p.files.len() > 1 {
                    format!(" · across {} files", p.files.len())
                } else {
                    String::new()
                }
            ),
        ));
    }
    let index = record.source.index;
    let from = index.saturating_sub(FILE_VIEW_AROUND);
    let to = (index + FILE_VIEW_AROUND + 1).min(input.records.len());
    for i in from..to {
        let r = &input.records[i];
        let Some(result) = report.records.get(start + i) else {
            continue;
        };
        let link = result.chain.link.map_or("", LinkState::name);
        let marker = if i == index { "▸" } else { " " };
        let style = match result.chain.link {
            Some(LinkState::Mismatch | LinkState::Dangling) => t.bad,
            _ if i == index => t.accent,
            _ => t.base,
        };
        lines.push(Line::styled(
            format!(
                "{marker} #{i:<4} line {:<6} {:<9} {}",
                r.source.line,
                link,
                sanitize(r.run_id().unwrap_or("(no run_id)"))
            ),
            style,
        ));
        if matches!(
            result.chain.link,
            Some(LinkState::Mismatch | LinkState::Dangling)
        ) {
            let expected = i
                .checked_sub(1)
                .and_then(|p| report.records.get(start + p))
                .map_or("(no record before it in this file)", |p| {
                    p.canonical_sha256.as_str()
                });
            let actual = match r.link() {
                crate::model::Link::Hash(h) => h.to_string(),
                crate::model::Link::Malformed => "(not a string)".into(),
                _ => String::new(),
            };
            lines.push(Line::styled(
                format!("      expected {}", sanitize(expected)),
                t.dim,
            ));
            lines.push(Line::styled(
                format!("      actual   {}", sanitize(&actual)),
                t.bad,
            ));
        }
    }
    if to < input.records.len() {
        lines.push(Line::styled(
            format!("  … {} more records", input.records.len() - to),
            t.dim,
        ));
    }
    lines
}

/// Every glyph and its one meaning.
pub const GLYPH_LEGEND: [&str; 4] = [
    "glyphs: ⊘ denied (the first of a tree starts a chain)  ↻ re-approved after a deny  ≠ drift  ‼ executed despite a deny",
    "        ● executed, success  ◆ executed, failure  ◌ no outcome recorded  ✗ invalid signature or failed check",
    "        ⧗ under a lease  ⌛ outside its lease  ◉ comparable  ◐ weaker assumption  ≉ not comparable",
    "        ✓ verified  ○ nothing to check (unsigned, no link, unknown key)  ~ incomplete  ▲■· findings  ? missing parent  ⋯ idle",
];

fn help(s: &State, area: Rect, buf: &mut Buffer) {
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

fn copy_menu(s: &State, items: &[CopyTarget], cursor: usize, area: Rect, buf: &mut Buffer) {
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

/// How much trust a verification status carries, for its glyph.
#[derive(Clone, Copy)]
enum Tone {
    /// Positively verified (✓).
    Good,
    /// Nothing to check: never drawn as ✓ (○).
    Vacuous,
    /// Consistent but incomplete (~).
    Doubt,
    /// Failed (✗).
    Bad,
}
