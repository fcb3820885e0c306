//! Verifying files as they stream in ([`verify_paths`]): each record verified as soon as
//! its chunk is parsed, its parsed JSON let go of ([`Trees`]), verdicts taken from the
//! verdicts made before ([`Prior`]) and kept there.

use super::prior::{Entry, Prior, Reuse};
use super::sharing::Sharing;
use super::{Keyring, Options, RecordResult, Report, assemble, fill, verify_record};
use crate::load::Input;
use crate::load::spill::{Spill, Spilled};
use crate::load::stream::{self, FileBytes, Opening};
use crate::model::Record;
use rayon::prelude::*;

/// Keeps a file's verdicts in `prior` (with its records' `summary` when made as they
/// were verified), counting what happened in `used`.
pub(super) fn keep(
    prior: Option<&dyn Prior>,
    input: &Input,
    results: &[RecordResult],
    summary: Option<&Spilled>,
    used: &mut Reuse,
) {
    let Some(prior) = prior.filter(|_| !results.is_empty()) else {
        return;
    };
    match prior.store(input, results, summary) {
        Ok(true) => used.written += 1,
        Ok(false) => {}
        Err(e) => used.problems.push(format!(
            "index not written for {} in {}: {e}",
            crate::model::text::sanitize(&input.path),
            prior.dir().display()
        )),
    }
}

/// [`verify_inputs`](super::verify_inputs) on evidence as it loads: each record is verified as soon as its
/// chunk is parsed ([`stream::stream_paths`]), so the store's bytes are never all in
/// memory. Gives what `verify_inputs(&load_paths(paths), …)` gives. With a `prior`,
/// records it holds are parsed but not verified (see [`verify_inputs_with`](super::verify_inputs_with)); with
/// [`Trees::OnDisk`], a store it holds byte for byte is not even parsed
/// ([`Prior::known`]: its records come with their facts, not handed to `progress`).
/// `progress` is told the bytes read and the records read so far after each chunk.
pub fn verify_paths(
    paths: &[String],
    keys: &Keyring,
    options: &Options,
    prior: Option<&dyn Prior>,
    trees: Trees,
    progress: &mut dyn FnMut(u64, usize),
) -> (Vec<Input>, Report, Reuse) {
    verify_paths_in_chunks(paths, stream::CHUNK, keys, options, prior, trees, progress)
}

/// Whether verified records keep their parsed JSON in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trees {
    /// Every record's JSON stays in memory (the explorer shows any of it at any time).
    Held,
    /// A record of a store file keeps only its facts once verified; its JSON is read
    /// again from the file, bound to what was verified ([`Record::let_go`]), when
    /// something asks for it (the commands that open evidence whole: memory grows with the
    /// records, not their bytes).
    OnDisk,
    /// As [`Trees::OnDisk`], and every record after the first `after` keeps only its own
    /// facts and its actions' ids once verified ([`Record::keep_only_ids`]): tens of bytes
    /// an action instead of hundreds, for an analysis that reads a batch's facts again
    /// (`check`). When more than `after` records were read or known, the first `after`
    /// keep only theirs too once all are verified.
    OnlyIds { after: usize },
}

impl Trees {
    /// True when verified records of a store let go of their trees.
    fn lets_go(self) -> bool {
        self != Trees::Held
    }
}

/// Lets go of the trees of `records`, verified with `results` (their canonical hashes),
/// on every core (freeing a tree is a walk over all its nodes). A record whose line is
/// among `bytes` is bound to them ([`crate::load::reread_line`]: read again, it is compared
/// with them, not canonicalised again), any other to its canonical hash. A verdict the
/// index gave is provisional: if the file turns out to have changed, the record is read
/// again and verified ([`Record::hold_again`]).
/// From the `only_ids_from`-th of them on, records keep only their ids.
fn let_go(
    records: &mut [Record],
    results: &[RecordResult],
    only_ids_from: usize,
    bytes: FileBytes<'_>,
) {
    records
        .par_iter_mut()
        .zip(results)
        .enumerate()
        .for_each(|(i, (record, result))| {
            match record.span.and_then(|span| bytes.line(span)) {
                Some(line) => {
                    let digest = crate::load::line_digest(line);
                    record.let_go(digest, crate::load::reread_line);
                }
                None => let_go_one(record, result),
            }
            if i >= only_ids_from {
                record.keep_only_ids();
            }
        });
}

/// [`let_go`] for one record, bound to its canonical hash.
fn let_go_one(record: &mut Record, result: &RecordResult) {
    record.let_go(result.canonical_sha256.0, crate::load::reread);
}

/// [`verify_paths`], reading `chunk` bytes at a time.
pub fn verify_paths_in_chunks(
    paths: &[String],
    chunk: usize,
    keys: &Keyring,
    options: &Options,
    prior: Option<&dyn Prior>,
    trees: Trees,
    progress: &mut dyn FnMut(u64, usize),
) -> (Vec<Input>, Report, Reuse) {
    struct File {
        input: usize,
        entry: Option<Entry>,
        results: Vec<RecordResult>,
        /// Positions in `results` of verdicts the entry gave, before the file was read
        /// to its end (provisional until [`Entry::confirms`] says its bytes stand).
        taken: Vec<usize>,
        /// No entry, or a record it did not answer for: the entry is written anew.
        changed: bool,
        /// The summary of its records so far, made while their facts were in hand (they
        /// keep only their ids): the entry is written from it.
        summary: Option<Spill>,
    }
    let mut files: Vec<File> = Vec::new();
    let mut used = Reuse {
        dir: prior.map(|p| p.dir().to_path_buf()),
        ..Reuse::default()
    };
    // Records read or known so far (the open and the read of a file both count them).
    let read = std::cell::Cell::new(0usize);
    let mut sharing = Sharing::default();
    // A store the index has byte for byte is not read (when trees are let go anyway);
    // for any other file, its entry says how many leading bytes to digest as it is read.
    let mut known: Vec<File> = Vec::new();
    let mut open = |input: usize, path: &str| {
        // With only ids kept past `after` records, a known store past them keeps only ids.
        let only_ids_over = match trees {
            Trees::OnlyIds { after } => after.saturating_sub(read.get()),
            _ => usize::MAX,
        };
        let whole = prior
            .filter(|_| trees.lets_go())
            .and_then(|p| p.known(path, only_ids_over));
        if let Some((loaded, results)) = whole {
            read.set(read.get() + loaded.records.len());
            known.push(File {
                input,
                entry: None,
                results,
                taken: Vec::new(),
                changed: false,
                summary: None,
            });
            return Opening::Known(loaded);
        }
        Opening::Read {
            asked: prior.and_then(|p| p.covered(path)),
            blake3: prior.is_some(),
        }
    };
    let mut inputs = stream::stream_paths_opening(paths, chunk, &mut open, |batch| {
        if files.last().map(|f| f.input) != Some(batch.input) {
            let entry = prior.and_then(|p| p.lookup(batch.path));
            files.push(File {
                input: batch.input,
                // An entry without the store's summary is written again with it.
                changed: !entry.as_ref().is_some_and(|e| e.summarised),
                entry,
                results: Vec::new(),
                taken: Vec::new(),
                summary: prior
                    .filter(|_| matches!(trees, Trees::OnlyIds { .. }) && batch.path != "-")
                    .and_then(|p| Spill::in_dir(p.dir()).ok()),
            });
        }
        if let Some(file) = files.last_mut() {
            let taken: Vec<Option<RecordResult>> = batch
                .records
                .iter()
                .map(|r| file.entry.as_mut().and_then(|e| e.take(r, batch.in_file)))
                .collect();
            file.changed |= taken.iter().any(Option::is_none);
            let start = file.results.len();
            file.taken.extend(
                taken
                    .iter()
                    .enumerate()
                    .filter_map(|(i, t)| t.as_ref().map(|_| start + i)),
            );
            let records: Vec<(&Record, usize)> =
                batch.records.iter().map(|r| (r, batch.in_file)).collect();
            let mut results = fill(taken, &records, keys, options, &mut used, &|| {});
            sharing.share(&mut results);
            if let (Some(summary), Some(p)) = (&mut file.summary, prior) {
                let parts: Vec<Vec<u8>> = batch
                    .records
                    .par_iter()
                    .map(|r| p.summary_part(r))
                    .collect();
                if parts
                    .iter()
                    .try_for_each(|p| summary.put(p).map(drop))
                    .is_err()
                {
                    file.summary = None;
                }
            }
            if trees.lets_go() && batch.path != "-" {
                let only_ids_from = match trees {
                    Trees::OnlyIds { after } => after.saturating_sub(read.get()),
                    _ => usize::MAX,
                };
                let_go(batch.records, &results, only_ids_from, batch.bytes);
            }
            file.results.extend(results);
        }
        read.set(read.get() + batch.records.len());
        progress(batch.read, read.get());
    });
    // Past the first `after` records (read or known), those that kept all their facts
    // keep only their ids too: their batch reads them again, as every other's.
    if let Trees::OnlyIds { after } = trees
        && inputs.iter().map(|i| i.records.len()).sum::<usize>() > after
    {
        let stores = inputs.iter_mut().filter(|i| &*i.path != "-");
        for record in stores.flat_map(|i| &mut i.records).take(after) {
            record.keep_only_ids();
        }
    }
    for file in &known {
        used.reused += file.results.len();
    }
    files.extend(known);
    files.sort_by_key(|f| f.input);
    // The first file's verdicts become the report's (a store's can be hundreds of
    // megabytes: copying them would hold them twice).
    let mut records: Vec<RecordResult> = Vec::new();
    for mut file in files {
        if file
            .entry
            .as_ref()
            .is_some_and(|e| !e.confirms(&inputs[file.input]))
        {
            // The file no longer begins with the bytes the entry was made from: what it
            // gave is verified after all (a record let go is read again as the file has
            // it now, then let go bound to its new verdict's hash).
            let input = &mut inputs[file.input];
            let n = input.records.len();
            let lets_go = trees.lets_go() && &*input.path != "-";
            let mut is_taken = vec![false; n];
            for &i in &file.taken {
                is_taken[i] = true;
            }
            let mut stale: Vec<(usize, &mut Record)> = input
                .records
                .iter_mut()
                .enumerate()
                .filter(|(i, _)| is_taken[*i])
                .collect();
            let again: Vec<RecordResult> = stale
                .par_iter_mut()
                .map(|(_, record)| {
                    record.hold_again();
                    let result = verify_record(record, n, keys, options);
                    if lets_go {
                        let_go_one(record, &result);
                    }
                    result
                })
                .collect();
            for ((i, _), result) in stale.iter().zip(again) {
                file.results[*i] = result;
            }
            used.reused -= file.taken.len();
            used.verified += file.taken.len();
            file.changed = true;
            // Its records were read again as the file is now: summarised from them.
            file.summary = None;
        }
        let input = &inputs[file.input];
        if file.changed {
            let summary = file.summary.and_then(|s| s.finish().ok());
            keep(prior, input, &file.results, summary.as_ref(), &mut used);
        }
        if records.is_empty() {
            records = file.results;
        } else {
            records.extend(file.results);
        }
    }
    let report = assemble(&inputs, records, keys);
    (inputs, report, used)
}
