//! Opening with the evidence index, whole ([`whole`]) or in batches ([`in_batches`]), and
//! what the index keeps for an opening and gives back: the completion of the analysis
//! (each record's own findings' fingerprints, rewritten semantic axes, every finding)
//! and — gathered batch by batch — each action's views for `show` and the chains for
//! `chains`. Recalled before an opening is analysed, kept after. [`super::open`] is the
//! way in; these take the index it made, so tests and benchmarks can hand one in.

use super::Setting;
use super::action_table;
use super::cache::{Claim, Index};
use super::chain_answers::{self, ChainAnswers};
use crate::analysis::Analysis;
use crate::analysis::evidence::{Evidence, EvidenceRef, Loading, complete, complete_in_groups};
use crate::analysis::gathered::{Batch, Numbering};
use crate::analysis::lease::SuppliedLeases;
use crate::load::spill::Spill;
use crate::load::{Corpus, LoadError};
use crate::model::finding::Finding;
use crate::verify::prior::{Prior, Reuse};
use crate::verify::{Options, RecordResult, Report, SemanticAxis, Trees, verify_paths};
use serde::{Deserialize, Serialize};

/// Loads, verifies and analyses `paths`, each record verified as its chunk is read
/// ([`verify_paths`]): what [`Evidence::open`] gives on the loaded paths, without the
/// store's bytes all in memory at once. With an `index`, files it holds are parsed but
/// not verified again. `trees` says whether records keep their parsed JSON
/// ([`Trees`]). `progress` hears how far it is.
pub fn whole(
    paths: &[String],
    setting: &Setting,
    index: Option<&Index>,
    trees: Trees,
    progress: &mut dyn FnMut(Loading),
) -> Evidence {
    // The whole analysis reads every record's facts: none keeps only its ids.
    let trees = match trees {
        Trees::OnlyIds { .. } => Trees::OnDisk,
        trees => trees,
    };
    let (corpus, report, used, verified) = streamed(paths, setting, index, trees, progress);
    let mut ev = verified_indexed(corpus, report, &setting.leases, vec![verified], index);
    ev.reuse = used;
    ev
}

/// `paths` read and verified as they stream in ([`verify_paths`]), what is verified let
/// go as `trees` says, `progress` told how far it is; with what earlier verdicts did and
/// the phase's time.
fn streamed(
    paths: &[String],
    setting: &Setting,
    index: Option<&Index>,
    trees: Trees,
    progress: &mut dyn FnMut(Loading),
) -> (Corpus, Report, Reuse, (&'static str, std::time::Duration)) {
    let clock = std::time::Instant::now();
    let (keys, options) = (&setting.trust, &setting.options);
    let (inputs, report, used) = verify_paths(
        paths,
        keys,
        options,
        prior(index),
        trees,
        &mut |bytes, records| {
            progress(Loading::Read { bytes, records });
        },
    );
    progress(Loading::Analysing {
        records: report.records.len(),
    });
    let verified = ("read, parse and verify", clock.elapsed());
    (Corpus::new(inputs), report, used, verified)
}

/// [`Evidence::verified`], the findings of the same inputs opened before under the
/// same configuration taken from the `index` (kept there when they were not).
fn verified_indexed(
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
    Evidence::assemble(corpus, report, analysis, findings, timings)
}

/// What sees each batch of an opening's analysis as it is made ([`in_batches`]).
pub type EachBatch<'a> = dyn FnMut(&Batch<'_>) + Send + 'a;

/// How much of the analysis [`in_batches`] holds at once.
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
/// `findings` report from ([`in_batches`]).
#[derive(Debug)]
pub struct Checked {
    pub corpus: Corpus,
    pub report: Report,
    /// Every finding, sorted by severity, then time, then id, run, actions and message.
    pub findings: Vec<Finding>,
    /// How long each phase took, for `--timings`.
    pub timings: Vec<(&'static str, std::time::Duration)>,
    /// What the evidence index did (all zero without one).
    pub reuse: Reuse,
    /// What is still to be kept in the index ([`Checked::take_to_keep`]).
    to_keep: Option<ToKeep>,
}

/// [`whole`] with the analysis made over batches of about `budget.batch`
/// records ([`complete_in_groups`]) and let go of: the same report and findings, with
/// only a batch's analysis in memory at once. Records' trees are let go once
/// verified, and past `budget.facts_kept` records their facts too, but for their ids
/// ([`Trees::OnlyIds`]). With an `index`, files it holds are not verified again, and
/// what the same opening completed to before is taken instead of the analysis; else
/// what this one completes to — with each action's views and the chains, gathered
/// batch by batch for `show` and `chains` (under the default profile, which they open
/// with) — is to be kept there ([`Checked::take_to_keep`]). `each`, when given, sees
/// every batch as it is analysed (and nothing recalled stands in for the analysis).
pub fn in_batches(
    paths: &[String],
    setting: &Setting,
    index: Option<Index>,
    budget: Budget,
    mut each: Option<&mut EachBatch<'_>>,
    progress: &mut dyn FnMut(Loading),
) -> Checked {
    let (options, leases) = (&setting.options, &setting.leases);
    // A record keeps only its ids until its batch reads its facts again (unless the
    // records are few): a store's facts are never all in memory.
    let trees = Trees::OnlyIds {
        after: budget.facts_kept,
    };
    let (mut corpus, report, used, verified) =
        streamed(paths, setting, index.as_ref(), trees, progress);
    let mut timings = vec![verified];
    let clock = std::time::Instant::now();
    let opening = index.zip(Index::opening_name(&corpus.inputs));
    let mut to_keep = None;
    // With a batch to see, every batch is analysed: nothing recalled stands in for it.
    let recalled = (opening.as_ref().filter(|_| each.is_none())).and_then(|(index, name)| {
        let key = Index::kept_key_of(COMPLETED, &corpus.inputs);
        index.recall::<Completion>(&key, name)
    });
    let mut report = report;
    let applied = recalled.and_then(|done| done.apply(&mut report));
    let (mut report, findings) = if let Some(findings) = applied {
        (report, findings)
    } else {
        // Later commands open evidence under the default profile.
        let default = options.profile == Options::default().profile;
        let mut keeping = (opening.as_ref().filter(|_| default))
            .and_then(|(index, name)| Keeping::new(index, &corpus, name));
        let completed = {
            let seen = keeping.is_some() || each.is_some();
            let mut see = |b: &Batch<'_>| {
                if let Some(keeping) = keeping.as_mut() {
                    keeping.add(b);
                }
                if let Some(each) = each.as_mut() {
                    each(b);
                }
            };
            let on_batch = seen.then_some(&mut see as &mut dyn FnMut(&Batch<'_>));
            complete_in_groups(&mut corpus, report, leases, budget.batch, on_batch)
        };
        to_keep = opening.map(|(index, opening)| ToKeep {
            index,
            opening,
            keeping,
        });
        completed
    };
    crate::analysis::evidence::note_rereads(&mut corpus, &mut report);
    timings.push(("analysis and findings", clock.elapsed()));
    Checked {
        corpus,
        report,
        findings,
        timings,
        reuse: used,
        to_keep,
    }
}

impl Checked {
    /// What is left to keep in the index for this opening ([`ToKeep::keep`]), taken out:
    /// to be kept while the answer is written.
    pub fn take_to_keep(&mut self) -> Option<ToKeep> {
        self.to_keep.take()
    }

    /// [`Evidence::reread_failures`].
    pub fn reread_failures(&self) -> usize {
        crate::analysis::evidence::reread_failures(&self.corpus)
    }
}

/// What the analysis of an opening gave that is still to be kept in the index: its
/// completion, and what later commands answer from ([`Keeping`]).
#[derive(Debug)]
pub struct ToKeep {
    index: Index,
    opening: String,
    keeping: Option<Keeping>,
}

impl ToKeep {
    /// Keeps it (for `checked`, the opening it was taken from): nothing when a record
    /// could not be read again as verified, or the index cannot be written (the next
    /// open keeps it then).
    pub fn keep(self, checked: &Checked) {
        let index = &self.index;
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
/// [`recall_findings`]). Small beside the report: a store's own findings are
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
    /// again, so that [`recall_findings`] can use it.
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

/// The findings of evidence opened before, as [`recall_findings`] gives them.
#[derive(Debug, Deserialize)]
pub struct KeptFindings {
    /// How many records the opening has.
    records: usize,
    /// Every finding, as [`Evidence::findings`].
    pub findings: Vec<Finding>,
    /// The inputs' load errors, rendered ([`LoadError::render`]).
    pub errors: Vec<String>,
}

/// The findings and load errors of `paths` opened before under the index's
/// configuration, from the index alone — without reading a record or an entry's
/// verdicts — when every file they name is a store still byte for byte the file its
/// entry was made from ([`unchanged_opening`]). `None` otherwise: then
/// [`whole`] gives them (and keeps them for next time).
pub fn recall_findings(paths: &[String], index: &Index) -> Option<KeptFindings> {
    let kept = unchanged_opening(paths, index, COMPLETED)?;
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

/// What is kept for an opening of unchanged files ([`unchanged_opening`]):
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

    /// Adds what `batch` gives (the table and the chains side by side).
    pub fn add(&mut self, batch: &Batch<'_>) {
        let placed = self.numbering.add(batch);
        let (table, chains) = (&mut self.table, &mut self.chains);
        rayon::join(
            || {
                if table
                    .as_mut()
                    .is_some_and(|t| t.add(batch, &placed).is_err())
                {
                    *table = None;
                }
            },
            || {
                if chains
                    .as_mut()
                    .is_some_and(|c| c.add(batch, &placed).is_err())
                {
                    *chains = None;
                }
            },
        );
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
            keeping.add(&Batch::whole(ev));
            keeping.keep(index, opening, ev.corpus, &ev.report.records);
        }
    }
}

/// The index as verification sees it.
fn prior(index: Option<&Index>) -> Option<&dyn Prior> {
    index.map(|i| i as &dyn Prior)
}
