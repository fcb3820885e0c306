//! The detail pane: its tab bar and the Authority, Drift and Digests tabs.

use super::*;

pub(super) fn detail(s: &State, area: Rect, buf: &mut Buffer) {
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
    let (title, _) = detail_title(s, d, node, area.width);
    let block = pane_block(s, Pane::Detail, title);
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

/// A titled list of the recorded fields, then one line naming those not recorded.
pub(super) fn field_lines<'a>(
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

pub(super) fn field_line<'a>(s: &State, f: &crate::analysis::authority::Field<'_>) -> Line<'a> {
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

pub(super) fn change_line<'a>(
    s: &State,
    what: &str,
    status: ChangeStatus,
    summary: &str,
) -> Line<'a> {
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
        sanitize(a.and_then(|a| a.id()).unwrap_or("(no id)")),
        sanitize(a.and_then(|a| a.tool()).unwrap_or("?")),
        sanitize(&g.runs[d.run_of(node)].id)
    );
    let tab_spans = |short: bool| {
        let mut spans = Vec::new();
        let mut tabs = Vec::new();
        for (i, tab) in DetailTab::ALL.iter().enumerate() {
            let style = if *tab == s.tab { t.title } else { t.dim };
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
