//! The Record tab: the five verification axes, the record's violations naming their
//! actions, the action's findings and the record's file in order.

use super::*;

pub(super) fn record_lines<'a>(s: &State, d: &Data, node: NodeId) -> Vec<Line<'a>> {
    let t = &s.theme;
    let n = &d.analysis.graph.nodes[node as usize];
    let record = d.corpus.record(n.record as usize);
    let created = (record.get("created_at_ms"))
        .map_or("not recorded".into(), |v| value_line("created_at_ms", v));
    let mut lines = vec![
        kv(s, "source", &record.source.to_string()),
        kv(s, "created", &created),
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
                .map(ToString::to_string)
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
    let axis = |name: &str, status: Option<(String, char)>| {
        let (st, g) = status.unwrap_or(("not evaluated".into(), '○'));
        Line::from(vec![
            Span::styled(format!("{name:<18}"), t.accent),
            Span::styled(format!("{g} {st}"), glyph_style(t, g)),
        ])
    };
    let check = |c: CheckStatus| {
        let g = if c == CheckStatus::Pass { '✓' } else { '✗' };
        (c.name().to_string(), g)
    };
    lines.push(axis("structural", r.structural.status.map(check)));
    lines.push(axis("semantic", r.semantic.status.map(check)));
    lines.push(axis(
        "authenticity",
        r.authenticity.status.map(|a| {
            let g = match a {
                AuthStatus::Valid => '✓',
                AuthStatus::Unsigned => '○',
                _ => '✗',
            };
            (a.name().to_string(), g)
        }),
    ));
    let fork = r.chain.forked_at.as_ref();
    lines.push(axis(
        "chain",
        r.chain.status.map(|c| {
            let forked = fork.map(|f| format!(", forked at {}:{}", sanitize(&f.path), f.line));
            let text = format!("{}{}", c.name(), forked.unwrap_or_default());
            (text, c.glyph_forked(fork.is_some()))
        }),
    ));
    let capture = (r.capture.run.as_ref())
        .filter(|_| r.capture.evaluated)
        .map(|c| {
            let text = format!(
                "{} (its run: {} tool-call spans, {} without action; {} actions, {} without span)",
                c.status,
                c.run_spans,
                c.spans_without_action,
                c.run_actions,
                c.actions_without_span
            );
            (text, if c.status == "complete" { '✓' } else { '✗' })
        });
    lines.push(axis("capture", capture));
    // The why of a failed structural or semantic axis right under the axes (as
    // authenticity's follows), each violation naming the action it concerns (never read
    // as this action's own).
    let this_id = d
        .analysis
        .graph
        .action(&d.corpus, node)
        .and_then(|(_, a)| a.id());
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
    for v in &r.semantic.violations {
        let on = match v.action_id.as_deref() {
            Some(id) if Some(id) == this_id => "this action".to_string(),
            Some(id) => format!("on {}", show_id(id)),
            None => "the record".to_string(),
        };
        lines.push(Line::styled(
            format!("  semantic {} [{on}] {}", v.rule, sanitize(&v.message)),
            t.warn,
        ));
    }
    if r.semantic.violations.iter().any(|v| v.action_id.is_some()) {
        lines.push(Line::styled(
            "  o goes to the action a violation names",
            t.dim,
        ));
    }
    if let Some(time) = r.authenticity.time_words() {
        let proven = r.authenticity.proves_time();
        let glyph = if proven { '✓' } else { '○' };
        lines.push(axis("time", Some((sanitize(&time).into_owned(), glyph))));
    }
    let a = &r.authenticity;
    if let Some(c) = a.construction {
        lines.push(kv(s, "construction", c.name()));
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
    lines.extend(action_telemetry_lines(s, d, node));
    let (glyph, chain) = chain_status(d, d.run_of(node));
    lines.push(kv(s, "run's chains", &format!("{glyph} {chain}")));
    lines.push(Line::styled("FINDINGS ON THIS ACTION".to_string(), t.title));
    let mut any = false;
    for f in d.findings_of(node) {
        any = true;
        lines.push(finding_line(s, f));
    }
    if !any {
        lines.push(Line::styled("none", t.dim));
    }
    lines.extend(file_view(s, d, report, n.record as usize));
    lines
}

/// Records shown either side of the selected one in the file view.
pub(super) const FILE_VIEW_AROUND: usize = 4;

/// The selected record's file in order (a window around it): each record's link state,
/// the expected and actual `prev_record_hash` where a link breaks, and the link-graph
/// path the record lies on.
pub(super) fn file_view<'a>(s: &State, d: &Data, report: &Report, flat: usize) -> Vec<Line<'a>> {
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
        let at = crate::verify::links::RecordAt::short;
        lines.push(kv(
            s,
            "chain path",
            &format!(
                "{} {}{} · {} record{} · {} → {}{}",
                p.status.glyph_forked(p.forked_at.is_some()),
                p.status.name(),
                (p.forked_at.as_ref())
                    .map(|f| format!(", a branch of the fork at {}", at(f)))
                    .unwrap_or_default(),
                p.records.len(),
                if p.records.len() == 1 { "" } else { "s" },
                p.records.first().map(at).unwrap_or_default(),
                p.records.last().map(at).unwrap_or_default(),
                match p.records.files().count() {
                    0 | 1 => String::new(),
                    n => format!(" · across {n} files"),
                }
            ),
        ));
        if let Some(a) = &p.anchored_through {
            let after = p.records.len() - 1 - a.position;
            lines.push(kv(
                s,
                "anchored",
                &format!(
                    "through {} (record {} of {}) by {} at {} · {after} after it unanchored",
                    at(&a.record),
                    a.position + 1,
                    p.records.len(),
                    a.tsa.as_deref().unwrap_or("an unnamed TSA"),
                    a.gen_time
                ),
            ));
        }
    }
    let anchored = |flat: usize| -> Option<bool> {
        let p = report.links.paths.get(*d.path_of.get(flat)? as usize)?;
        let a = p.anchored_through.as_ref()?;
        let position = p.members.iter().position(|&m| m as usize == flat)?;
        Some(position <= a.position)
    };
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
        let coverage = match anchored(start + i) {
            Some(true) => " anchored",
            Some(false) => " unanchored",
            None => "",
        };
        lines.push(Line::styled(
            format!(
                "{marker} #{i:<4} line {:<6} {:<9} {}{coverage}",
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
                .map_or("(no record before it in this file)".into(), |p| {
                    p.canonical_sha256.to_string()
                });
            let actual = match r.link() {
                crate::model::Link::Hash(h) => h.to_string(),
                crate::model::Link::Malformed => "(not a string)".into(),
                _ => String::new(),
            };
            lines.push(Line::styled(
                format!("      expected {}", sanitize(&expected)),
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
