//! One opened body of evidence: the loaded corpus, its verification report, the
//! analysis and every finding — what the CLI commands and the explorer work from.

use super::Analysis;
use super::chain_answers::{self, ChainAnswers};
use super::gathered::{Batch, Numbering};
use super::lease::SuppliedLeases;
use super::{action_table, findings, groups};
use crate::load::{Corpus, LoadError};
use crate::model::finding::Finding;
use crate::verify::index::spill::Spill;
use crate::verify::index::{Claim, Index, IndexUse};
use crate::verify::{
    ErrorOut, Keyring, Options, RecordResult, Report, SemanticAxis, Trees, verify_inputs,
    verify_paths,
};
use serde::{Deserialize, Serialize};

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
    pub index: IndexUse,
    /// The agent's telemetry joined to the evidence (`--traces`), when given.
    pub capture: Option<super::capture::Capture>,
}

/// How far [`Evidence::load`] is.
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

    /// Loads, verifies and analyses `paths`, each record verified as its chunk is read
    /// ([`verify_paths`]): what [`Evidence::open`] gives on the loaded paths, without the
    /// store's bytes all in memory at once. With an `index`, files it holds are parsed but
    /// not verified again. `trees` says whether records keep their parsed JSON
    /// ([`Trees`]). `progress` hears how far it is.
    pub fn load(
        paths: &[String],
        keys: &Keyring,
        options: &Options,
        leases: &SuppliedLeases,
        index: Option<&Index>,
        trees: Trees,
        progress: &mut dyn FnMut(Loading),
    ) -> Evidence {
        let clock = std::time::Instant::now();
        // The whole analysis reads every record's facts: none keeps only its ids.
        let trees = match trees {
            Trees::OnlyIds { .. } => Trees::OnDisk,
            trees => trees,
        };
        let (inputs, report, used) =
            verify_paths(paths, keys, options, index, trees, &mut |bytes, records| {
                progress(Loading::Read { bytes, records });
            });
        progress(Loading::Analysing {
            records: report.records.len(),
        });
        let verified = ("read, parse and verify", clock.elapsed());
        let corpus = Corpus::new(inputs);
        let mut ev = Evidence::verified_indexed(corpus, report, leases, vec![verified], index);
        ev.index = used;
        ev
    }

    /// Analyses verified evidence (its corpus and the report on it) and gathers every
    /// finding; `timings` are the phases so far.
    pub fn verified(
        corpus: Corpus,
        report: Report,
        leases: &SuppliedLeases,
        timings: Vec<(&'static str, std::time::Duration)>,
    ) -> Evidence {
        Evidence::verified_indexed(corpus, report, leases, timings, None)
    }

    /// [`Evidence::verified`], the findings of the same inputs opened before under the
    /// same configuration taken from the `index` (kept there when they were not).
    pub fn verified_indexed(
        corpus: Corpus,
        report: Report,
        leases: &SuppliedLeases,
        mut timings: Vec<(&'static str, std::time::Duration)>,
        index: Option<&Index>,
    ) -> Evidence {
        let clock = std::time::Instant::now();
        let hashes = report.canonical_hashes();
        let opening = index.zip(Index::opening_name(&corpus.inputs));
        // What the same opening completed to before is read beside the analysis: it needs
        // none of it, and both are mostly one core's work.
        let key = Index::kept_key_of(COMPLETED, &corpus.inputs);
        let (analysis, recalled) = rayon::join(
            || Analysis::with_hashes(&corpus, hashes, leases),
            || {
                let (index, name) = opening.as_ref()?;
                index.recall::<Completion>(&key, name)
            },
        );
        let analysed = clock.elapsed();
        let (report, findings) = complete_indexed(&corpus, &analysis, report, opening, recalled);
        timings.push(("analysis", analysed));
        timings.push(("findings", clock.elapsed().saturating_sub(analysed)));
        let mut ev = Evidence {
            corpus,
            report,
            analysis,
            findings,
            timings,
            index: IndexUse::default(),
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
fn reread_failures(corpus: &Corpus) -> usize {
    corpus
        .records()
        .filter(|r| r.reread_error().is_some())
        .count()
}

/// [`Evidence::note_rereads`] on a corpus and its report.
fn note_rereads(corpus: &mut Corpus, report: &mut Report) {
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

/// How much of the analysis [`Checked::load`] holds at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// About how many records are analysed together ([`complete_in_groups`]).
    pub batch: usize,
    /// With up to this many records, every record keeps all its facts from its
    /// verification to its batch; with more, each keeps only its ids
    /// ([`Trees::OnlyIds`]) and its batch reads its line again.
    pub facts_kept: usize,
}

/// Evidence verified and completed without the analysis kept: what `check` and
/// `findings` report from ([`Checked::load`]).
#[derive(Debug)]
pub struct Checked {
    pub corpus: Corpus,
    pub report: Report,
    /// Every finding, sorted by severity, then time, then id, run, actions and message.
    pub findings: Vec<Finding>,
    /// How long each phase took, for `--timings`.
    pub timings: Vec<(&'static str, std::time::Duration)>,
    /// What the evidence index did (all zero without one).
    pub index: IndexUse,
    /// What is still to be kept in the index ([`Checked::take_to_keep`]).
    to_keep: Option<ToKeep>,
}

impl Checked {
    /// [`Evidence::load`] with the analysis made over batches of about `budget.batch`
    /// records ([`complete_in_groups`]) and let go of: the same report and findings, with
    /// only a batch's analysis in memory at once. Records' trees are let go once
    /// verified, and past `budget.facts_kept` records their facts too, but for their ids
    /// ([`Trees::OnlyIds`]). With an `index`, files it holds are not verified again, and
    /// what the same opening completed to before is taken instead of the analysis; else
    /// what this one completes to — with each action's views and the chains, gathered
    /// batch by batch for `show` and `chains` (under the default profile, which they open
    /// with) — is to be kept there ([`Checked::take_to_keep`]).
    pub fn load(
        paths: &[String],
        keys: &Keyring,
        options: &Options,
        leases: &SuppliedLeases,
        index: Option<&Index>,
        budget: Budget,
        progress: &mut dyn FnMut(Loading),
    ) -> Checked {
        let clock = std::time::Instant::now();
        // A record keeps only its ids until its batch reads its facts again (unless the
        // records are few): a store's facts are never all in memory.
        let (inputs, report, used) = verify_paths(
            paths,
            keys,
            options,
            index,
            Trees::OnlyIds {
                after: budget.facts_kept,
            },
            &mut |bytes, records| {
                progress(Loading::Read { bytes, records });
            },
        );
        progress(Loading::Analysing {
            records: report.records.len(),
        });
        let mut timings = vec![("read, parse and verify", clock.elapsed())];
        let clock = std::time::Instant::now();
        let mut corpus = Corpus::new(inputs);
        let opening = index.zip(Index::opening_name(&corpus.inputs));
        let mut to_keep = None;
        let recalled = opening.as_ref().and_then(|(index, name)| {
            let key = Index::kept_key_of(COMPLETED, &corpus.inputs);
            index.recall::<Completion>(&key, name)
        });
        let mut report = report;
        let applied = recalled.and_then(|done| done.apply(&mut report));
        let (mut report, findings) = match (applied, &opening) {
            (Some(findings), _) => (report, findings),
            (None, None) => complete_in_groups(&mut corpus, report, leases, budget.batch, None),
            (None, Some((index, name))) => {
                // Later commands open evidence under the default profile.
                let default = options.profile == Options::default().profile;
                let mut keeping = default
                    .then(|| Keeping::new(index, &corpus, name))
                    .flatten();
                let completed = {
                    let mut add = (keeping.as_mut()).map(|k| move |b: &Batch<'_>| k.add(b));
                    let on_batch = add.as_mut().map(|f| f as &mut dyn FnMut(&Batch<'_>));
                    complete_in_groups(&mut corpus, report, leases, budget.batch, on_batch)
                };
                to_keep = Some(ToKeep {
                    opening: name.clone(),
                    keeping,
                });
                completed
            }
        };
        note_rereads(&mut corpus, &mut report);
        timings.push(("analysis and findings", clock.elapsed()));
        Checked {
            corpus,
            report,
            findings,
            timings,
            index: used,
            to_keep,
        }
    }

    /// What is left to keep in the index for this opening ([`ToKeep::keep`]), taken out:
    /// to be kept while the answer is written.
    pub fn take_to_keep(&mut self) -> Option<ToKeep> {
        self.to_keep.take()
    }

    /// [`Evidence::reread_failures`].
    pub fn reread_failures(&self) -> usize {
        reread_failures(&self.corpus)
    }
}

/// What the analysis of an opening gave that is still to be kept in the index: its
/// completion, and what later commands answer from ([`Keeping`]).
#[derive(Debug)]
pub struct ToKeep {
    opening: String,
    keeping: Option<Keeping>,
}

impl ToKeep {
    /// Keeps it in `index` (the one `checked` was loaded with): nothing when a record
    /// could not be read again as verified, or the index cannot be written (the next
    /// open keeps it then).
    pub fn keep(self, index: &Index, checked: &Checked) {
        let (corpus, report) = (&checked.corpus, &checked.report);
        let completion =
            || keep_completion(index, &self.opening, corpus, report, &checked.findings);
        let gathered = || {
            if let Some(keeping) = self.keeping {
                keeping.keep(index, &self.opening, corpus, &report.records);
            }
        };
        rayon::join(completion, gathered);
    }
}

/// [`complete`], with an index and the `opening`'s name in it ([`Index::opening_name`]:
/// the same files, byte for byte, in the same order, under the same configuration): what
/// that gave before (`recalled`) is taken, so the records the findings quote are not read
/// again, and what it gives is kept there.
fn complete_indexed(
    corpus: &Corpus,
    analysis: &Analysis,
    report: Report,
    opening: Option<(&Index, String)>,
    recalled: Option<Completion>,
) -> (Report, Vec<Finding>) {
    let mut report = report;
    if let Some(findings) = recalled.and_then(|done| done.apply(&mut report)) {
        return (report, findings);
    }
    let (report, findings) = complete(corpus, analysis, report);
    if let Some((index, opening)) = opening {
        keep_completion(index, &opening, corpus, &report, &findings);
    }
    (report, findings)
}

/// Keeps what completing the opening `opening` of `corpus` gave (`report`, `findings`)
/// in `index` — unless a record could not be read again as verified (then the findings
/// are not complete), or the index cannot be written (the next open completes it again).
fn keep_completion(
    index: &Index,
    opening: &str,
    corpus: &Corpus,
    report: &Report,
    findings: &[Finding],
) {
    if corpus.records().any(|r| r.reread_error().is_some()) {
        return;
    }
    let kept = CompletionRef {
        records: report.records.len(),
        fingerprints: (report.records.iter().flat_map(|r| &r.findings))
            .map(|f| f.fingerprint.as_str())
            .collect(),
        rewritten: (report.records.iter().enumerate())
            .filter(|(_, r)| r.semantic.violations.iter().any(|v| v.rule == "V17"))
            .map(|(i, r)| (i, &*r.semantic))
            .collect(),
        findings,
        errors: corpus.errors().map(LoadError::render).collect(),
    };
    let key = Index::kept_key_of(COMPLETED, &corpus.inputs);
    let _ = index.remember(&key, opening, &kept);
}

/// What [`complete`] adds to a report — the fingerprint of each record's own findings
/// and the semantic axis of each record holding a copy rewritten across snapshots (V17)
/// — and the findings across records: kept in the index for an opening
/// ([`complete_indexed`]), with the inputs' load errors as printed (for
/// [`Evidence::recall_findings`]). Small beside the report: a store's own findings are
/// its verdicts' already.
#[derive(Deserialize)]
struct Completion {
    /// How many records the opening has.
    records: usize,
    /// The fingerprint of every record's own findings, record after record.
    fingerprints: Vec<String>,
    /// Each record whose semantic axis the analysis changed, with that axis.
    rewritten: Vec<(usize, SemanticAxis)>,
    findings: Vec<Finding>,
    /// Not needed here, but required: a completion kept without it is completed and kept
    /// again, so that [`Evidence::recall_findings`] can use it.
    #[serde(rename = "errors")]
    _errors: serde::de::IgnoredAny,
}

/// [`Completion`], borrowed from the report it was made for, to be written.
#[derive(Serialize)]
struct CompletionRef<'a> {
    records: usize,
    fingerprints: Vec<&'a str>,
    rewritten: Vec<(usize, &'a SemanticAxis)>,
    findings: &'a [Finding],
    errors: Vec<String>,
}

/// The findings of evidence opened before, as [`Evidence::recall_findings`] gives them.
#[derive(Debug, Deserialize)]
pub struct KeptFindings {
    /// How many records the opening has.
    records: usize,
    /// Every finding, as [`Evidence::findings`].
    pub findings: Vec<Finding>,
    /// The inputs' load errors, rendered ([`LoadError::render`]).
    pub errors: Vec<String>,
}

impl Evidence {
    /// The findings and load errors of `paths` opened before under the index's
    /// configuration, from the index alone — without reading a record or an entry's
    /// verdicts — when every file they name is a store still byte for byte the file its
    /// entry was made from ([`Evidence::unchanged_opening`]). `None` otherwise: then
    /// [`Evidence::load`] gives them (and keeps them for next time).
    pub fn recall_findings(paths: &[String], index: &Index) -> Option<KeptFindings> {
        let kept = Evidence::unchanged_opening(paths, index, COMPLETED)?;
        index
            .recall::<KeptFindings>(&kept.key, &kept.opening)
            .filter(|found| found.records == kept.records)
    }

    /// What is kept of kind `kind` for the opening of `paths`, from the index alone, when
    /// every file they name (directories walked as the loader walks them) is a store still
    /// byte for byte the file its entry was made from: the files' entries name the opening
    /// ([`Index::claim`]: their headers, and the files' sizes), which must be the one what
    /// is kept was kept for ([`Index::kept_for`]); only then are the files hashed
    /// ([`Claim::holds`]: their BLAKE3).
    pub fn unchanged_opening(paths: &[String], index: &Index, kind: &str) -> Option<Kept> {
        use rayon::prelude::*;
        let names = crate::load::input_names(paths).filter(|n| !n.is_empty())?;
        let key = Index::kept_key(kind, names.iter().map(String::as_str));
        let kept_for = index.kept_for(&key)?;
        let claims: Vec<Claim> = names
            .iter()
            .map(|p| index.claim(p))
            .collect::<Option<_>>()?;
        let opening = Index::opening_of(
            names
                .iter()
                .zip(&claims)
                .map(|(path, c)| (path.as_str(), c.bytes, c.sha256.as_str())),
        )?;
        let holds = || names.par_iter().zip(&claims).all(|(p, c)| c.holds(p));
        (opening == kept_for && holds()).then(|| Kept {
            key,
            opening,
            records: claims.iter().map(|c| c.records).sum(),
        })
    }
}

/// What is kept for an opening of unchanged files ([`Evidence::unchanged_opening`]):
/// where ([`Index::kept_key`]), for which opening ([`Index::opening_name`]), and how many
/// records the opening has.
#[derive(Debug)]
pub struct Kept {
    pub key: String,
    pub opening: String,
    pub records: usize,
}

/// The kind of what completing an opening gave, kept in the index ([`Index::kept_key`]).
pub const COMPLETED: &str = "completed";

impl Completion {
    /// Completes `report`, and gives the findings across records; `None` (and `report`
    /// untouched) when this was not kept for one like it (as many records, as many
    /// findings of their own).
    fn apply(self, report: &mut Report) -> Option<Vec<Finding>> {
        let own: usize = report.records.iter().map(|r| r.findings.len()).sum();
        let fits = self.records == report.records.len()
            && self.fingerprints.len() == own
            && self.rewritten.iter().all(|(i, _)| *i < self.records);
        if !fits {
            return None;
        }
        let findings = report.records.iter_mut().flat_map(|r| &mut r.findings);
        for (finding, fingerprint) in findings.zip(self.fingerprints) {
            finding.fingerprint = fingerprint;
        }
        for (i, semantic) in self.rewritten {
            report.records[i].semantic = std::sync::Arc::new(semantic);
        }
        Some(self.findings)
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

/// What later commands answer from, gathered batch by batch for an opening whose answers
/// are not kept yet: each action's views (`show`) and the chains (`chains`). One that
/// cannot be gathered or kept (a document among the inputs, a full disk) is left out:
/// its command opens the evidence then.
#[derive(Debug)]
pub struct Keeping {
    numbering: Numbering,
    table: Option<action_table::Rows>,
    chains: Option<ChainAnswers>,
}

impl Keeping {
    /// What is not kept yet for the opening `opening` of `corpus`; `None` when all is.
    pub fn new(index: &Index, corpus: &Corpus, opening: &str) -> Option<Keeping> {
        let spill = || Spill::in_dir(index.dir()).ok();
        let table = !action_table::is_kept(index, corpus, opening);
        let chains = [chain_answers::Form::Json, chain_answers::Form::Text]
            .iter()
            .any(|f| !index.keeps(&chain_answers::key(corpus, *f), opening));
        let keeping = Keeping {
            numbering: Numbering::default(),
            table: table.then(spill).flatten().map(action_table::Rows::new),
            chains: chains.then(spill).flatten().map(ChainAnswers::new),
        };
        (keeping.table.is_some() || keeping.chains.is_some()).then_some(keeping)
    }

    /// Adds what `batch` gives.
    pub fn add(&mut self, batch: &Batch<'_>) {
        let placed = self.numbering.add(batch);
        if let Some(table) = &mut self.table
            && table.add(batch, &placed).is_err()
        {
            self.table = None;
        }
        if let Some(chains) = &mut self.chains
            && chains.add(batch, &placed).is_err()
        {
            self.chains = None;
        }
    }

    /// Keeps what was gathered for the opening `opening` of `corpus` (verified with
    /// `verdicts`): nothing when a record could not be read again as verified.
    pub fn keep(self, index: &Index, opening: &str, corpus: &Corpus, verdicts: &[RecordResult]) {
        if corpus.records().any(|r| r.reread_error().is_some()) {
            return;
        }
        let numbers = self.numbering.finish();
        let table = || {
            if let Some(table) = self.table {
                let _ = table.keep(index, opening, corpus, verdicts, &numbers);
            }
        };
        let chains = || {
            if let Some(chains) = self.chains {
                let _ = (chains.finish(&numbers)).and_then(|c| c.keep(index, opening, corpus));
            }
        };
        rayon::join(table, chains);
    }

    /// Gathers and keeps what is not kept yet for the opening `opening` of `ev`, from its
    /// whole analysis (one batch).
    pub fn keep_all(index: &Index, opening: &str, ev: EvidenceRef<'_>) {
        if let Some(mut keeping) = Keeping::new(index, ev.corpus, opening) {
            keeping.add(&Batch {
                corpus: ev.corpus,
                analysis: ev.analysis,
                findings: ev.findings,
                verdicts: &ev.report.records,
                numbers: None,
            });
            keeping.keep(index, opening, ev.corpus, &ev.report.records);
        }
    }
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
