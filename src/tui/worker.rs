//! The background worker: loads the evidence (a quick first look at large stores, then
//! everything), analyses it and verifies it, sending each stage to the event loop as an
//! [`Action`]; and the file stamps `--follow` compares to reload.

use super::data::Data;
use super::state::{Action, Progress};
use crate::analysis::Analysis;
use crate::analysis::evidence::complete_indexed;
use crate::analysis::findings;
use crate::analysis::lease::SuppliedLeases;
use crate::load::{Corpus, load_paths_asking};
use crate::verify::index::{Config, Index};
use crate::verify::{Keyring, Options, verify_inputs_indexed};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, SystemTime};

/// How much of a large store the first frame shows while the rest loads.
pub const QUICK_LOOK_BYTES: u64 = 4 * 1024 * 1024;

/// Loads, analyses (first frame) and verifies in the background — files the evidence
/// index under `index_dir` holds are not verified again —, reporting by `tx`.
pub fn spawn_worker(
    paths: Vec<String>,
    keys: Keyring,
    leases: Vec<String>,
    index_dir: Option<PathBuf>,
    tx: Sender<Action>,
) {
    std::thread::spawn(move || {
        let send = |a: Action| tx.send(a).is_ok();
        send(Action::Progress(Progress {
            phase: "loading".into(),
            ..Progress::default()
        }));
        let mut supplied = SuppliedLeases::default();
        let mut errors: Vec<String> = Vec::new();
        for file in &leases {
            errors.extend(
                supplied
                    .add_file(std::path::Path::new(file))
                    .iter()
                    .map(std::string::ToString::to_string),
            );
        }
        // Large evidence: show the first records at once, then the whole.
        if let Some(head) = crate::load::load_prefix(&paths, QUICK_LOOK_BYTES) {
            let corpus = Arc::new(Corpus::new(head));
            let analysis = Arc::new(Analysis::build(&corpus, &supplied));
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
        let options = Options::default();
        let index =
            index_dir.map(|dir| Index::new(dir, &Config::new(&keys, &options, &supplied.digests)));
        // Each file's entry says how much of it to digest: a store that only grew is then
        // verified for its new records alone.
        let mut asked = |path: &str| index.as_ref().and_then(|ix| ix.covered(path));
        let corpus = Arc::new(Corpus::new(load_paths_asking(&paths, &mut asked)));
        errors.extend(corpus.errors().map(std::string::ToString::to_string));
        if !errors.is_empty() {
            send(Action::Errors(errors));
        }
        // An input the index has an entry for was loaded with its old size's digest.
        let indexed = corpus.inputs.iter().any(|i| i.asked.is_some());
        let verify = |phase: &str| {
            with_progress(phase, corpus.len(), &tx, |done| {
                verify_inputs_indexed(&corpus.inputs, &keys, &options, index.as_ref(), Some(done)).0
            })
        };
        // When the index holds verdicts they come first (quickly), and the analysis takes
        // the records' hashes from them instead of hashing every record again.
        let indexed_report = indexed.then(|| verify("verifying (evidence index)"));
        send(Action::Progress(Progress {
            phase: "analysing".into(),
            ..Progress::default()
        }));
        let analysis = Arc::new(match &indexed_report {
            Some(report) => Analysis::with_hashes(&corpus, report.canonical_hashes(), &supplied),
            None => Analysis::build(&corpus, &supplied),
        });
        let early = findings::dedupe_and_sort(findings::analyse(&corpus, &analysis));
        let data = Data::new(corpus.clone(), analysis.clone(), early);
        if !send(Action::Loaded(Box::new(data))) {
            return;
        }
        let report = indexed_report.unwrap_or_else(|| verify("verifying"));
        let (report, all) = complete_indexed(&corpus, &analysis, report, index.as_ref());
        send(Action::Verified(Arc::new(report), all));
    });
}

/// Runs `work` (which counts what it has done of `total` in the counter it is given)
/// while a watcher sends its progress under `phase` every 100 ms.
fn with_progress<T>(
    phase: &str,
    total: usize,
    tx: &Sender<Action>,
    work: impl FnOnce(&AtomicUsize) -> T,
) -> T {
    let done = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while done.load(Ordering::Relaxed) < total {
                let p = Progress {
                    phase: phase.to_string(),
                    done: done.load(Ordering::Relaxed),
                    total,
                    finished: false,
                };
                if tx.send(Action::Progress(p)).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let result = work(&done);
        done.store(total, Ordering::Relaxed);
        result
    })
}

/// Size and modification time of each path, to notice a store that changed.
pub fn file_stamps(paths: &[String]) -> Vec<(u64, Option<SystemTime>)> {
    paths
        .iter()
        .map(|p| std::fs::metadata(p).map_or((0, None), |m| (m.len(), m.modified().ok())))
        .collect()
}
