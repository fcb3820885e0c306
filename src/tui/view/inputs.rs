//! The Inputs overlay (`I`): what was read — every input file with its format, records,
//! size and full SHA-256, each load error with its line and column, and the problems of
//! lease files; the records of the other evidence types with what they name. What a
//! reviewer quotes when asked "which evidence did you look at?".

use super::*;

/// The overlay's lines (pure: tested through the rendered screen).
fn input_lines<'a>(s: &State, width: usize) -> Vec<Line<'a>> {
    let t = &s.theme;
    let Some(d) = &s.data else {
        return vec![Line::styled("still loading…", t.dim)];
    };
    let inputs = &d.corpus.inputs;
    let records: usize = inputs.iter().map(|i| i.records.len()).sum();
    let errors: usize = inputs.iter().map(|i| i.errors.len()).sum();
    let mut lines = vec![Line::styled(
        format!(
            "{} input{} · {records} records · {errors} load error{}",
            inputs.len(),
            if inputs.len() == 1 { "" } else { "s" },
            if errors == 1 { "" } else { "s" }
        ),
        t.title,
    )];
    for input in inputs {
        lines.push(Line::raw(""));
        lines.push(Line::styled(sanitize(&input.path).into_owned(), t.title));
        let size = size_text(input.bytes);
        lines.push(Line::styled(
            format!(
                "  {} · {} records · {size}",
                input.format.name(),
                input.records.len()
            ),
            t.base,
        ));
        let digest = input.sha256.as_deref().unwrap_or("not read");
        lines.push(Line::styled(format!("  sha256 {digest}"), t.dim));
        for e in &input.errors {
            let place = match (e.line, e.column) {
                (Some(l), Some(c)) => format!("line {l}:{c}: "),
                (Some(l), None) => format!("line {l}: "),
                _ => String::new(),
            };
            let text = format!("✗ {place}{}", sanitize(&e.message));
            lines.extend(wrapped(&text, width).map(|l| Line::styled(l, t.bad)));
        }
    }
    // The evidence beside the runs' records: each with its kind, verdict and edges.
    let siblings = (d.report.iter())
        .flat_map(|r| &r.records)
        .filter(|r| !r.kind.is_record());
    for (i, r) in siblings.enumerate() {
        if i == 0 {
            lines.push(Line::raw(""));
            lines.push(Line::styled(
                "OTHER EVIDENCE (checkpoints, forks, memory ops, …)",
                t.title,
            ));
        }
        let verdict = crate::verify::verdict::RecordVerdict::of(r);
        let text = format!("{} {}", r.kind.name(), verdict.short());
        lines.extend(wrapped(&text, width).map(|l| Line::styled(l, t.base)));
        for link in &r.links {
            let text = format!("  {}", link.words());
            lines.extend(wrapped(&text, width).map(|l| Line::styled(l, t.dim)));
        }
    }
    // The lease files (`--leases`): inputs too, with what they held.
    let lease_files = (d.report.iter())
        .flat_map(|r| &r.inputs)
        .filter(|i| i.kind == crate::verify::InputKind::Leases);
    for (i, input) in lease_files.enumerate() {
        if i == 0 {
            lines.push(Line::raw(""));
            lines.push(Line::styled("LEASE FILES (--leases)", t.title));
        }
        lines.push(Line::styled(format!("  {}", sanitize(&input.path)), t.base));
        let size = size_text(input.bytes);
        lines.push(Line::styled(
            format!(
                "    {} objects · {size} · {} problem{}",
                input.records,
                input.errors.len(),
                if input.errors.len() == 1 { "" } else { "s" }
            ),
            t.base,
        ));
        let digest = input.sha256.as_deref().unwrap_or("not read");
        lines.push(Line::styled(format!("    sha256 {digest}"), t.dim));
    }
    // Problems not tied to an input: lease files.
    let from_inputs: std::collections::HashSet<String> =
        d.corpus.errors().map(ToString::to_string).collect();
    let other: Vec<&String> = s
        .errors
        .iter()
        .filter(|e| !from_inputs.contains(*e))
        .collect();
    if !other.is_empty() {
        lines.push(Line::raw(""));
        lines.push(Line::styled("OTHER PROBLEMS (lease files)", t.title));
        for e in other {
            let text = format!("✗ {}", sanitize(e));
            lines.extend(wrapped(&text, width).map(|l| Line::styled(l, t.bad)));
        }
    }
    lines
}

/// A file's size as the overlay says it.
fn size_text(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "size unknown".to_string(), |b| format!("{b} bytes"))
}

/// `text` in lines of at most `width` characters, indented two (continuations four).
fn wrapped(text: &str, width: usize) -> impl Iterator<Item = String> + '_ {
    let first = width.saturating_sub(2).max(8);
    let rest = width.saturating_sub(4).max(8);
    let chars: Vec<char> = text.chars().collect();
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let n = if at == 0 { first } else { rest };
        let end = (at + n).min(chars.len());
        let indent = if at == 0 { "  " } else { "    " };
        pieces.push(format!(
            "{indent}{}",
            chars[at..end].iter().collect::<String>()
        ));
        at = end;
    }
    pieces.into_iter()
}

/// Draws the Inputs overlay.
pub(super) fn inputs(s: &State, scroll: usize, area: Rect, buf: &mut Buffer) {
    let width = area.width.min(110);
    let lines = input_lines(s, usize::from(width.saturating_sub(2)));
    scrolled_box(s, "Inputs", lines, width, scroll, area, buf);
}
