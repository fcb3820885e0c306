//! The detail pane: its tab bar and the Authority, Drift and Digests tabs.

use super::*;

pub(super) fn detail(s: &State, area: Rect, buf: &mut Buffer) {
    let t = &s.theme;
    if let (Some(d), Some(i)) = (s.data.as_ref(), described(s)) {
        finding_detail(s, d, i, area, buf);
        return;
    }
    if let (Some(d), Some(g)) = (s.data.as_ref(), s.timeline.gap()) {
        gap_detail(s, d, g, area, buf);
        return;
    }
    let (Some(d), Some(node)) = (s.data.as_ref(), s.timeline.node()) else {
        let block = pane_block(s, Pane::Detail, Line::from(" Detail "));
        let inner = block.inner(area);
        block.render(area, buf);
        Paragraph::new("no action selected")
            .style(t.dim)
            .render(inner, buf);
        return;
    };
    let (title, _) = detail_title(s, d, node, area.width);
    let block = pane_block(s, Pane::Detail, title);
    let mut inner = block.inner(area);
    block.render(area, buf);
    // The reviewer's mark heads the pane, whatever the tab.
    let marks = mark_lines(s, d, node);
    if !marks.is_empty() && inner.height > marks.len() as u16 + 2 {
        let h = marks.len() as u16;
        Paragraph::new(marks).render(Rect { height: h, ..inner }, buf);
        inner.y += h;
        inner.height -= h;
    }
    // A record let go is read again from its line for the pane: if the line is not what
    // was verified any more, nothing of it is shown as if it were.
    let record = d
        .corpus
        .record(d.analysis.graph.nodes[node as usize].record as usize);
    record.json();
    if let Some(e) = record.reread_error() {
        let text = format!(
            "⚠ {}: {} — nothing of this record is shown: the evidence changed after it was \
             verified. Open it again to verify it as it is now.",
            sanitize(&record.source.to_string()),
            sanitize(e)
        );
        Paragraph::new(text)
            .style(t.bad)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
        return;
    }
    // Findings come from the explorer's index (the Record tab), not a scan of all of them.
    let Some(report) = d.analysis.show(
        &d.corpus,
        node,
        &[],
        d.report.as_ref().map(|r| &r.records[..]),
    ) else {
        return;
    };
    if s.detail.tab() == DetailTab::Authority {
        authority(s, d, node, &report, inner, buf);
        return;
    }
    let lines = match s.detail.tab() {
        DetailTab::Authority => Vec::new(),
        DetailTab::Drift => drift_lines(s, &report),
        DetailTab::Lease => {
            let receipt = s.timeline.node().and_then(|n| d.analysis.leases.receipt(n));
            lease_lines(s, d, report.lease, receipt, inner.width)
        }
        DetailTab::Digests => digest_lines(s, d, &report),
        DetailTab::Record => record_lines(s, d, node),
        DetailTab::Raw => {
            let raw = raw_lines(s);
            let cursor = s.detail.raw_cursor().min(raw.len().saturating_sub(1));
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
            if s.detail.canonical() {
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
    let pane = Paragraph::new(lines).wrap(Wrap { trim: false });
    // A pane taller than its room says so on its bottom border: what lies below is never
    // missed.
    let below = pane
        .line_count(inner.width)
        .saturating_sub(s.detail.scroll() + usize::from(inner.height));
    if below > 0 {
        let label = format!(" ↓ {below} more line{} ", if below == 1 { "" } else { "s" });
        let x = area
            .right()
            .saturating_sub(label.chars().count() as u16 + 2);
        buf.set_string(
            x.max(area.x),
            area.bottom().saturating_sub(1),
            label,
            t.warn,
        );
    }
    pane.scroll((s.detail.scroll() as u16, 0))
        .render(inner, buf);
}

/// Columns of a field name; values (and their continuation lines) start after it.
const NAME_W: usize = 22;

/// Below this width the Authority tab stacks AVAILABLE over EXERCISED.
const TWO_COLUMNS_FROM: u16 = 100;

/// The Authority tab: the action's findings first, then what changed between approval
/// and execution, then what was available and what was exercised — side by side from
/// [`TWO_COLUMNS_FROM`] columns with their headers kept in view while the fields scroll,
/// stacked below that.
fn authority(
    s: &State,
    d: &Data,
    node: NodeId,
    report: &crate::analysis::ActionReport<'_>,
    inner: Rect,
    buf: &mut Buffer,
) {
    let t = &s.theme;
    let mut top: Vec<Line> = Vec::new();
    let findings: Vec<&crate::model::finding::Finding> = d.findings_of(node).collect();
    if !findings.is_empty() {
        top.push(Line::styled(
            format!("FINDINGS ON THIS ACTION ({})", findings.len()),
            t.title,
        ));
        top.extend(findings.iter().take(3).map(|f| finding_line(s, f)));
        if findings.len() > 3 {
            top.push(Line::styled(
                format!("  … {} more in the Record tab (5)", findings.len() - 3),
                t.dim,
            ));
        }
    }
    top.push(Line::styled(
        "CHANGED BETWEEN APPROVAL AND EXECUTION",
        t.title,
    ));
    let w = usize::from(inner.width);
    for c in &report.authority.changed {
        top.extend(change_line(s, c.what, c.status, &c.summary.to_string(), w));
    }
    let available = report.authority.available();
    let exercised = report.authority.exercised();
    if inner.width < TWO_COLUMNS_FROM {
        let mut lines = top;
        lines.push(Line::styled("AVAILABLE", t.title));
        lines.extend(field_lines(s, &available, w));
        lines.push(Line::styled("EXERCISED", t.title));
        lines.extend(field_lines(s, &exercised, w));
        Paragraph::new(lines)
            .scroll((s.detail.scroll() as u16, 0))
            .render(inner, buf);
        return;
    }
    let top_h = (top.len() as u16).min(inner.height / 2);
    let [top_area, bottom] =
        Layout::vertical([Constraint::Length(top_h), Constraint::Min(2)]).areas(inner);
    Paragraph::new(top).render(top_area, buf);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .spacing(2)
            .areas(bottom);
    for (area, title, fields) in [
        (left, "AVAILABLE", &available[..]),
        (right, "EXERCISED", &exercised[..]),
    ] {
        // The header stays; the fields under it scroll.
        let [head, body] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
        Line::styled(title, t.title).render(head, buf);
        Paragraph::new(field_lines(s, fields, usize::from(area.width)))
            .scroll((s.detail.scroll() as u16, 0))
            .render(body, buf);
    }
}

/// The recorded fields, each wrapped to `width` with continuation lines aligned to the
/// value column and a dialect tag never split, then one line naming those not recorded.
pub(super) fn field_lines<'a>(
    s: &State,
    fields: &[crate::analysis::authority::Field<'_>],
    width: usize,
) -> Vec<Line<'a>> {
    let mut lines = Vec::new();
    for f in fields.iter().filter(|f| f.value.is_some()) {
        lines.extend(field_line(s, f, width));
    }
    let missing: Vec<&str> = fields
        .iter()
        .filter(|f| f.value.is_none())
        .map(|f| f.name)
        .collect();
    if !missing.is_empty() {
        let list = missing.join(", ");
        lines.extend(hang(
            Span::styled(format!("{:<NAME_W$}", "not recorded"), s.theme.dim),
            split_units(&list, width.saturating_sub(NAME_W), s.theme.dim),
            width,
        ));
    }
    lines
}

/// One field: name, value (digests in full when the column holds them; epoch
/// milliseconds as ISO time with the raw value dim beside it), dialect tag.
pub(super) fn field_line<'a>(
    s: &State,
    f: &crate::analysis::authority::Field<'_>,
    width: usize,
) -> Vec<Line<'a>> {
    let t = &s.theme;
    let value_w = width.saturating_sub(NAME_W).max(12);
    let epoch = f
        .value
        .and_then(|v| crate::model::time::epoch_member(f.name, v));
    let (value, raw) = match (f.value, epoch) {
        (_, Some((iso, raw))) => (iso, Some(raw)),
        (Some(Json::String(v)), None) => {
            let full = sanitize(&v.lossy()).into_owned();
            let shown = if full.chars().count() <= value_w {
                full
            } else {
                abbreviate(&full)
            };
            (shown, None)
        }
        (Some(other), None) => (value_text(other), None),
        (None, None) => ("not recorded".into(), None),
    };
    // Units that must not be split: the value's pieces, the raw time, the dialect tag.
    let mut units = split_units(&value, width.saturating_sub(NAME_W).max(12), t.base);
    if let Some(raw) = raw {
        units.push((format!(" ({raw})"), t.dim));
    }
    if f.dialect != "all" {
        units.push((format!(" [{}]", f.dialect), t.dim));
    }
    hang(
        Span::styled(format!("{:<NAME_W$}", f.name), t.accent),
        units,
        width,
    )
}

/// Text cut into units for [`hang`]: its words (each with the space before it), and
/// any word longer than `max` in `max`-wide pieces.
fn split_units(text: &str, max: usize, style: Style) -> Vec<(String, Style)> {
    let mut units = Vec::new();
    for (i, word) in text.split(' ').enumerate() {
        let chars: Vec<char> = word.chars().collect();
        for (j, piece) in chars.chunks(max.max(1)).enumerate() {
            let lead = if i > 0 && j == 0 { " " } else { "" };
            units.push((format!("{lead}{}", piece.iter().collect::<String>()), style));
        }
    }
    units
}

/// A line that starts with `head` (`NAME_W` columns) and continues with `units`, wrapped
/// at `width` with every continuation line starting at the value column; a unit is
/// never split.
fn hang<'a>(head: Span<'a>, units: Vec<(String, Style)>, width: usize) -> Vec<Line<'a>> {
    let value_w = width.saturating_sub(NAME_W).max(12);
    let mut lines: Vec<Vec<Span<'a>>> = vec![vec![head]];
    let mut used = 0;
    for (text, style) in units {
        let w = text.chars().count();
        if used > 0 && used + w > value_w {
            lines.push(vec![Span::raw(" ".repeat(NAME_W))]);
            used = 0;
        }
        let text = if used == 0 {
            text.trim_start().to_string()
        } else {
            text
        };
        used += text.chars().count();
        if let Some(line) = lines.last_mut() {
            line.push(Span::styled(text, style));
        }
    }
    lines.into_iter().map(Line::from).collect()
}

/// One "what changed" answer, wrapped at `width` under its summary column.
pub(super) fn change_line<'a>(
    s: &State,
    what: &str,
    status: ChangeStatus,
    summary: &str,
    width: usize,
) -> Vec<Line<'a>> {
    // One meaning per glyph: ≠ is argument drift only; another change is Δ, no evidence
    // to decide ○, and a question that does not apply –.
    let (glyph, style) = match status {
        ChangeStatus::Changed if what == "argument_drift" => ("≠", s.theme.bad),
        ChangeStatus::Changed => ("Δ", s.theme.bad),
        ChangeStatus::Unchanged => ("=", s.theme.good),
        ChangeStatus::Unknown => ("○", s.theme.warn),
        ChangeStatus::NotApplicable => ("–", s.theme.dim),
    };
    let summary = abbreviate(&sanitize(summary));
    hang(
        Span::styled(format!("{glyph} {what:<20}"), style),
        split_units(&summary, width.saturating_sub(NAME_W), s.theme.base),
        width,
    )
}

pub(super) fn drift_lines<'a>(s: &State, r: &crate::analysis::ActionReport<'_>) -> Vec<Line<'a>> {
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
                        "○"
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

pub(super) fn digest_lines<'a>(
    s: &State,
    d: &Data,
    r: &crate::analysis::ActionReport<'_>,
) -> Vec<Line<'a>> {
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
        let why = c.why().unwrap_or("");
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
                p.verdict.name(),
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
    let run = d.run_of(s.timeline.node().unwrap_or(0));
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

/// The detail pane's title: the action, then one span per tab (`│ 1 Authority `); the
/// second value names the tab each span is (for mouse hit-testing). When it does not fit
/// in `width`, the tab names shorten and the action label is cut — never a tab.
pub(super) fn detail_title<'a>(
    s: &State,
    d: &Data,
    node: NodeId,
    width: u16,
) -> (Line<'a>, Vec<Option<DetailTab>>) {
    let t = &s.theme;
    let g = &d.analysis.graph;
    let a = g.action(&d.corpus, node).map(|(_, a)| a);
    let label = format!(
        " {} {} · {} ",
        show_id(a.and_then(|a| a.id()).unwrap_or("(no id)")),
        sanitize(a.and_then(|a| a.tool()).unwrap_or("?")),
        sanitize(&g.runs[d.run_of(node)].id)
    );
    let tab_spans = |short: bool| {
        let mut spans = Vec::new();
        let mut tabs = Vec::new();
        for (i, tab) in DetailTab::ALL.iter().enumerate() {
            let style = if *tab == s.detail.tab() {
                t.title
            } else {
                t.dim
            };
            let name = if short {
                tab.short_title()
            } else {
                tab.title()
            };
            spans.push(Span::styled("│", t.border));
            spans.push(Span::styled(format!(" {} {name} ", i + 1), style));
            tabs.extend([None, Some(*tab)]);
        }
        (spans, tabs)
    };
    // Borders, and the focus key drawn at the right (` F4 `).
    let room = usize::from(width.saturating_sub(2 + 5));
    let (mut spans, mut tabs) = tab_spans(false);
    let mut tabs_width: usize = spans.iter().map(Span::width).sum();
    if label.chars().count() + tabs_width > room {
        (spans, tabs) = tab_spans(true);
        tabs_width = spans.iter().map(Span::width).sum();
    }
    let label_room = room.saturating_sub(tabs_width);
    let label = if label.chars().count() <= label_room {
        label
    } else if label_room > 2 {
        let cut: String = label.chars().take(label_room - 1).collect();
        format!("{cut}…")
    } else {
        String::new()
    };
    spans.insert(0, Span::styled(label, t.title));
    tabs.insert(0, None);
    (Line::from(spans), tabs)
}
