//! The background worker: loads the evidence (a quick first look at large stores, then
//! everything), analyses it and verifies it, sending each stage to the event loop as an
//! [`Action`]; and the file stamps `--follow` compares to reload.

use super::data::Data;
use super::state::{Action, Progress};
use crate::analysis::Analysis;
use crate::analysis::evidence::complete;
use crate::analysis::findings;
use crate::analysis::lease::SuppliedLeases;
use crate::load::{Corpus, load_paths};
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
        let corpus = Arc::new(Corpus::new(load_paths(&paths)));
        errors.extend(corpus.errors().map(std::string::ToString::to_string));
        if !errors.is_empty() {
            send(Action::Errors(errors));
        }
        send(Action::Progress(Progress {
            phase: "analysing".into(),
            ..Progress::default()
        }));
        let analysis = Arc::new(Analysis::build(&corpus, &supplied));
        let early = findings::dedupe_and_sort(findings::analyse(&corpus, &analysis));
        if !send(Action::Loaded(Box::new(Data::new(
            corpus.clone(),
            analysis.clone(),
            early,
        )))) {
            return;
        }
        let done = Arc::new(AtomicUsize::new(0));
        let total = corpus.len();
        let report = std::thread::scope(|scope| {
            let watcher = {
                let done = done.clone();
                let tx = tx.clone();
                scope.spawn(move || {
                    while done.load(Ordering::Relaxed) < total {
                        let p = Progress {
                            phase: "verifying".into(),
                            done: done.load(Ordering::Relaxed),
                            total,
                            finished: false,
                        };
                        if tx.send(Action::Progress(p)).is_err() {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                })
            };
            let options = Options::default();
            let index = index_dir
                .map(|dir| Index::new(dir, &Config::new(&keys, &options, &supplied.digests)));
            let (r, _) =
                verify_inputs_indexed(&corpus.inputs, &keys, &options, index.as_ref(), Some(&done));
            done.store(total, Ordering::Relaxed);
            let _ = watcher.join();
            r
        });
        let (report, all) = complete(&corpus, &analysis, report);
        send(Action::Verified(Arc::new(report), all));
    });
}

/// Size and modification time of each path, to notice a store that changed.
pub fn file_stamps(paths: &[String]) -> Vec<(u64, Option<SystemTime>)> {
    paths
        .iter()
        .map(|p| std::fs::metadata(p).map_or((0, None), |m| (m.len(), m.modified().ok())))
        .collect()
}
