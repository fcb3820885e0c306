//! The analysis commands: `findings`, `show`, `chains`, `envelope` — the explorer's
//! panes as text (for people without a TTY) and JSON (for scripts).

use super::{EvidenceArgs, FindingsArgs, Format, ShowArgs};
use crate::analysis::evidence::Evidence;
use crate::analysis::lineage::ChainName;
use crate::analysis::{ActionReport, graph::NodeId};
use crate::load::LoadError;
use crate::model::contract::{document, list_document, ndjson_line};
use crate::model::finding::{Finding, Severity};
use crate::model::text::{sanitize, show_id, value_line};
use crate::model::time::format_ms;
use crate::open::action_table::KeptAction;
use crate::open::{Need, Setting};
use crate::verify::verdict::RecordVerdict;
use crate::verify::{Options, Trees};
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};

/// Loads, verifies and analyses; load problems go to stderr. Err is an exit code.
/// `trees`: whether records keep their parsed JSON ([`Trees`]).
pub fn open(args: &EvidenceArgs, trees: Trees) -> Result<Evidence, i32> {
    open_with_keys(args, trees).map(|(ev, _)| ev)
}

/// [`open`], also returning the trust (for what a report says of it).
pub fn open_with_keys(
    args: &EvidenceArgs,
    trees: Trees,
) -> Result<(Evidence, crate::verify::Keyring), i32> {
    let setting = setting_of(args)?;
    let ev = open_whole(&setting, &args.paths, trees)?;
    Ok((ev, setting.trust))
}

/// The setting `args` ask for; Err is an exit code (after saying why).
pub(super) fn setting_of(args: &EvidenceArgs) -> Result<Setting, i32> {
    let options = Options::default();
    let (keys, leases, traces) = (&args.keys, &args.leases, &args.traces);
    super::setting(&args.paths, keys, leases, options, traces, &args.index).map_err(|e| {
        eprintln!("aeplens: {e}");
        2
    })
}

/// Loads, verifies and analyses `paths` whole; load problems go to stderr. Err is an
/// exit code (2: nothing loaded).
pub(super) fn open_whole(
    setting: &Setting,
    paths: &[String],
    trees: Trees,
) -> Result<Evidence, i32> {
    let (opened, trace_problems) = super::open(setting, paths, Need::Whole(trees));
    let mut ev = opened.into_whole().ok_or(2)?;
    say_opened(setting, &ev.corpus, trace_problems)?;
    // The lease files are inputs of what is reported, as the evidence files are.
    ev.report
        .inputs
        .extend(setting.leases.inputs.iter().cloned());
    Ok(ev)
}

/// Says what an opening of `corpus` could not read (its load errors, the telemetry's
/// `trace_problems`, the lease files'), and each receipt of the lease files used for
/// nothing. Err is an exit code: 2 when nothing loaded.
pub(super) fn say_opened(
    setting: &Setting,
    corpus: &crate::load::Corpus,
    trace_problems: Vec<String>,
) -> Result<(), i32> {
    let errors = corpus.errors().map(LoadError::render);
    say_problems(setting, errors.chain(trace_problems));
    if corpus.is_empty() && corpus.errors().next().is_some() {
        return Err(2);
    }
    say_unused(setting, corpus);
    Ok(())
}

/// Notes each supplied ApprovalReceipt no action of `corpus` matches (a lease-file line
/// used for nothing).
pub(super) fn say_unused(setting: &Setting, corpus: &crate::load::Corpus) {
    for unused in setting.leases.unused_receipts(corpus) {
        super::note(&unused.render());
    }
}

/// Notes each load problem (`inputs`' rendered, then the lease files') on stderr; under
/// `-q`, says in one line how many.
pub(super) fn say_problems(setting: &Setting, inputs: impl Iterator<Item = String>) {
    let mut problems = 0;
    for problem in inputs.chain(setting.lease_errors.iter().map(LoadError::render)) {
        super::note(&problem);
        problems += 1;
    }
    if problems > 0 && super::quiet() {
        // Quiet hides the details, never that the evidence did not all load.
        let s = if problems == 1 { "" } else { "s" };
        eprintln!("aeplens: {problems} load error{s} (details hidden by -q)");
    }
}

/// True (after saying so) when `out` is one of the evidence files: never written.
pub fn refuses_output(paths: &[String], out: &str) -> bool {
    let refused = crate::load::is_evidence_file(paths, std::path::Path::new(out));
    if refused {
        eprintln!(
            "aeplens: refusing to write {}: it is one of the evidence files (aeplens never writes evidence)",
            sanitize(out)
        );
    }
    refused
}

/// The format asked for, else text on a terminal and JSON when piped.
pub(super) fn resolve(format: Option<Format>) -> Format {
    format.unwrap_or(if std::io::stdout().is_terminal() {
        Format::Text
    } else {
        Format::Json
    })
}

/// Writes `text` to stdout; 2 when stdout is gone.
pub(super) fn emit(text: &str) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(_) => 2,
    }
}

/// `aeplens findings`: from the evidence index alone when the same files were opened
/// before under the same configuration and are unchanged to the byte
/// ([`crate::open::kept_findings`]), else from the evidence opened for its report (the
/// analysis made in batches as `check` makes it, unless telemetry is joined).
pub fn findings(args: &FindingsArgs) -> i32 {
    let setting = match setting_of(&args.evidence) {
        Ok(setting) => setting,
        Err(code) => return code,
    };
    let paths = &args.evidence.paths;
    if let Some(text) = &args.filter.expression {
        return findings_where(args, &setting, text);
    }
    if let Some(kept) = crate::open::kept_findings(&setting, paths) {
        say_problems(&setting, kept.errors.into_iter());
        return findings_out(args, &kept.findings);
    }
    let (mut opened, trace_problems) =
        super::open(&setting, paths, Need::Report(super::check::BUDGET));
    let to_keep = opened.take_to_keep();
    let (corpus, _, found) = opened.parts();
    let errors = corpus.errors().map(LoadError::render);
    say_problems(&setting, errors.chain(trace_problems));
    say_unused(&setting, corpus);
    if corpus.is_empty() && corpus.errors().next().is_some() {
        return 2;
    }
    let code = findings_out(args, found);
    if let Some(to_keep) = to_keep {
        opened.keep(to_keep);
    }
    if opened.reread_failures() > 0 {
        2
    } else {
        code
    }
}

/// `findings --where EXPR`: the findings naming an action the expression matches, from
/// the evidence opened whole (marks from the explorer's review of it, when there is one).
fn findings_where(args: &FindingsArgs, setting: &Setting, text: &str) -> i32 {
    let query = match super::query::checked(text) {
        Ok(q) => q,
        Err(code) => return code,
    };
    let ev = match open_whole(setting, &args.evidence.paths, Trees::OnDisk) {
        Ok(ev) => ev,
        Err(code) => return code,
    };
    let passes = super::query::matching(&query, ev.as_ref(), None);
    let kept: Vec<Finding> = super::query::findings_where(ev.as_ref(), &passes)
        .into_iter()
        .cloned()
        .collect();
    let code = findings_out(args, &kept);
    if ev.reread_failures() > 0 { 2 } else { code }
}

/// Prints `findings` as `args` ask; the exit code (1 when `--fail-on` is met).
fn findings_out(args: &FindingsArgs, findings: &[Finding]) -> i32 {
    let min = args.min_severity.severity();
    let list: Vec<&Finding> = findings.iter().filter(|f| f.severity <= min).collect();
    let code = match resolve(args.format) {
        Format::Json => emit(&list_document("findings", &list)),
        Format::Text => emit(&findings_text(&list, terminal_width())),
    };
    let gate = args
        .fail_on
        .is_some_and(|s| findings.iter().any(|f| f.severity <= s.severity()));
    if code == 0 && gate { 1 } else { code }
}

/// The findings as a table, one line each.
pub fn findings_text(list: &[&Finding], width: Option<usize>) -> String {
    let mut s = String::new();
    for f in list {
        let line = format!(
            "{:<6} {:<26} {}{}  {}",
            f.severity.name().to_uppercase(),
            f.id,
            sanitize(f.run_id.as_deref().unwrap_or("—")),
            if f.action_ids.is_empty() {
                String::new()
            } else {
                let ids: Vec<_> = f.action_ids.iter().map(|a| show_id(a)).collect();
                format!(" / {}{}", ids.join(", "), f.identity_text())
            },
            sanitize(&f.message)
        );
        // On a terminal the message wraps under itself, never cut; piped, one line each.
        match width {
            Some(w) => {
                for l in crate::model::text::wrap_line(&line, w, 7) {
                    let _ = writeln!(s, "{l}");
                }
            }
            None => {
                let _ = writeln!(s, "{line}");
            }
        }
    }
    let count = |sev| list.iter().filter(|f| f.severity == sev).count();
    let _ = writeln!(
        s,
        "{} findings: {} high, {} medium, {} low, {} info",
        list.len(),
        count(Severity::High),
        count(Severity::Medium),
        count(Severity::Low),
        count(Severity::Info)
    );
    s
}

/// `aeplens show`: from the evidence index when every file is unchanged to the byte and
/// the actions' views were kept there by an earlier `show` or `check`
/// ([`crate::open::kept_actions`]), else from the evidence opened (and the views kept for
/// next time).
pub fn show(args: &ShowArgs) -> i32 {
    let setting = match setting_of(&args.evidence) {
        Ok(setting) => setting,
        Err(code) => return code,
    };
    if let Some(code) = show_kept(args, &setting) {
        return code;
    }
    let ev = match open_whole(&setting, &args.evidence.paths, Trees::OnDisk) {
        Ok(ev) => ev,
        Err(code) => return code,
    };
    let code = show_opened(args, &ev);
    // Not kept (a full disk, a document among the inputs): the next show opens again.
    crate::open::keep_answers(&setting, &ev);
    code
}

/// [`show`] of opened evidence.
fn show_opened(args: &ShowArgs, ev: &Evidence) -> i32 {
    let g = &ev.analysis.graph;
    let mut nodes: Vec<NodeId> = match &args.run {
        Some(run) => g.find_in_run(&ev.corpus, run, &args.action_id),
        None => g.find_all(&ev.corpus, &args.action_id),
    };
    // In the order of the kept table (`show_kept`): by record, then position.
    nodes.sort_by_key(|&n| (g.nodes[n as usize].record, g.nodes[n as usize].pos));
    let found: Vec<(NodeId, Candidate<&str>)> = (nodes.into_iter())
        .map(|n| {
            let run = g.runs[g.nodes[n as usize].run as usize].id.as_str();
            (n, (run, g.chain_name(&ev.corpus, n)))
        })
        .collect();
    let node = match pick(args, found) {
        Ok(node) => node,
        Err(why) => {
            eprint!("{why}");
            return 2;
        }
    };
    let Some(mut report) =
        ev.analysis
            .show(&ev.corpus, node, &ev.findings, Some(&ev.report.records))
    else {
        reread_failures(ev);
        return 2;
    };
    report.telemetry = (ev.capture.as_ref()).and_then(|c| c.action_view(node, report.run_id));
    let code = show_out(args, &report);
    if reread_failures(ev) { 2 } else { code }
}

/// [`show`] from the actions' views kept in the index; `None` when they are not there or
/// a record they need cannot be read as it was verified (then the evidence is opened).
fn show_kept(args: &ShowArgs, setting: &Setting) -> Option<i32> {
    let table = crate::open::kept_actions(setting, &args.evidence.paths)?;
    let found: Vec<(KeptAction, Candidate<String>)> = (table.find(&args.action_id)?.into_iter())
        .filter(|a| args.run.as_deref().is_none_or(|run| a.run_id() == run))
        .map(|a| {
            let candidate = (a.run_id().to_string(), a.chain().clone());
            (a, candidate)
        })
        .collect();
    let one = match pick(args, found) {
        Ok(one) => one,
        Err(why) => {
            say_problems(setting, table.errors().iter().cloned());
            eprint!("{why}");
            return Some(2);
        }
    };
    let read = table.read(&one)?;
    let report = one.report(&read)?;
    say_problems(setting, table.errors().iter().cloned());
    Some(show_out(args, &report))
}

/// An action `show` may mean: its run and its emitter chain.
type Candidate<R> = (R, ChainName);

/// The one action of `found` that `--chain` (when given) names; else why there is not
/// one (none, one in each of many runs, or one on each of several emitter chains of a
/// run, listed for `--chain`), as lines to print. Nothing is picked of several.
fn pick<T, R: AsRef<str>>(args: &ShowArgs, found: Vec<(T, Candidate<R>)>) -> Result<T, String> {
    let mut found: Vec<(T, Candidate<R>)> = (found.into_iter())
        .filter(|(_, (_, chain))| args.chain.as_deref().is_none_or(|c| chain.is(c)))
        .collect();
    if found.len() == 1 {
        return Ok(found.remove(0).0);
    }
    let mut why = String::new();
    let id = sanitize(&args.action_id);
    let mut runs: Vec<&str> = Vec::new();
    for (_, (run, _)) in &found {
        if !runs.contains(&run.as_ref()) {
            runs.push(run.as_ref());
        }
    }
    if found.is_empty() {
        let run = (args.run.as_deref()).map(|r| format!(" in run {:?}", sanitize(r)));
        let chain = (args.chain.as_deref()).map(|c| format!(" on chain {}", sanitize(c)));
        let _ = writeln!(
            why,
            "aeplens: no action {id:?}{}{} in the evidence",
            run.unwrap_or_default(),
            chain.unwrap_or_default()
        );
    } else if runs.len() > 1 && args.run.is_none() {
        let names: Vec<String> = runs.iter().map(|r| sanitize(r).into_owned()).collect();
        let _ = writeln!(
            why,
            "aeplens: action {id:?} occurs in {} runs ({}); pick one with --run",
            names.len(),
            names.join(", ")
        );
    } else {
        let _ = writeln!(
            why,
            "aeplens: action {id:?} of run {:?} is {} actions, one on each of these emitter chains (an action is its chain and its id); pick one with --chain:",
            sanitize(runs[0]),
            found.len()
        );
        for (_, (_, chain)) in &found {
            let signer = (chain.signer.as_deref()).map(|k| format!("; signed by {}", sanitize(k)));
            let _ = writeln!(
                why,
                "  --chain {}  ({}{})",
                sanitize(&chain.head),
                chain.start.name(),
                signer.unwrap_or_default()
            );
        }
    }
    Err(why)
}

/// Prints one action's views as `args` ask; the exit code.
fn show_out(args: &ShowArgs, report: &ActionReport<'_>) -> i32 {
    match resolve(args.format) {
        Format::Json => emit(&document("show", report)),
        Format::Text => emit(&show_text(report, terminal_width())),
    }
}

/// Says which records could not be read again as they were verified (their file changed
/// after loading); true when some could not.
fn reread_failures(ev: &Evidence) -> bool {
    for r in ev.corpus.records() {
        if let Some(e) = r.reread_error() {
            eprintln!("aeplens: {}: {}", sanitize(&r.source.to_string()), e);
        }
    }
    ev.reread_failures() > 0
}

/// The terminal's width when stdout is one; `None` when piped (nothing is then cut).
pub fn terminal_width() -> Option<usize> {
    std::io::stdout()
        .is_terminal()
        .then(crate::tui::terminal_width)
        .flatten()
}

/// One action's views as text a reviewer reads: the three answers and the findings
/// first, then drift, lease and digests in detail. `width`: the terminal's columns when
/// printing to one (long values are cut to fit); `None` when piped (nothing is cut).
pub fn show_text(r: &ActionReport<'_>, width: Option<usize>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "action {} · run {} · {}{}",
        sanitize(r.action_id.unwrap_or("(no action_id)")),
        sanitize(r.run_id),
        sanitize(&r.source.to_string()),
        if r.copies > 1 {
            format!(" ({} copies in chained snapshots)", r.copies)
        } else {
            String::new()
        }
    );
    let _ = writeln!(s, "emitter chain from {}", sanitize(&r.chain.to_string()));
    let _ = match &r.verdict {
        Some(v) => writeln!(s, "its record: {}", v.short()),
        None => writeln!(s, "its record: not verified"),
    };
    let section =
        |s: &mut String, title: &str, fields: &[crate::analysis::authority::Field<'_>]| {
            let _ = writeln!(s, "\n{title}");
            for f in fields {
                let value = f
                    .value
                    .map_or("not recorded".into(), |v| value_line(f.name, v));
                let _ = writeln!(s, "  {:<24} {value} [{}]", f.name, f.dialect);
            }
        };
    section(&mut s, "1. AUTHORITY AVAILABLE", &r.authority.available());
    section(&mut s, "2. AUTHORITY EXERCISED", &r.authority.exercised());
    let _ = writeln!(s, "\n3. CHANGED BETWEEN APPROVAL AND EXECUTION");
    for c in &r.authority.changed {
        let _ = writeln!(
            s,
            "  {:<20} {:<15} {}",
            c.what,
            c.status.name(),
            sanitize(&c.summary.to_string())
        );
    }
    if let Some(t) = &r.telemetry {
        let line = match t["span"].as_object() {
            Some(span) => format!(
                "telemetry: span {} ({}, {}) joined by {}",
                span["span_id"].as_str().unwrap_or(""),
                span["name"].as_str().unwrap_or(""),
                span["status"].as_str().unwrap_or(""),
                t["joined_by"].as_str().unwrap_or("")
            ),
            None => "telemetry: no span of the run's telemetry saw this action".to_string(),
        };
        let _ = writeln!(s, "{}", sanitize(&line));
    }
    findings_section(&mut s, &r.findings);
    let d = &r.drift;
    let _ = writeln!(
        s,
        "\nDRIFT  {} ({}) · approved {} · observed {} · equality {} · bound to {} ({})",
        d.result.name(),
        d.dialect.unwrap_or("no evidence"),
        sanitize(d.approved_digest.unwrap_or("not recorded")),
        sanitize(d.observed_digest.unwrap_or("not recorded")),
        sanitize(d.equality_version.unwrap_or("not recorded")),
        sanitize(d.bound_to.unwrap_or("nothing")),
        d.binding.name(),
    );
    if let Some(note) = &d.interpretation {
        let _ = writeln!(s, "       aeplens interpretation: {}", sanitize(note));
    }
    match r.lease {
        None => {
            let _ = writeln!(s, "\nLEASE  not under a lease (no scope_lease_id)");
        }
        Some(l) => {
            let t = |v: Option<f64>| v.map_or_else(|| "unknown".into(), format_ms);
            let _ = writeln!(
                s,
                "\nLEASE  {} · {} window [{} → {}) · executed {} · verdict {}{}",
                sanitize(&l.lease_id),
                l.source.name(),
                t(l.granted_at_ms),
                t(l.expires_at_ms),
                t(l.executed_at_ms),
                l.verdict.name(),
                match (l.ordinal, l.max_invocations) {
                    (Some(o), Some(m)) => format!(" · invocation {o} of {m}"),
                    (Some(o), None) => format!(" · invocation {o}"),
                    _ => String::new(),
                }
            );
            if let (Some(first), Some(last)) = (l.first_use_ms, l.last_use_ms) {
                let _ = writeln!(
                    s,
                    "       used between {} and {} in the loaded evidence",
                    format_ms(first),
                    format_ms(last)
                );
            }
            for n in l.notes.iter() {
                let _ = writeln!(s, "       note: {n}");
            }
        }
    }
    let _ = writeln!(s, "\nDIGESTS");
    if r.digests.is_empty() {
        let _ = writeln!(s, "  no state digests recorded");
    }
    for dv in &r.digests {
        let c = &dv.comparability;
        let why = c
            .why()
            .map(|w| format!(": {}", sanitize(w)))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "  {:<4} {:<20} {:<12} {}{}{}",
            dv.which,
            value_line("digest", dv.digest),
            sanitize(dv.kind.unwrap_or("no kind")),
            c.state.name(),
            why,
            if c.interpretation {
                " (aeplens interpretation)"
            } else {
                ""
            }
        );
    }
    if let Some(p) = &r.pre_post {
        let _ = writeln!(
            s,
            "  pre→post: {}{}",
            p.verdict.name(),
            p.note
                .as_deref()
                .map(|n| format!(" ({})", sanitize(n)))
                .unwrap_or_default()
        );
    }
    for gap in &r.state_gaps {
        let _ = writeln!(
            s,
            "  state gap: post {} ≠ next pre {}",
            sanitize(&gap.post),
            sanitize(&gap.pre)
        );
    }
    crate::model::text::wrap_lines(&s, width, 4)
}

/// The FINDINGS section of `show`.
fn findings_section(s: &mut String, findings: &[&Finding]) {
    let _ = writeln!(s, "\nFINDINGS");
    if findings.is_empty() {
        let _ = writeln!(s, "  none");
    }
    for f in findings {
        let _ = writeln!(
            s,
            "  {:<6} {:<26} {}",
            f.severity.name().to_uppercase(),
            f.id,
            sanitize(&f.message)
        );
    }
}

/// `aeplens envelope`.
pub fn envelope(args: &EvidenceArgs) -> i32 {
    let ev = match open(args, Trees::Held) {
        Ok(ev) => ev,
        Err(code) => return code,
    };
    /// A decision envelope with its side data: which emitter chain the action is on and
    /// its record's verdict (not part of the projection, analysis-rules §8).
    #[derive(serde::Serialize)]
    struct EnvelopeOut<'a> {
        #[serde(flatten)]
        envelope: crate::analysis::envelope::DecisionEnvelope<'a>,
        chain: crate::analysis::lineage::ChainName,
        verdict: Option<RecordVerdict>,
    }
    let g = &ev.analysis.graph;
    let mut s = String::new();
    for (node, envelope) in ev.analysis.envelopes(&ev.corpus) {
        s.push_str(&ndjson_line(&EnvelopeOut {
            envelope,
            chain: g.chain_name(&ev.corpus, node),
            verdict: ev.as_ref().verdict(node),
        }));
    }
    emit(&s)
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_wrap_on_a_terminal_and_stay_whole_when_piped() {
        let text = "short\na line much longer than twenty columns\n";
        let wrap = |w| crate::model::text::wrap_lines(text, w, 4);
        assert_eq!(wrap(None), text);
        let fitted = wrap(Some(20));
        assert!(fitted.lines().all(|l| l.chars().count() <= 20), "{fitted}");
        assert!(
            fitted.contains("short\n") && !fitted.contains('…'),
            "{fitted}"
        );
        assert_eq!(
            fitted.split_whitespace().collect::<Vec<_>>(),
            text.split_whitespace().collect::<Vec<_>>(),
            "no word cut or lost"
        );
    }
}
