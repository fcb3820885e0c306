//! Opening evidence, the one way in: every front end (each command, the explorer's worker,
//! the Python package) builds a [`Setting`] and calls [`open`] with what it [`Need`]s, or
//! asks for what an earlier opening kept ([`kept_findings`], [`kept_actions`],
//! [`kept_chains`]). Only this module knows the evidence index ([`cache`]): verification
//! sees earlier verdicts through [`crate::verify::prior::Prior`], and what is kept for an
//! opening is recalled and kept here ([`kept`]).

pub mod action_table;
pub mod cache;
pub mod chain_answers;
pub mod kept;
mod setting;

pub use kept::{Budget, Checked, EachBatch, KeptFindings, ToKeep};
pub use setting::{Cache, Setting, Traces};

use crate::analysis::capture::Capture;
use crate::analysis::evidence::{Evidence, Loading};
use crate::load::Corpus;
use crate::model::finding::Finding;
use crate::model::text::sanitize;
use crate::verify::prior::Reuse;
use crate::verify::{Report, Trees};

/// What the caller needs from an opening.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// The verdict report and every finding (`check`, `findings`): made in batches of
    /// about `budget.batch` records, the analysis let go — unless telemetry is joined,
    /// which joins the whole analysis.
    Report(Budget),
    /// The whole analysis in memory (the explorer, `show`, `chains`, `query`, exports);
    /// `Trees` says whether records keep their parsed JSON.
    Whole(Trees),
}

/// Evidence as it was opened.
#[derive(Debug)]
pub enum Opened {
    Whole(Box<Evidence>),
    Batched(Box<Checked>),
}

/// Opens `paths` under `setting` for what `need` asks: read, verified as they stream in
/// (each file's verdicts taken from the evidence index when it holds them), analysed
/// whole or in batches (the plan is made here alone), the telemetry read beside and
/// joined. `progress` hears how far it is. Gives the evidence and what there is to say
/// of the opening besides it.
pub fn open(
    setting: &Setting,
    paths: &[String],
    need: Need,
    progress: &mut (dyn FnMut(Loading) + Send),
) -> (Opened, Said) {
    opened(setting, paths, need, None, progress)
}

/// [`open`] for a report made in batches (`Need::Report(budget)`), `each` seeing every
/// batch's analysis as it is made — the whole evidence as one batch when telemetry is
/// joined (which joins the whole analysis): what is written batch by batch (the Parquet
/// tables) holds no more than a batch's analysis at once. Every batch is analysed, the
/// evidence index's earlier answers notwithstanding.
pub fn open_each_batch(
    setting: &Setting,
    paths: &[String],
    budget: Budget,
    each: &mut EachBatch<'_>,
    progress: &mut (dyn FnMut(Loading) + Send),
) -> (Opened, Said) {
    opened(setting, paths, Need::Report(budget), Some(each), progress)
}

/// [`open`], `each` (when given) seeing every batch.
fn opened(
    setting: &Setting,
    paths: &[String],
    need: Need,
    mut each: Option<&mut EachBatch<'_>>,
    progress: &mut (dyn FnMut(Loading) + Send),
) -> (Opened, Said) {
    let index = setting.index();
    let traced = !setting.traces.files.is_empty();
    // The telemetry joins the whole analysis: a report with it is made from one.
    let trees = match need {
        Need::Whole(trees) => trees,
        Need::Report(_) => Trees::OnDisk,
    };
    let (opened, telemetry) = rayon::join(
        || match need {
            Need::Report(budget) if !traced => Opened::Batched(Box::new(kept::in_batches(
                paths,
                setting,
                index,
                budget,
                each.as_deref_mut(),
                progress,
            ))),
            _ => Opened::Whole(Box::new(kept::whole(
                paths,
                setting,
                index.as_ref(),
                trees,
                progress,
            ))),
        },
        || traced.then(|| crate::load::traces::load_traces(&setting.traces.files)),
    );
    let mut opened = opened;
    let mut said = Said {
        problems: Vec::new(),
        notes: opened.reuse().problems.clone(),
    };
    if let (Some(telemetry), Opened::Whole(ev)) = (telemetry, &mut opened) {
        (said.problems).extend(telemetry.errors.iter().map(crate::load::LoadError::render));
        if telemetry.repeated > 0 {
            let n = telemetry.repeated;
            let s = if n == 1 { "" } else { "s" };
            said.problems.push(format!(
                "{n} tool-call span{s} given again with the same trace and span id (exported twice): each counted once"
            ));
        }
        ev.add_capture(telemetry, setting.traces.tolerance_ms);
        (said.notes).extend(ev.capture.as_ref().map(ignored_runs).unwrap_or_default());
    }
    if let (Some(each), Opened::Whole(ev)) = (each, &opened) {
        each(&crate::analysis::gathered::Batch::whole(Evidence::as_ref(
            ev,
        )));
    }
    (opened, said)
}

/// What an opening has to say besides the evidence, ready to print.
#[derive(Debug, Default)]
pub struct Said {
    /// What of the telemetry could not be read (the evidence's own load errors are in
    /// its corpus).
    pub problems: Vec<String>,
    /// The rest: runs the telemetry names that the evidence does not hold, and what the
    /// index could not keep.
    pub notes: Vec<String>,
}

/// The runs the telemetry names that the evidence does not hold, one note each.
fn ignored_runs(capture: &Capture) -> Vec<String> {
    (capture.ignored.iter())
        .map(|(run, spans)| {
            let s = if *spans == 1 { "" } else { "s" };
            if run.is_empty() {
                format!(
                    "{spans} tool-call span{s} name no run and no trace the evidence holds: not judged"
                )
            } else {
                format!(
                    "telemetry of run {} ({spans} tool-call span{s}) is not in the evidence: not judged",
                    sanitize(run)
                )
            }
        })
        .collect()
}

impl Opened {
    /// The whole evidence, when it was opened whole.
    pub fn into_whole(self) -> Option<Evidence> {
        match self {
            Opened::Whole(ev) => Some(*ev),
            Opened::Batched(_) => None,
        }
    }

    pub fn report_mut(&mut self) -> &mut Report {
        match self {
            Opened::Whole(ev) => &mut ev.report,
            Opened::Batched(c) => &mut c.report,
        }
    }

    /// The corpus, the report and the findings.
    pub fn parts(&self) -> (&Corpus, &Report, &[Finding]) {
        match self {
            Opened::Whole(ev) => (&ev.corpus, &ev.report, &ev.findings),
            Opened::Batched(c) => (&c.corpus, &c.report, &c.findings),
        }
    }

    /// The telemetry joined to the evidence.
    pub fn capture(&self) -> Option<&Capture> {
        match self {
            Opened::Whole(ev) => ev.capture.as_ref(),
            Opened::Batched(_) => None,
        }
    }

    pub fn timings(&self) -> &[(&'static str, std::time::Duration)] {
        match self {
            Opened::Whole(ev) => &ev.timings,
            Opened::Batched(c) => &c.timings,
        }
    }

    /// What earlier verdicts did for this opening.
    pub fn reuse(&self) -> &Reuse {
        match self {
            Opened::Whole(ev) => &ev.reuse,
            Opened::Batched(c) => &c.reuse,
        }
    }

    pub fn reread_failures(&self) -> usize {
        match self {
            Opened::Whole(ev) => ev.reread_failures(),
            Opened::Batched(c) => c.reread_failures(),
        }
    }

    /// What is left to keep in the index for a batched opening, taken out: to be kept
    /// ([`Opened::keep`]) while the answer is written.
    pub fn take_to_keep(&mut self) -> Option<ToKeep> {
        match self {
            Opened::Whole(_) => None,
            Opened::Batched(c) => c.take_to_keep(),
        }
    }

    /// Keeps what [`Opened::take_to_keep`] took out of this opening.
    pub fn keep(&self, to_keep: ToKeep) {
        if let Opened::Batched(checked) = self {
            to_keep.keep(checked);
        }
    }
}

/// Verifies and analyses evidence already in memory (an engine's pieces, a document
/// given whole) under `setting`'s trust, options and lease files: no cache, no telemetry.
pub fn open_corpus(setting: &Setting, corpus: Corpus) -> Evidence {
    Evidence::open(corpus, &setting.trust, &setting.options, &setting.leases)
}

/// Verifies each record of evidence already in memory under `setting`, with no analysis:
/// what an engine's first step gives (no cache).
pub fn verify_alone(setting: &Setting, corpus: &Corpus) -> Report {
    crate::verify::verify_inputs(&corpus.inputs, &setting.trust, &setting.options, None)
}

/// The findings and load errors of `paths` opened before under `setting`, from the index
/// alone, when every file is a store unchanged to the byte ([`kept::recall_findings`]).
pub fn kept_findings(setting: &Setting, paths: &[String]) -> Option<KeptFindings> {
    kept::recall_findings(paths, &setting.answers()?)
}

/// Each action's views kept for `paths` under `setting` ([`action_table::Table`]), when
/// every file is unchanged to the byte.
pub fn kept_actions(setting: &Setting, paths: &[String]) -> Option<action_table::Table> {
    action_table::Table::open(&setting.answers()?, paths)
}

/// `chains`' answer in `form` kept for `paths` under `setting`, when every file is
/// unchanged to the byte.
pub fn kept_chains(
    setting: &Setting,
    paths: &[String],
    form: chain_answers::Form,
) -> Option<chain_answers::Answer> {
    let index = setting.answers()?;
    let kept = kept::unchanged_opening(paths, &index, &chain_answers::kind(form))?;
    index.recall_read(&kept.key, &kept.opening, chain_answers::Answer::read)
}

/// Keeps what later commands answer from (each action's views, the chains) for the
/// opening `ev` is, from its whole analysis — unless a record could not be read again
/// as verified, or the index cannot be written (the next opening makes it again).
pub fn keep_answers(setting: &Setting, ev: &Evidence) {
    let opening = (ev.reread_failures() == 0)
        .then(|| cache::Index::opening_name(&ev.corpus.inputs))
        .flatten();
    if let (Some(index), Some(opening)) = (setting.answers(), opening) {
        kept::Keeping::keep_all(&index, &opening, ev.as_ref());
    }
}
