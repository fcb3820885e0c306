//! `aeplens check`: verify evidence and print a table or the JSON report.

use super::{CheckArgs, Format};
use crate::model::finding::Finding;
use crate::model::text::{counted, file_name, sanitize};
use crate::open::{Budget, Need, Opened};
use crate::review::report::counts;
use crate::verify::anchors::AnchorStatus;
use crate::verify::chain::ChainStatus;
use crate::verify::{AuthStatus, CheckStatus, Options, Profile, Report};
use std::io::{IsTerminal, Write};

/// Runs `check`; returns the exit code.
pub fn run(args: &CheckArgs) -> i32 {
    let clock = std::time::Instant::now();
    let options = Options {
        profile: args.profile.profile(),
    };
    // A lease file is an input of the report: listed with its problems (`kind: leases`),
    // counted by `--strict`.
    let (paths, keys, traces) = (&args.paths, &args.keys, &args.traces);
    let setting = match super::setting(paths, keys, &args.leases, options, traces, &args.index) {
        Ok(setting) => setting,
        Err(e) => {
            eprintln!("aeplens: {e}");
            return 2;
        }
    };
    let (mut opened, trace_problems) = super::open(&setting, paths, Need::Report(BUDGET));
    for problem in &trace_problems {
        super::note(problem);
    }
    // What is left to keep in the index is kept on the other core while the report is
    // written.
    let to_keep = opened.take_to_keep();
    let leases = &setting.leases;
    opened
        .report_mut()
        .inputs
        .extend(leases.inputs.iter().cloned());
    let (corpus, report, findings) = opened.parts();
    // A receipt no action matches is a lease-file line used for nothing: said.
    for unused in leases.unused_receipts(corpus) {
        super::note(&unused.render());
    }
    let lease_errors: usize = leases.inputs.iter().map(|i| i.errors.len()).sum();
    let load_errors = corpus.errors().count() + lease_errors;
    let format = args.format.unwrap_or(if std::io::stdout().is_terminal() {
        Format::Text
    } else {
        Format::Json
    });
    let before_report = clock.elapsed();
    let write = || {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
        let written = match format {
            Format::Json => write_json_report(
                &mut out,
                report,
                findings,
                options.profile,
                opened.capture(),
            ),
            Format::Text => out.write_all(
                text_report(
                    report,
                    findings,
                    opened.capture(),
                    super::report::terminal_width(),
                )
                .as_bytes(),
            ),
        };
        written.and_then(|()| out.flush())
    };
    let keep = || {
        if let Some(to_keep) = to_keep {
            opened.keep(to_keep);
        }
    };
    if rayon::join(write, keep).0.is_err() {
        return 2;
    }
    if args.timings {
        let mut phases = opened.timings().to_vec();
        phases.push(("report", clock.elapsed().saturating_sub(before_report)));
        for (phase, d) in &phases {
            eprintln!("timings: {phase:<36} {:>9.3} s", d.as_secs_f64());
        }
        eprintln!(
            "timings: {:<36} {:>9.3} s",
            "total",
            clock.elapsed().as_secs_f64()
        );
        let used = opened.reuse();
        match used.dir.as_ref().map(|dir| (used, dir)) {
            Some((used, dir)) => eprintln!(
                "timings: evidence index {}: {} records' verdicts reused, {} verified, {} file(s) written",
                sanitize(&dir.display().to_string()),
                used.reused,
                used.verified,
                used.written
            ),
            _ => eprintln!("timings: evidence index not used"),
        }
        // Every byte read once and hashed as few times as it must be: what was read,
        // what was read again, and what SHA-256 was given, over the whole run.
        let files: u64 = (opened.parts().1.inputs.iter())
            .filter_map(|i| i.bytes)
            .sum();
        let again = crate::load::read_again();
        let hashed = crate::model::sha256::hashed();
        let mb = |b: u64| b as f64 / 1e6;
        eprintln!(
            "timings: bytes read {:.1} MB ({:.1} MB of files, {:.1} MB of lines read again); SHA-256 over {:.1} MB = {:.2}x the files",
            mb(files + again),
            mb(files),
            mb(again),
            mb(hashed),
            hashed as f64 / files.max(1) as f64
        );
        use crate::verify::tsa::{TOKEN_NANOS, TOKENS_VERIFIED};
        let tokens = TOKENS_VERIFIED.load(std::sync::atomic::Ordering::Relaxed);
        if tokens > 0 {
            let cpu = TOKEN_NANOS.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9;
            eprintln!(
                "timings: RFC 3161 tokens verified: {tokens}, {cpu:.3} s of CPU ({:.1} µs each)",
                cpu * 1e6 / tokens as f64
            );
        }
    }
    let code = finish(args, &opened, format, load_errors);
    // The process ends with this command: the operating system takes the evidence's
    // memory back at once, where dropping millions of small allocations one by one
    // costs a noticeable part of a large check on one core.
    std::mem::forget(opened);
    code
}

/// How much of the analysis `check` and `findings` hold at once (the analysis of a
/// record costs about a kilobyte; whole groups of records are analysed together). On the
/// 2 GB store batches of 10,000 peak lower and steadier than 25,000 (281,156–283,708 KiB
/// against 289,560–304,472) in the same time; up to 25,000 records keep their facts, so a 20,000-record
/// store is not read twice (BENCHMARKS.md, `check` at scale).
pub const BUDGET: Budget = Budget {
    batch: 10_000,
    facts_kept: 25_000,
};

/// What `check` says after its report, and its exit code.
fn finish(args: &CheckArgs, opened: &Opened, format: Format, load_errors: usize) -> i32 {
    let (_, report, _) = opened.parts();
    if format == Format::Json {
        // Load errors are inside the JSON; also say so on stderr for humans in CI logs.
        for input in &report.inputs {
            for e in &input.errors {
                super::note(&e.rendered);
            }
        }
    }
    let trace_errors = opened.capture().map_or(0, |c| c.load_errors);
    if args.strict && load_errors + trace_errors > 0 {
        return 2;
    }
    if opened.reread_failures() > 0 {
        // The file changed while it was checked: the findings are not all there.
        eprintln!("aeplens: evidence changed while it was checked: the report is incomplete");
        return 2;
    }
    if report.records.is_empty() {
        if opened.parts().0.errors().next().is_some() {
            return 2;
        }
        // Nothing verified is never a pass: an empty directory or a path filter that
        // matched nothing must not read as "all valid" in CI.
        eprintln!(
            "aeplens: nothing to verify: no evidence file with a record under {}",
            sanitize(&args.paths.join(" "))
        );
        return EXIT_NOTHING_TO_VERIFY;
    }
    let (_, _, findings) = opened.parts();
    // A tool call the agent's own telemetry saw and the evidence does not record fails
    // the check as a bad record does.
    let capture_gap = findings.iter().any(|f| f.id == "F-CAPTURE-GAP");
    report.exit_code().max(i32::from(capture_gap))
}

/// `check`'s exit code when no record was found to verify (distinct from a usage
/// error, 2).
pub const EXIT_NOTHING_TO_VERIFY: i32 = 3;

/// The stable JSON document; `findings` is every finding (also in `findings`).
pub fn json_report(report: &Report, findings: &[Finding], profile: Profile) -> String {
    let mut out = Vec::new();
    write_json_report(&mut out, report, findings, profile, None).expect("writing to memory");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// [`json_report`] written to `out` member by member, as `serde_json::to_writer_pretty`
/// writes the whole document (byte for byte): the lists — the per-record results, most of
/// it, and the chains, chain paths and findings — in order, serialised a batch at a time
/// on every core, so the document is never whole in memory.
pub fn write_json_report(
    out: &mut impl Write,
    report: &Report,
    findings: &[Finding],
    profile: Profile,
    capture: Option<&crate::analysis::capture::Capture>,
) -> std::io::Result<()> {
    let profile = match profile {
        Profile::Forensic => "forensic",
        Profile::Current => "aep-dsse-ed25519-decoded-body-v1",
    };
    let head = [
        (
            "schema_version",
            nested(&crate::model::contract::SCHEMA_VERSION, 1),
        ),
        ("tool", nested(&"aeplens", 1)),
        ("version", nested(&env!("CARGO_PKG_VERSION"), 1)),
        ("profile", nested(&profile, 1)),
        ("inputs", nested(&report.inputs, 1)),
    ];
    out.write_all(b"{\n")?;
    for (k, v) in head {
        writeln!(out, "  \"{k}\": {v},")?;
    }
    write_list(out, "records", &report.records)?;
    out.write_all(b",\n")?;
    write_list(out, "chains", &report.chains)?;
    out.write_all(b",\n")?;
    write_list(out, "chain_paths", &report.links.paths)?;
    out.write_all(b",\n")?;
    write_list(out, "findings", findings)?;
    if let Some(capture) = capture {
        write!(out, ",\n  \"telemetry\": {}", nested(&capture.summary(), 1))?;
    }
    if !report.anchors.is_empty() {
        out.write_all(b",\n")?;
        write_list(out, "anchors", &report.anchors)?;
    }
    let summary = nested(&report.summary_with(findings), 1);
    write!(out, ",\n  \"summary\": {summary}\n}}\n")
}

/// A pretty value nested `depth` levels deep: every line after the first indented.
fn nested(value: &impl serde::Serialize, depth: usize) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.replace('\n', &format!("\n{}", "  ".repeat(depth)))
}

/// Writes the member `key` of the document, the list `items`, as the pretty printer does
/// one level deep: its items serialised a batch at a time on every core.
fn write_list<T: serde::Serialize + Sync>(
    out: &mut impl Write,
    key: &str,
    items: &[T],
) -> std::io::Result<()> {
    use rayon::prelude::*;
    if items.is_empty() {
        return write!(out, "  \"{key}\": []");
    }
    writeln!(out, "  \"{key}\": [")?;
    for (n, batch) in items.chunks(1024).enumerate() {
        let texts: Vec<String> = batch.par_iter().map(|item| nested(item, 2)).collect();
        for (i, text) in texts.iter().enumerate() {
            let sep = if n == 0 && i == 0 { "" } else { ",\n" };
            write!(out, "{sep}    {text}")?;
        }
    }
    out.write_all(b"\n  ]")
}

fn auth_cell(r: &crate::verify::RecordResult) -> String {
    let a = &r.authenticity;
    let glyph = match a.status {
        Some(AuthStatus::Valid) => "✓",
        Some(AuthStatus::Unsigned) | None => "○",
        _ => "✗",
    };
    let status = a.status.map_or("not-checked", AuthStatus::name);
    match a.construction {
        Some(c) if a.status.is_some() => format!("{glyph} {status} ({c})"),
        _ => format!("{glyph} {status}"),
    }
}

/// The human table: one line per record, the problems under it, then chains and a summary.
/// `width`: the terminal's columns when printing to one (every line, a table row too,
/// wraps there between words with a hanging indent: nothing is cut); `None` when piped.
pub fn text_report(
    report: &Report,
    findings: &[Finding],
    capture: Option<&crate::analysis::capture::Capture>,
    width: Option<usize>,
) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for input in &report.inputs {
        for e in &input.errors {
            let _ = writeln!(s, "{}", e.rendered);
        }
    }
    let cells: Vec<[String; 6]> = report
        .records
        .iter()
        .map(|r| {
            [
                format!("{}:{}", file_name(&r.source.path), r.source.line),
                // A sibling evidence type is named where a record names its run.
                if r.kind.is_record() {
                    sanitize(r.run_id.as_deref().unwrap_or("—")).into_owned()
                } else {
                    format!("[{}]", r.kind.name())
                },
                auth_cell(r),
                match (r.chain.status, &r.chain.forked_at) {
                    (None, _) => "—".to_string(),
                    (Some(c), None) => c.name().to_string(),
                    (Some(c), Some(_)) => format!("{} {}, forked", c.glyph_forked(true), c.name()),
                },
                r.structural
                    .status
                    .map_or("—", CheckStatus::name)
                    .to_string(),
                r.semantic.status.map_or("—", CheckStatus::name).to_string(),
            ]
        })
        .collect();
    let header = ["RECORD", "RUN", "AUTHENTICITY", "CHAIN", "STRUCT", "SEM"].map(String::from);
    let widths = column_widths(std::iter::once(&header).chain(&cells));
    let row = |cells: &[String; 6]| {
        let mut line = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            let pad = w.saturating_sub(cells_of(cell));
            line.push_str(cell);
            if i + 1 < cells.len() {
                line.push_str(&" ".repeat(pad + 1));
            }
        }
        line
    };
    let _ = writeln!(s, "{}", row(&header));
    for (r, cells) in report.records.iter().zip(&cells) {
        let _ = writeln!(s, "{}", row(cells));
        let a = &r.authenticity;
        if !matches!(a.status, Some(AuthStatus::Valid | AuthStatus::Unsigned))
            && let Some(reason) = &a.reason
        {
            let _ = writeln!(s, "    authenticity: {}", sanitize(reason));
        }
        for f in a.failures.iter().skip(1) {
            let _ = writeln!(s, "    authenticity: {}", sanitize(f));
        }
        if a.timestamp_token.is_some()
            && let Some(time) = a.time_words()
        {
            let _ = writeln!(s, "    time: {}", sanitize(&time));
        }
        for v in &r.structural.violations {
            let _ = writeln!(
                s,
                "    structural: {}: {}",
                sanitize(&v.path),
                sanitize(&v.message)
            );
        }
        for v in &r.semantic.violations {
            let sev = match v.severity {
                crate::verify::semantic::RuleSeverity::Error => "error",
                crate::verify::semantic::RuleSeverity::Warning => "warning",
            };
            let at = v
                .action_id
                .as_deref()
                .map(|a| format!(" [{}]", sanitize(a)))
                .unwrap_or_default();
            let _ = writeln!(s, "    {} {sev}{at}: {}", v.rule, sanitize(&v.message));
        }
        for link in &r.links {
            let _ = writeln!(s, "    links: {}", link.words());
        }
        for f in &r.findings {
            let _ = writeln!(
                s,
                "    {} ({}): {}",
                f.id,
                f.severity.name(),
                sanitize(&f.message)
            );
        }
    }
    for c in &report.chains {
        let at = c
            .broken_at
            .map(|b| format!(" at record {b}"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "chain  {}: file order {}{at} ({} segment{})",
            sanitize(&c.path),
            c.status.map_or(
                if c.segments.is_empty() {
                    "not-checked (no record read)"
                } else {
                    "not-checked (a single record, not a store)"
                },
                |s| s.name()
            ),
            c.segments.len(),
            if c.segments.len() == 1 { "" } else { "s" }
        );
    }
    s.push_str(&paths_text(report));
    for line in capture.iter().flat_map(|c| c.run_lines()) {
        let _ = writeln!(s, "capture {}", sanitize(&line));
    }
    let sum = report.summary_with(findings);
    let chains = counts(&sum.chains);
    let paths = counts(&sum.chain_paths);
    let _ = writeln!(
        s,
        "summary: {} in {} · authenticity {} valid, {} invalid, {} binding-mismatch, {} unsupported-legacy, {} unsigned, {} not-checked · structural {} fail · semantic {} fail · chains {} (file order), paths {}{} · findings {} high, {} medium, {} low, {} info · load errors {} · Ed25519 strict",
        counted(sum.records, "record"),
        counted(sum.inputs, "input"),
        sum.authenticity.valid,
        sum.authenticity.invalid,
        sum.authenticity.binding_mismatch,
        sum.authenticity.unsupported_legacy,
        sum.authenticity.unsigned,
        sum.authenticity.not_checked,
        sum.structural_fail,
        sum.semantic_fail,
        if chains.is_empty() {
            "none".to_string()
        } else {
            chains.join(", ")
        },
        if paths.is_empty() {
            "none".to_string()
        } else {
            paths.join(", ")
        },
        match sum.forks {
            0 => String::new(),
            n => format!(" ({n} fork{})", if n == 1 { "" } else { "s" }),
        },
        sum.findings.high,
        sum.findings.medium,
        sum.findings.low,
        sum.findings.info,
        sum.load_errors,
    );
    crate::model::text::wrap_lines(&s, width, 4)
}

/// The link graph in words: each path that is not a lone unlinked record, then where
/// file order and the graph disagree and why.
fn paths_text(report: &Report) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let at = |r: &crate::verify::links::RecordAt| format!("{}#{}", file_name(&r.path), r.index);
    let paths = &report.links.paths;
    let shown: Vec<_> = paths
        .iter()
        .filter(|p| p.records.len() > 1 || p.status != ChainStatus::NotPresent)
        .collect();
    for p in &shown {
        let (first, last) = (p.records.first(), p.records.last());
        let _ = writeln!(
            s,
            "path   {}{}: {} record{} {} → {}{}{}",
            p.status.name(),
            (p.forked_at.as_ref())
                .map(|f| format!(", a branch of the fork at {}", at(f)))
                .unwrap_or_default(),
            p.records.len(),
            if p.records.len() == 1 { "" } else { "s" },
            first.map(&at).unwrap_or_default(),
            last.map(&at).unwrap_or_default(),
            match p.records.files().count() {
                0 | 1 => String::new(),
                n => format!(" across {n} files"),
            },
            p.continues
                .as_ref()
                .map(|c| format!(" (branch; continues {})", at(c)))
                .unwrap_or_default(),
        );
        if let Some(a) = &p.anchored_through {
            let after = p.records.len() - 1 - a.position;
            let _ = writeln!(
                s,
                "       anchored through {} (record {} of {}) by {} at {}; {after} record{} after it unanchored",
                at(&a.record),
                a.position + 1,
                p.records.len(),
                sanitize(a.tsa.as_deref().unwrap_or("an unnamed TSA")),
                a.gen_time,
                if after == 1 { "" } else { "s" }
            );
        }
    }
    for a in &report.anchors {
        let place = format!("{}:{}", file_name(&a.file), a.line);
        let words = match a.status {
            AnchorStatus::Anchored => continue,
            AnchorStatus::Truncated => format!(
                "truncated: record {} is missing; the chain ends at {}",
                a.record_sha256,
                a.last_loaded.as_ref().map(&at).unwrap_or_default()
            ),
            AnchorStatus::NotInEvidence => format!(
                "record {} is not in the evidence, nor its chain",
                a.record_sha256
            ),
            AnchorStatus::Untrusted | AnchorStatus::Invalid => format!(
                "{} ({}), not used: {}",
                a.token_state,
                a.record_sha256,
                sanitize(&a.token.reason)
            ),
        };
        let _ = writeln!(s, "anchor {place}: {words}");
    }
    let lone = paths.len() - shown.len();
    if lone > 0 {
        let _ = writeln!(
            s,
            "path   not-present: {lone} record{} with no link and no successor",
            if lone == 1 { "" } else { "s" }
        );
    }
    let file_broken = report
        .chains
        .iter()
        .any(|c| c.status == Some(ChainStatus::Broken));
    let file_orphaned = report
        .chains
        .iter()
        .any(|c| c.status == Some(ChainStatus::Orphaned));
    let graph_ok = report.links.passes();
    let reordered = paths
        .iter()
        .any(|p| p.members.windows(2).any(|w| w[0] > w[1]));
    if graph_ok && file_broken && reordered {
        let _ = writeln!(
            s,
            "note   file order reads broken but every chain path is intact: records are stored out of link order (lines moved or swapped; nothing signed was changed)"
        );
    } else if graph_ok && file_broken {
        let _ = writeln!(
            s,
            "note   file order reads broken but every chain path is intact: interleaved emitters (each link resolves to a record elsewhere in the evidence)"
        );
    } else if graph_ok && file_orphaned {
        let _ = writeln!(
            s,
            "note   a file reads orphaned alone, but its first link resolves to a record in another input (a chain rotated into several files)"
        );
    }
    s
}

/// Column widths: each column as wide as its widest cell, in terminal cells.
fn column_widths<'a>(rows: impl Iterator<Item = &'a [String; 6]>) -> [usize; 6] {
    let mut w = [0usize; 6];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            w[i] = w[i].max(cells_of(cell));
        }
    }
    w
}

/// Terminal cells `s` takes (a wide character is two).
fn cells_of(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(record: &str, run: &str, auth: &str) -> [String; 6] {
        [record, run, auth, "intact", "pass", "pass"].map(String::from)
    }

    /// Columns are as wide as their widest cell in terminal cells, and no cell is cut: on
    /// a terminal the row wraps instead ([`crate::model::text::wrap_lines`]).
    #[test]
    fn columns_are_measured_in_cells_and_never_cut() {
        let rows = [
            row("RECORD", "RUN", "AUTHENTICITY"),
            row(
                "a-very-long-store-name.ndjson:12345",
                "run-⌛-0042",
                "✓ valid (aep-dsse-ed25519-decoded-body-v1)",
            ),
        ];
        assert_eq!(column_widths(rows.iter())[..3], [35, 11, 42]);
    }
}
