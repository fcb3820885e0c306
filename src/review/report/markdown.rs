//! The report as GitHub-flavoured Markdown, for tickets and pull requests. Evidence text is
//! escaped: it can neither format, link nor inject HTML, and control characters show as
//! escapes.

use super::{Answers, IncidentReport};
use crate::analysis::evidence::EvidenceRef;
use crate::model::text::{counted, sanitize};
use std::fmt::Write as _;

/// Evidence text as inert inline Markdown: controls escaped (a line break becomes `\n`),
/// inline Markdown punctuation backslashed, `<`, `>` and `&` as entities.
pub(super) fn md(text: &str) -> String {
    let text = sanitize(text);
    // GitHub links an email address whatever is escaped around it: a code span keeps it text.
    if text.contains('@') {
        return code_span(&text);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            // What formats, links or splits a table inline; evidence never starts a line.
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            // What GitHub links bare: `scheme://` and `www.` (escaped, they stay text).
            ':' if chars.get(i + 1..i + 3) == Some(&['/', '/']) => out.push_str("\\:"),
            '.' if i >= 3 && chars[i - 3..i].iter().all(|w| w.eq_ignore_ascii_case(&'w')) => {
                out.push_str("\\.");
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` as a Markdown code span (inert: no emphasis, link or autolink), `|` escaped for
/// tables, fenced by more backticks than any run it holds.
fn code_span(text: &str) -> String {
    let content = text.replace('|', "\\|");
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if content.starts_with('`') || content.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{content}{pad}{fence}")
}

/// One action's three answers, drift, lease, digests and findings, under its title.
fn answers(s: &mut String, a: &Answers) {
    let _ = writeln!(s, "#### {}\n", md(&a.title));
    let fields = |list: &[super::FieldText]| -> String {
        if list.is_empty() {
            return "nothing recorded".into();
        }
        list.iter()
            .map(|f| format!("{} = {}", f.name, md(&f.value)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let _ = writeln!(s, "- **Its record:** {}", md(&a.record));
    let _ = writeln!(s, "- **Emitter chain:** {}", md(&a.chain));
    let _ = writeln!(s, "- **Authority available:** {}", fields(&a.available));
    let _ = writeln!(s, "- **Authority exercised:** {}", fields(&a.exercised));
    s.push_str("- **Changed between approval and execution:**\n");
    for c in &a.changed {
        // In words: ✓ and ✗ mean a record's verification, nothing else.
        let _ = writeln!(s, "  - {}: {} — {}", c.what, c.status, md(&c.summary));
    }
    let _ = writeln!(s, "- **Drift:** {}", md(&a.drift));
    let _ = writeln!(s, "- **Lease:** {}", md(&a.lease));
    if a.digests.is_empty() {
        s.push_str("- **Digests:** no state digests recorded\n");
    }
    for d in &a.digests {
        let _ = writeln!(s, "- **Digest:** {}", md(d));
    }
    for f in &a.findings {
        let _ = writeln!(s, "- **Finding:** {}", md(f));
    }
    s.push('\n');
}

/// The reviewer's marks, each with its note and (for an action) its answers, then the
/// action graph of the marked runs as Mermaid.
fn marks(s: &mut String, review: &super::ReviewOut, ev: EvidenceRef) {
    s.push_str("## Reviewer's marks\n\n");
    if let Some(file) = &review.file {
        let _ = writeln!(s, "From the review `{}`.\n", file.replace('`', "'"));
    }
    if review.marks.is_empty() {
        s.push_str("The review has no marks.\n\n");
    }
    let mut runs: Vec<String> = Vec::new();
    for m in &review.marks {
        let _ = writeln!(s, "### **{}** · {}\n", m.verdict.name(), md(&m.label));
        if let Some(w) = m.warning {
            let _ = writeln!(s, "> ⚠ **{w}**\n");
        }
        for line in m.note.lines() {
            let _ = writeln!(s, "> {}", md(line));
        }
        if !m.note.is_empty() {
            s.push('\n');
        }
        let _ = writeln!(s, "Marked {}.\n", m.created_at);
        if let Some(a) = &m.action {
            answers(s, &Answers::of(a));
            if !runs.iter().any(|r| r == a.run_id) {
                runs.push(a.run_id.to_string());
            }
        }
        if let Some(f) = m.finding {
            let _ = writeln!(s, "{} `{}`: {}\n", f.severity.name(), f.id, md(&f.message));
        }
        match (&m.record, &m.record_verdict) {
            (_, Some(v)) => {
                let _ = writeln!(s, "Record: {}.\n", md(&v.short()));
            }
            (Some(at), None) => {
                let _ = writeln!(s, "Record at {}.\n", md(at));
            }
            (None, None) => {}
        }
    }
    if !runs.is_empty() {
        let graph = super::graph::ActionGraph::of(ev, super::graph::Selection::runs(&runs));
        let _ = writeln!(
            s,
            "Action graph of the marked runs:\n\n```mermaid\n{}```\n",
            super::graph::mermaid(&graph).0
        );
    }
}

/// Renders the report.
pub fn render(r: &IncidentReport, ev: EvidenceRef) -> String {
    let mut s = String::new();
    let sum = &r.summary;
    let a = &sum.authenticity;
    let _ = writeln!(s, "# aeplens incident report\n");
    if let Some(scope) = &r.scope {
        let _ = writeln!(s, "> **Filtered:** {}.\n", md(&scope.sentence()));
    }
    let _ = writeln!(
        s,
        "{} · {} · {} · findings: **{} high**, {} medium, {} low, {} info\n",
        counted(sum.inputs, "input"),
        counted(sum.records, "record"),
        counted(sum.load_errors, "load error"),
        sum.findings.high,
        sum.findings.medium,
        sum.findings.low,
        sum.findings.info
    );
    let _ = writeln!(
        s,
        "Signatures (strict Ed25519): {} valid, {} invalid, {} binding-mismatch, {} unsupported-legacy, {} unsigned, {} not checked.",
        a.valid, a.invalid, a.binding_mismatch, a.unsupported_legacy, a.unsigned, a.not_checked
    );
    let paths = super::counts(&sum.chain_paths);
    let _ = writeln!(
        s,
        "Chain paths: {}.\n",
        if paths.is_empty() {
            "none".into()
        } else {
            paths.join(", ")
        }
    );

    if let Some(review) = &r.review {
        marks(&mut s, review, ev);
    }

    if !r.capture_lines.is_empty() {
        s.push_str("## Capture: what the agent's telemetry saw\n\n");
        for line in &r.capture_lines {
            let _ = writeln!(s, "- {}", md(line));
        }
        s.push('\n');
    }

    s.push_str("## Findings\n\n");
    match (&r.scope, r.findings.is_empty()) {
        (Some(scope), true) => {
            let _ = writeln!(
                s,
                "No findings on the {} actions shown ({} on other actions left out by the filter).\n",
                scope.actions_shown, scope.findings_left_out
            );
        }
        (None, true) => s.push_str("No findings.\n\n"),
        _ => {}
    }
    for g in &r.findings {
        let _ = writeln!(
            s,
            "### {} {} ({}) × {}\n\n{}\n",
            g.severity.mark(),
            g.id,
            g.severity.name(),
            g.count,
            md(g.description)
        );
        s.push_str("| run | actions | where | what | fingerprint |\n|---|---|---|---|---|\n");
        for f in &g.findings {
            let place = f
                .locations
                .first()
                .map(|l| {
                    format!(
                        "{}:{} `{}`",
                        md(&l.path),
                        l.line,
                        l.pointer.replace('`', "'")
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "| {} | {} | {place} | {} | `{}` |",
                md(f.run_id.as_deref().unwrap_or("—")),
                md(&format!("{}{}", f.action_ids.join(", "), f.identity_text())),
                md(&f.message),
                f.fingerprint
            );
        }
        s.push('\n');
    }

    if !r.actions.is_empty() {
        let _ = writeln!(
            s,
            "## Actions behind high findings ({} of {})\n",
            r.actions.len(),
            r.actions_named
        );
    }
    for act in &r.actions {
        answers(&mut s, &Answers::of(act));
    }

    if !r.chains.is_empty() {
        s.push_str("## Denied → re-approved chains\n\n```text\n");
        for c in &r.chains {
            let _ = writeln!(
                s,
                "{} · {}",
                sanitize(&c.run_id),
                c.ended.as_deref().unwrap_or("open")
            );
            for (i, step) in c.steps.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "{}{} {} {}",
                    "  ".repeat(i + 1),
                    sanitize(&step.action_id),
                    sanitize(step.tool.as_deref().unwrap_or("?")),
                    sanitize(step.decision.as_deref().unwrap_or("?"))
                );
            }
        }
        s.push_str("```\n\n");
    }

    s.push_str(
        "## Chain paths\n\n| status | records | from | to | broken at |\n|---|---|---|---|---|\n",
    );
    let at = |r: Option<&crate::verify::links::RecordAt>| {
        r.map_or("—".into(), |r| md(&format!("{}:{}", r.path, r.line)))
    };
    for p in r.chain_paths {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            p.status.name(),
            p.records.len(),
            at(p.records.first()),
            at(p.records.last()),
            at(p.broken_at.as_ref())
        );
    }
    for p in r.chain_paths {
        if let Some(a) = &p.anchored_through {
            let _ = writeln!(
                s,
                "\nAnchored: the path to {} is covered through {} (record {} of {}) by {} at {}; the {} after it are not.",
                at(p.records.last()),
                at(Some(&a.record)),
                a.position + 1,
                p.records.len(),
                md(a.tsa.as_deref().unwrap_or("an unnamed TSA")),
                a.gen_time,
                p.records.len() - 1 - a.position
            );
        }
    }

    if !r.other_evidence.is_empty() {
        s.push_str("\n## Other evidence\n\n| kind | record and verdict | names |\n|---|---|---|\n");
        for o in &r.other_evidence {
            let names: Vec<String> = o.links.iter().map(|l| md(&l.words())).collect();
            let _ = writeln!(
                s,
                "| {} | {} | {} |",
                o.kind,
                md(&o.verdict.short()),
                if names.is_empty() {
                    "—".to_string()
                } else {
                    names.join("<br>")
                }
            );
        }
    }

    let v = &r.verification;
    let _ = writeln!(
        s,
        "\n## How the evidence was verified\n\nProfile {}, Ed25519 {} (RFC 8032; lenient-only signatures are invalid).\n",
        v.profile, v.ed25519
    );
    if v.keys.is_empty() {
        s.push_str("No trusted key was given: no signature could be checked.\n\n");
    } else {
        s.push_str("| trusted key | fingerprint |\n|---|---|\n");
        for k in &v.keys {
            let _ = writeln!(s, "| {} | `{}` |", md(&k.key_id), k.fingerprint);
        }
        s.push('\n');
    }
    if !v.unknown_keys.is_empty() {
        let keys: Vec<String> = v.unknown_keys.iter().map(|k| md(k)).collect();
        let _ = writeln!(
            s,
            "Signed under keys no trusted key covers: {}.\n",
            keys.join(", ")
        );
    }
    for u in &v.not_checked {
        let _ = writeln!(
            s,
            "- not checked ({} records): {}",
            u.records,
            md(&u.reason)
        );
    }

    s.push_str("\n## Inputs\n\n| file | format | records | bytes | sha256 | load errors |\n|---|---|---|---|---|---|\n");
    for i in r.inputs {
        let _ = writeln!(
            s,
            "| {} | {}{} | {} | {} | `{}` | {} |",
            md(&i.path),
            i.format,
            if i.kind == crate::verify::InputKind::Leases {
                " (leases)"
            } else {
                ""
            },
            i.records,
            i.bytes.map_or("—".into(), |b| b.to_string()),
            i.sha256.as_deref().unwrap_or("not read"),
            i.errors.len()
        );
    }
    let _ = writeln!(
        s,
        "\n---\n\nMade by aeplens {} from the evidence alone. Reproduce: `{}`",
        r.version,
        r.command.replace('`', "'")
    );
    s
}

#[cfg(test)]
mod tests {
    use super::md;

    #[test]
    fn evidence_text_is_inert_markdown() {
        let hostile = "<script>x</script> [a](http://e) **b** | c `d`\n# e \u{1b}[2J";
        let out = md(hostile);
        assert!(!out.contains('<') && !out.contains('\n') && !out.contains('\u{1b}'));
        assert!(out.contains("\\[a\\](http\\://e)"), "{out}");
        assert!(out.contains("\\|") && out.contains("\\`d\\`"), "{out}");
    }
}
