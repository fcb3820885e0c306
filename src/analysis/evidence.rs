//! One opened body of evidence: the loaded corpus, its verification report, the
//! analysis and every finding — what the CLI commands and the explorer work from.

use super::Analysis;
use super::gathered::Batch;
use super::lease::SuppliedLeases;
use super::{findings, groups};
use crate::load::{Corpus, LoadError};
use crate::model::finding::Finding;
use crate::verify::prior::Reuse;
use crate::verify::{ErrorOut, Keyring, Options, RecordResult, Report, verify_inputs};

/// Loaded, verified and analysed evidence.
#[derive(Debug)]
pub struct Evidence {
    pub corpus: Corpus,
    pub report: Report,
    pub analysis: Analysis,
    /// Every finding, sorted by severity, then time, then id, run, actions and message.
    pub findings: Vec<Finding>,
    /// How long each phase took (`verify`, `analysis`, `findings`), for `--timings`.
    pub timings: Vec<(&'static str, std::time::Duration)>,
    /// What the evidence index did (all zero without one).
    pub reuse: Reuse,
    /// The agent's telemetry joined to the evidence (`--traces`), when given.
    pub capture: Option<super::capture::Capture>,
}

/// How far an opening is ([`crate::open::open`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loading {
    /// `bytes` read and `records` verified so far.
    Read { bytes: u64, records: usize },
    /// Everything is read and verified; the analysis of `records` records runs.
    Analysing { records: usize },
}

/// Opened evidence by reference: what the explorer holds (behind `Arc`s) and what
/// [`Evidence`] owns, for code that reads either.
#[derive(Clone, Copy, Debug)]
pub struct EvidenceRef<'a> {
    pub corpus: &'a Corpus,
    pub report: &'a Report,
    pub analysis: &'a Analysis,
    pub findings: &'a [Finding],
    /// The telemetry joined to the evidence, when given.
    pub capture: Option<&'a super::capture::Capture>,
}

impl EvidenceRef<'_> {
    /// The verdict of the record an action (a node) is shown from.
    pub fn verdict(
        &self,
        node: super::graph::NodeId,
    ) -> Option<crate::verify::verdict::RecordVerdict> {
        let record = self.analysis.graph.nodes.get(node as usize)?.record;
        (self.report.records.get(record as usize)).map(crate::verify::verdict::RecordVerdict::of)
    }
}

impl Evidence {
    /// The evidence by reference.
    pub fn as_ref(&self) -> EvidenceRef<'_> {
        EvidenceRef {
            corpus: &self.corpus,
            report: &self.report,
            analysis: &self.analysis,
            findings: &self.findings,
            capture: self.capture.as_ref(),
        }
    }

    /// Joins the agent's telemetry to the evidence (analysis-rules §9): each record of a
    /// traced run gets its `capture` axis, the capture findings join the others (after
    /// those of the same severity, in time order). Kept answers of the evidence index
    /// never hold any of it: they are made without telemetry.
    pub fn add_capture(&mut self, telemetry: crate::load::traces::Telemetry, tolerance_ms: f64) {
        use crate::verify::{CaptureAxis, RunCaptured};
        let clock = std::time::Instant::now();
        self.timings.push(("telemetry: read", telemetry.read_time));
        let mut capture =
            super::capture::Capture::join(&self.corpus, &self.analysis, telemetry, tolerance_ms);
        let runs: rustc_hash::FxHashMap<&str, &super::capture::RunCapture> = capture
            .runs
            .iter()
            .map(|r| (r.run_id.as_str(), r))
            .collect();
        for r in &mut self.report.records {
            if let Some(run) = r.run_id.as_deref().and_then(|id| runs.get(id)) {
                r.capture = CaptureAxis {
                    evaluated: true,
                    run: Some(Box::new(RunCaptured {
                        status: run.status.to_string(),
                        witness: "opentelemetry-traces".to_string(),
                        run_spans: run.spans,
                        spans_without_action: run.spans_without_action,
                        run_actions: run.actions,
                        actions_without_span: run.actions_without_span,
                        not_judged: run.not_judged,
                    })),
                };
            }
        }
        let mut found = std::mem::take(&mut capture.findings);
        super::findings::identify(&self.corpus, &self.analysis, &mut found);
        found.sort_by(|(a, ta), (b, tb)| {
            a.severity
                .cmp(&b.severity)
                .then(super::graph::time_order(*ta, *tb))
                .then_with(|| a.message.cmp(&b.message))
        });
        let mut merged = Vec::with_capacity(self.findings.len() + found.len());
        let mut found = found.into_iter().map(|(f, _)| f).peekable();
        for f in std::mem::take(&mut self.findings) {
            while let Some(c) = found.next_if(|c| c.severity < f.severity) {
                merged.push(c);
            }
            merged.push(f);
        }
        merged.extend(found);
        self.findings = merged;
        self.capture = Some(capture);
        self.timings.push(("telemetry: join", clock.elapsed()));
    }

    /// Verifies and analyses a corpus. V17 (copies rewritten across chained snapshots)
    /// is added to the semantic axis of the record holding the rewritten copy.
    pub fn open(
        corpus: Corpus,
        keys: &Keyring,
        options: &Options,
        leases: &SuppliedLeases,
    ) -> Evidence {
        let clock = std::time::Instant::now();
        let report = verify_inputs(&corpus.inputs, keys, options, None);
        let verified = ("verify (signatures, checks, chains)", clock.elapsed());
        Evidence::verified(corpus, report, leases, vec![verified])
    }

    /// Analyses verified evidence (its corpus and the report on it) and gathers every
    /// finding; `timings` are the phases so far.
    pub fn verified(
        corpus: Corpus,
        report: Report,
        leases: &SuppliedLeases,
        mut timings: Vec<(&'static str, std::time::Duration)>,
    ) -> Evidence {
        let clock = std::time::Instant::now();
        let hashes = report.canonical_hashes();
        let analysis = Analysis::with_hashes(&corpus, hashes, leases);
        let analysed = clock.elapsed();
        let (report, findings) = complete(&corpus, &analysis, report);
        timings.push(("analysis", analysed));
        timings.push(("findings", clock.elapsed().saturating_sub(analysed)));
        Evidence::assemble(corpus, report, analysis, findings, timings)
    }

    /// Evidence of its parts, records that could not be read again noted
    /// ([`Evidence::note_rereads`]).
    pub fn assemble(
        corpus: Corpus,
        report: Report,
        analysis: Analysis,
        findings: Vec<Finding>,
        timings: Vec<(&'static str, std::time::Duration)>,
    ) -> Evidence {
        let mut ev = Evidence {
            corpus,
            report,
            analysis,
            findings,
            timings,
            reuse: Reuse::default(),
            capture: None,
        };
        ev.note_rereads();
        ev
    }

    /// How many records could not be read again as they were verified (their file
    /// changed after loading): what needed them is missing, so no answer is complete.
    pub fn reread_failures(&self) -> usize {
        reread_failures(&self.corpus)
    }

    /// Records whose tree was let go and could not be read again as verified (the file
    /// changed since) become load errors of their input, in the corpus and the report:
    /// what needed them is missing, and that is said.
    pub fn note_rereads(&mut self) {
        note_rereads(&mut self.corpus, &mut self.report);
    }
}

/// How many records of `corpus` could not be read again as they were verified.
pub fn reread_failures(corpus: &Corpus) -> usize {
    corpus
        .records()
        .filter(|r| r.reread_error().is_some())
        .count()
}

/// [`Evidence::note_rereads`] on a corpus and its report.
pub fn note_rereads(corpus: &mut Corpus, report: &mut Report) {
    let failed: Vec<(usize, LoadError)> = (0..corpus.len())
        .filter_map(|i| {
            let record = corpus.record(i);
            let message = record.reread_error()?;
            let error = LoadError {
                column: None,
                excerpt: None,
                path: record.source.path.clone(),
                line: Some(record.source.line),
                message: format!(
                    "{message}: the findings and views that need this record are left out"
                ),
            };
            Some((corpus.input_of(i), error))
        })
        .collect();
    for (input, error) in failed {
        let known = &mut corpus.inputs[input].errors;
        if known.contains(&error) {
            continue;
        }
        if let Some(out) = report.inputs.get_mut(input) {
            out.errors.push(ErrorOut::from(&error));
        }
        known.push(error);
    }
}

/// Adds what needs the analysis to a report — V17 violations on the semantic axis of the
/// record holding a rewritten copy — and gathers every finding, fingerprinted.
pub fn complete(
    corpus: &Corpus,
    analysis: &Analysis,
    mut report: Report,
) -> (Report, Vec<Finding>) {
    add_rewritten(corpus, analysis, &mut report, |i| i);
    let verdicts: Vec<&RecordResult> = report.records.iter().collect();
    let timed = findings::all(corpus, &verdicts, analysis);
    finish(corpus, report, timed)
}

/// [`complete`] without the whole analysis at once: it runs over batches of about
/// `budget` records, each batch whole [`groups::independent`] groups (a larger group is a
/// batch of its own), and is let go before the next — what is found is the same.
/// `on_batch` hears of each batch analysed, with its findings as the opening's will be.
pub fn complete_in_groups(
    corpus: &mut Corpus,
    mut report: Report,
    leases: &SuppliedLeases,
    budget: usize,
    mut on_batch: Option<&mut dyn FnMut(&Batch<'_>)>,
) -> (Report, Vec<Finding>) {
    let mut found = findings::Packed::default();
    let places = (on_batch.as_ref()).map(|_| findings::fingerprints::Places::of(corpus));
    let hashes = report.records.iter().map(|r| r.canonical_sha256);
    let batches = groups::batches(groups::independent(corpus, hashes), budget);
    // Each batch reads its records' facts again: the ids kept to group them are let go.
    for record in corpus.inputs.iter_mut().flat_map(|i| &mut i.records) {
        record.let_go_of_ids();
    }
    for batch in batches {
        let part = corpus.subset(&batch);
        let part_hashes = (batch.iter())
            .map(|&i| report.records[i as usize].canonical_sha256)
            .collect();
        let analysis = Analysis::with_hashes(&part, part_hashes, leases);
        add_rewritten(&part, &analysis, &mut report, |i| batch[i] as usize);
        let verdicts: Vec<&RecordResult> =
            batch.iter().map(|&i| &report.records[i as usize]).collect();
        let timed = findings::all(&part, &verdicts, &analysis);
        found.push(&timed);
        if let (Some(on_batch), Some(places)) = (on_batch.as_deref_mut(), &places) {
            // The batch's findings as the opening's will be.
            let mut mine = findings::dedupe_and_sort(timed);
            for f in &mut mine {
                f.fingerprint = places.fingerprint(f, &report.records);
            }
            on_batch(&Batch {
                corpus: &part,
                analysis: &analysis,
                findings: &mine,
                verdicts: &report.records,
                numbers: Some(&batch),
            });
        }
        for (&i, copy) in batch.iter().zip(part.records()) {
            // Analysed: the facts a small store's records kept since verification go.
            let record = corpus.record_mut(i as usize);
            record.note_reread_error_of(copy);
            record.let_go_of_facts();
        }
    }
    finish(corpus, report, found.unpack())
}

/// V17 violations on the semantic axis of the record holding a rewritten copy; `at` maps
/// a record of `corpus` to its place in `report`.
fn add_rewritten(
    corpus: &Corpus,
    analysis: &Analysis,
    report: &mut Report,
    at: impl Fn(usize) -> usize,
) {
    for (record, violation) in analysis.rewritten(corpus) {
        let axis = std::sync::Arc::make_mut(&mut report.records[at(record)].semantic);
        axis.violations.push(violation);
        axis.status = Some(crate::verify::CheckStatus::Fail);
    }
}

/// The findings in order, every one (and each record's own) fingerprinted.
fn finish(
    corpus: &Corpus,
    mut report: Report,
    mut timed: Vec<findings::Timed>,
) -> (Report, Vec<Finding>) {
    // The anchors' findings that concern no loaded record (d.7).
    timed.extend(report.links.unplaced.iter().map(|f| (f.clone(), None)));
    let mut findings = findings::dedupe_and_sort(timed);
    findings::fingerprints::fingerprint_all(corpus, &mut findings, &mut report.records);
    (report, findings)
}
