//! The background worker: loads the evidence (a quick first look at large stores, then
//! everything, each record verified as it streams and its JSON let go until a pane asks
//! for it), analyses it, sending each stage to the event loop as an [`Action`]; and the
//! file stamps `--follow` compares to reload.

use super::data::Data;
use super::state::{Action, Progress};
use crate::analysis::Analysis;
use crate::analysis::evidence::Loading;
use crate::analysis::findings;
use crate::load::Corpus;
use crate::open::Setting;
use crate::verify::Trees;
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::time::SystemTime;

/// How much of a large store the first frame shows while the rest loads.
pub const QUICK_LOOK_BYTES: u64 = 4 * 1024 * 1024;

/// Loads and verifies, then analyses, in the background, through the one way evidence is
/// opened ([`crate::open::open`] under `setting`: files the evidence index holds are not
/// verified again, nor parsed when unchanged), reporting by `tx`.
pub fn spawn_worker(paths: Vec<String>, setting: Arc<Setting>, tx: Sender<Action>) {
    std::thread::spawn(move || {
        let send = |a: Action| tx.send(a).is_ok();
        send(Action::Progress(Progress {
            phase: "loading".into(),
            ..Progress::default()
        }));
        let supplied = &setting.leases;
        let mut errors: Vec<String> = (setting.lease_errors.iter())
            .map(ToString::to_string)
            .collect();
        // Large evidence: show the first records at once, then the whole.
        if let Some(head) = crate::load::load_prefix(&paths, QUICK_LOOK_BYTES) {
            let corpus = Arc::new(Corpus::new(head));
            let analysis = Arc::new(Analysis::build(&corpus, supplied));
            let early = findings::dedupe_and_sort(findings::analyse(&corpus, &analysis));
            send(Action::Progress(Progress {
                phase: format!(
                    "loading everything (showing the first {} records)",
                    corpus.len()
                ),
                ..Progress::default()
            }));
            if !send(Action::Loaded(Box::new(Data::new(corpus, analysis, early)))) {
                return;
            }
        }
        // Read and verified as it streams, each record's JSON let go once verified (read
        // again when a pane shows it): a store the index holds byte for byte is not even
        // parsed, and one that only grew is verified for its new records alone.
        let total: u64 = crate::load::evidence_files(&paths)
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        let total = usize::try_from(total).unwrap_or(usize::MAX);
        let mut progress = |loading: Loading| {
            let p = match loading {
                Loading::Read { bytes, .. } => Progress {
                    phase: "reading and verifying".into(),
                    done: usize::try_from(bytes).unwrap_or(usize::MAX).min(total),
                    total,
                    finished: false,
                },
                Loading::Analysing { .. } => Progress {
                    phase: "analysing".into(),
                    ..Progress::default()
                },
            };
            send(Action::Progress(p));
        };
        let (opened, said) = crate::open::open(
            &setting,
            &paths,
            crate::open::Need::Whole(Trees::OnDisk),
            &mut progress,
        );
        let Some(mut ev) = opened.into_whole() else {
            return;
        };
        if ev.reuse.reused > 0 {
            send(Action::Progress(Progress {
                phase: format!("{} verdicts from the evidence index", ev.reuse.reused),
                ..Progress::default()
            }));
        }
        errors.extend(ev.corpus.errors().map(std::string::ToString::to_string));
        // A receipt no action matches: a lease-file line used for nothing, said.
        errors.extend((supplied.unused_receipts(&ev.corpus).iter()).map(ToString::to_string));
        errors.extend(said.problems);
        if !errors.is_empty() {
            send(Action::Errors(errors));
        }
        let (corpus, analysis) = (Arc::new(ev.corpus), Arc::new(ev.analysis));
        let data = Data::new(corpus.clone(), analysis.clone(), Vec::new());
        if !send(Action::Loaded(Box::new(data))) {
            return;
        }
        // The lease files are inputs of what is shown, as the evidence files are.
        ev.report.inputs.extend(supplied.inputs.iter().cloned());
        let (report, capture) = (Arc::new(ev.report), ev.capture.map(Arc::new));
        let findings = ev.findings.clone();
        if !send(Action::Verified(
            report.clone(),
            ev.findings,
            capture.clone(),
        )) {
            return;
        }
        // The filter's columns, made now so that no keystroke waits for one.
        let ctx = crate::query::Ctx::of(
            &corpus,
            &analysis,
            Some(&report),
            &findings,
            capture.as_deref(),
        );
        let columns = crate::query::Columns::default();
        columns.warm(&ctx);
        let key = (Arc::as_ptr(&analysis) as usize, true, findings.len());
        send(Action::Columns(Box::new(columns), key));
    });
}

/// Size and modification time of each path, to notice a store that changed.
pub fn file_stamps(paths: &[String]) -> Vec<(u64, Option<SystemTime>)> {
    paths
        .iter()
        .map(|p| std::fs::metadata(p).map_or((0, None), |m| (m.len(), m.modified().ok())))
        .collect()
}
