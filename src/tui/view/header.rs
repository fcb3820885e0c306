//! The two one-line bars: the header (what can be trusted first, so it survives a
//! narrow terminal) and the hint bar (the focused pane's keys, `? help · q quit` pinned).

use super::*;
use crate::model::text::counted;

/// The header: what can be trusted first (load errors, unknown keys, verdict counts), so
/// it survives a narrow terminal; then findings, filter and banner. When the full words
/// do not fit, every part is abbreviated (none dropped) and the banner is cut to fit.
pub(super) fn header(s: &State, area: Rect, buf: &mut Buffer) {
    let full = header_spans(s, false);
    let line = if Line::from(full.clone()).width() + banner_width(s) <= usize::from(area.width) {
        let mut spans = full;
        if let Some(b) = &s.banner {
            spans.push(Span::styled(format!("  {b}"), s.theme.accent));
        }
        Line::from(spans)
    } else {
        let mut spans = header_spans(s, true);
        let room = usize::from(area.width).saturating_sub(Line::from(spans.clone()).width());
        if let Some(b) = &s.banner
            && room > 4
        {
            let cut: String = b.chars().take(room - 3).collect();
            let text = if cut.chars().count() < b.chars().count() {
                format!(" {}…", cut.trim_end())
            } else {
                format!(" {b}")
            };
            spans.push(Span::styled(text, s.theme.accent));
        }
        Line::from(spans)
    };
    line.render(area, buf);
}

fn banner_width(s: &State) -> usize {
    s.banner.as_ref().map_or(0, |b| b.chars().count() + 2)
}

/// The header's parts, in full words or abbreviated (`compact`).
fn header_spans<'a>(s: &State, compact: bool) -> Vec<Span<'a>> {
    let t = &s.theme;
    let mut spans = vec![Span::styled(" aeplens", t.title)];
    // Load errors are the inputs' (what `check` counts); a lease file's are apart.
    let inputs = s
        .data
        .as_ref()
        .map_or(s.errors.len(), |d| d.corpus.errors().count());
    let leases = s.errors.len().saturating_sub(inputs);
    for (n, what) in [(inputs, "load error"), (leases, "lease-file problem")] {
        if n > 0 {
            spans.push(Span::styled(
                format!(" ⚠ {n} {what}{}", if n == 1 { "" } else { "s" }),
                t.bad,
            ));
        }
    }
    let Some(d) = &s.data else {
        spans.push(Span::styled(
            format!(" · {} {}…", s.progress.phase, progress_pct(s)),
            t.dim,
        ));
        return spans;
    };
    // The first records of a large store, shown while the rest loads: said as a part.
    let so_far = estimated_records(s, d).map(|total| format!("{} of ~{total}", d.corpus.len()));
    spans.push(Span::raw(match (&so_far, compact) {
        (Some(part), true) => format!(" · {part} rec so far "),
        (Some(part), false) => format!(
            " · {} · {part} records so far ",
            counted(d.corpus.inputs.len(), "input")
        ),
        (None, true) => format!(" · {} rec ", d.corpus.len()),
        (None, false) => format!(
            " · {} · {} ",
            counted(d.corpus.inputs.len(), "input"),
            counted(d.corpus.len(), "record")
        ),
    }));
    match &d.summary {
        Some(sum) => {
            // The glyphs of `RecordVerdict::glyph`, counted as `check` counts: ✓ valid;
            // ✗ a signature or a binding that fails (binding mismatches named apart);
            // ○ nothing verified (unsigned, not checked, unsupported), once.
            let a = &sum.authenticity;
            spans.push(Span::styled(format!("✓{} ", a.valid), t.good));
            let bad = a.invalid + a.binding_mismatch;
            let binding = match (a.binding_mismatch, compact) {
                (0, _) => String::new(),
                (n, true) => format!(" ({n} bind)"),
                (n, false) => format!(" ({n} binding-mismatch)"),
            };
            spans.push(Span::styled(
                format!("✗{bad}{binding} "),
                if bad > 0 { t.bad } else { t.dim },
            ));
            let unknown = a.unknown_key;
            let nothing = a.unsigned + a.not_checked + a.unsupported_legacy;
            if unknown > 0 {
                // "pass --keys" only when none was given; else the keyring lacks it.
                let hint = if s.keys_given {
                    "not in the keys given"
                } else {
                    "pass --keys"
                };
                spans.push(Span::styled(
                    format!("○{nothing} ({unknown} unknown key — {hint}) "),
                    t.warn,
                ));
            } else {
                spans.push(Span::raw(format!("○{nothing} ")));
            }
            // Chain paths of the link graph: ✓ only for intact paths through no fork;
            // vacuous ones ○; forks ⋎ and troubled paths ✗ counted apart, each named.
            let count = |k: &str| sum.chain_paths.get(k).copied().unwrap_or(0);
            spans.push(Span::raw(format!(
                "· {} ✓{} ○{} ",
                if compact { "ch" } else { "chains" },
                d.intact_unforked,
                count("not-present")
            )));
            let named = |glyph: char, (names, total): &(Vec<String>, usize)| {
                let shown: Vec<String> = if compact {
                    // `incident.ndjson:3` → `incident:3`
                    (names.iter().take(1))
                        .map(|n| n.replace(".ndjson:", ":").replace(".jsonl:", ":"))
                        .collect()
                } else {
                    names.clone()
                };
                let more = match (total.saturating_sub(shown.len()), compact) {
                    (0, _) => String::new(),
                    (n, true) => format!(" +{n}"),
                    (n, false) => format!(" +{n} more"),
                };
                Span::styled(
                    format!("{glyph}{total} ({}{more}) ", shown.join(", ")),
                    t.bad,
                )
            };
            if d.forks.1 > 0 {
                spans.push(named(crate::verify::chain::FORK_GLYPH, &d.forks));
            }
            if d.chain_trouble.1 > 0 {
                spans.push(named('✗', &d.chain_trouble));
            }
        }
        None => spans.push(Span::styled(
            format!("{} {} ", s.progress.phase, progress_pct(s)),
            t.warn,
        )),
    }
    let (marks, stale) = s.review.counts();
    if marks > 0 {
        spans.push(Span::styled(format!("· ⚑{marks} "), t.accent));
        if stale > 0 {
            spans.push(Span::styled(format!("({stale} changed) "), t.bad));
        }
    }
    if s.review.problem.is_some() {
        spans.push(Span::styled("· review not saved ", t.bad));
    }
    let [high, medium, low, info] = d.finding_counts;
    spans.push(Span::raw(if compact { "· " } else { "· findings " }));
    spans.push(Span::styled(format!("▲{high} "), t.bad));
    spans.push(Span::styled(format!("■{medium} "), t.warn));
    spans.push(Span::raw(format!("·{low} ")));
    spans.push(Span::styled(format!("i{info} "), t.dim));
    let filter = if let Some(applied) = s.filter.applied() {
        sanitize(applied).into_owned()
    } else {
        "—".into()
    };
    spans.push(Span::styled(
        if compact {
            let short: String = filter.chars().take(12).collect();
            let cut = if short.chars().count() < filter.chars().count() {
                "…"
            } else {
                ""
            };
            format!("· f:{short}{cut}")
        } else {
            format!("· filter: {filter}")
        },
        t.dim,
    ));
    spans
}

/// While only the first records of a large store are shown: about how many records the
/// whole has (their count scaled by the bytes they cover), rounded to two digits.
fn estimated_records(s: &State, d: &Data) -> Option<String> {
    if d.summary.is_some() || s.progress.finished {
        return None;
    }
    let covered: u64 = (d.corpus.inputs.iter())
        .filter_map(|i| {
            i.records
                .last()?
                .span
                .map(|sp| sp.offset + u64::from(sp.len))
        })
        .sum();
    let total = s.progress.total as u64;
    if covered == 0 || total <= covered + covered / 100 || d.corpus.is_empty() {
        return None;
    }
    let estimate = (d.corpus.len() as f64 * total as f64 / covered as f64).round() as u64;
    let digits = estimate.checked_ilog10().unwrap_or(0);
    let unit = 10u64.pow(digits.saturating_sub(1));
    Some(crate::model::text::grouped((estimate / unit).max(1) * unit))
}

pub(super) fn progress_pct(s: &State) -> String {
    (s.progress.done * 100)
        .checked_div(s.progress.total)
        .map(|p| format!("{p}%"))
        .unwrap_or_default()
}

/// The message the hint bar shows (a status, or why the filter typed was refused),
/// wrapped at `width` with a space before it.
pub(super) fn message_lines(s: &State, width: u16) -> Option<Vec<String>> {
    let m = s.message.clone().or(s.filter.error())?;
    Some(crate::model::text::wrap_line(
        &format!(" {}", sanitize(&m)),
        usize::from(width),
        1,
    ))
}

pub(super) fn hint_bar(s: &State, area: Rect, buf: &mut Buffer) {
    let t = &s.theme;
    if s.search.is_active() || s.filter.is_active() {
        let (label, text) = if s.search.is_active() {
            ("/", s.search.text())
        } else {
            ("filter: ", s.filter.text())
        };
        let extra = if s.search.is_active() {
            format!(
                "  ({} {}match{} in this run · Enter: all runs · Esc: cancel)",
                s.search.hits().len(),
                if s.search.is_fuzzy() { "fuzzy " } else { "" },
                if s.search.hits().len() == 1 { "" } else { "es" }
            )
        } else {
            "  (tool == \"…\" and not verified · Tab completes · Enter · Esc)".into()
        };
        let [prompt, under] = if area.height >= 2 {
            Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(area)
        } else {
            [area, Rect::default()]
        };
        Line::from(vec![
            Span::styled(label, t.hint_key),
            Span::raw(sanitize(text).into_owned()),
            Span::styled("█", t.accent),
            Span::styled(extra, t.dim),
        ])
        .render(prompt, buf);
        // A bad expression: a caret under the fault and what was expected, while the
        // last good filter stays applied.
        if let Some(offered) = s.filter.offered().filter(|_| s.filter.is_active()) {
            Line::styled(format!(" {}", sanitize(offered)), t.dim).render(under, buf);
        } else if let Some(fault) = s.filter.fault().filter(|_| s.filter.is_active()) {
            use unicode_width::UnicodeWidthStr;
            let before = text.get(..fault.at).unwrap_or(text);
            let pad = label.width() + sanitize(before).width();
            let marks = text
                .get(fault.at..(fault.at + fault.len).min(text.len()))
                .map_or(1, |f| sanitize(f).width().max(1));
            Line::from(vec![
                Span::raw(" ".repeat(pad)),
                Span::styled("^".repeat(marks), t.bad),
                Span::styled(format!(" {}", sanitize(&fault.message)), t.bad),
            ])
            .render(under, buf);
        }
        return;
    }
    if let Some(job) = s.search.job() {
        Line::styled(
            format!(
                " searching every run for {:?}… {}% (Esc cancels)",
                sanitize(&job.query),
                job.percent()
            ),
            t.warn,
        )
        .render(area, buf);
        return;
    }
    if let Some(lines) = message_lines(s, area.width) {
        // Wrapped, never cut: the bar takes a second row when the message needs it.
        for (y, line) in (area.y..area.bottom()).zip(lines) {
            Line::styled(line, t.warn).render(Rect::new(area.x, y, area.width, 1), buf);
        }
        return;
    }
    let scope = match s.focus {
        Pane::Navigator => Scope::Navigator,
        Pane::Timeline => Scope::Timeline,
        Pane::Detail => Scope::Detail,
    };
    // `? help · q quit` is pinned at the right at every width; the pane's hints fill the
    // rest, whole.
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
    // Whole hints, as many as fit: the rest are dropped from the right, none cut.
    let mut spans = vec![Span::raw(" ")];
    let mut used = 1;
    for (k, h) in s.keymap.hints(scope) {
        let sep = if spans.len() > 1 { " · " } else { "" };
        let item = [
            Span::styled(sep, t.dim),
            Span::styled(k, t.hint_key),
            Span::raw(format!(" {h}")),
        ];
        let w: usize = item.iter().map(Span::width).sum();
        if used + w > usize::from(hints_area.width) {
            break;
        }
        used += w;
        spans.extend(item);
    }
    Line::from(spans).render(hints_area, buf);
    pinned.render(pinned_area, buf);
}
