//! The one seam between verification and what was verified before: [`Prior`], which the
//! evidence index (`open::cache`) implements. Verification asks it for earlier verdicts
//! and hands it new ones; it knows nothing of where or how they are kept.

use super::RecordResult;
use crate::canon::hex;
use crate::load::digest::Prefix;
use crate::load::spill::Spilled;
use crate::load::{Format, Input};
use crate::model::Record;
use std::path::{Path, PathBuf};

/// Verdicts made before, under the same configuration, and a place to keep new ones.
pub trait Prior: Sync {
    /// The directory it keeps them in (pieces of a file being verified are spilled there).
    fn dir(&self) -> &Path;
    /// The size of `path` when its verdicts were kept: the leading bytes to digest as the
    /// file is read ([`Input::asked`]).
    fn covered(&self, path: &str) -> Option<u64>;
    /// The verdicts kept for `path`, when there are sound ones.
    fn lookup(&self, path: &str) -> Option<Entry>;
    /// A store file loaded from what was kept, without reading a record, when the file is
    /// still byte for byte the one they were kept for; past `only_ids_over` records each
    /// record keeps only its ids.
    fn known(&self, path: &str, only_ids_over: usize) -> Option<(Input, Vec<RecordResult>)>;
    /// Keeps the verdicts of `input` (read whole) in place of earlier ones, with its
    /// records' `summary` when made as they were verified. False when the input has
    /// nothing to keep (stdin, a file not read whole).
    fn store(
        &self,
        input: &Input,
        results: &[RecordResult],
        summary: Option<&Spilled>,
    ) -> std::io::Result<bool>;
    /// One record of a store's summary, made while its facts are in hand.
    fn summary_part(&self, record: &Record) -> Vec<u8>;
}

/// The verdicts an entry holds for one file, found before the file is read.
#[derive(Debug)]
pub struct Entry {
    /// Per record position: its verdicts, until taken.
    records: Vec<Option<RecordResult>>,
    /// The file the verdicts were made from.
    made_from: Prefix,
    /// Made from a one-document file: answers only for the same whole file.
    whole: bool,
    /// False for a store's entry without its summary and BLAKE3 (what [`Prior::known`]
    /// needs; written from a file loaded without them): worth writing again.
    pub summarised: bool,
}

impl Entry {
    /// The verdicts of a file's records (by position), made from the bytes `made_from`
    /// names; `whole` for a one-document file.
    pub fn new(
        records: Vec<RecordResult>,
        made_from: Prefix,
        whole: bool,
        summarised: bool,
    ) -> Entry {
        Entry {
            records: records.into_iter().map(Some).collect(),
            made_from,
            whole,
            summarised,
        }
    }

    /// The verdicts of `record` (with `in_file` records in its file so far, at least 2
    /// unless the file has ended) when they were made at the same place (line, position)
    /// with the same answer to "alone in its file?". Only once the file is read does
    /// [`Entry::confirms`] say whether its bytes are still those: until then a verdict
    /// taken is provisional.
    pub fn take(&mut self, record: &Record, in_file: usize) -> Option<RecordResult> {
        let alone = self.records.len() == 1;
        let result = self.records.get_mut(record.source.index)?;
        let same = result.as_ref()?.source.line == record.source.line && alone == (in_file == 1);
        if same { result.take() } else { None }
    }

    /// True when `input` (read whole) still begins with the bytes the entry was made
    /// from — the same file, or, for a store, one that only grew — so the verdicts
    /// [`Entry::take`] gave for it stand.
    pub fn confirms(&self, input: &Input) -> bool {
        let same_file = input.bytes == Some(self.made_from.bytes)
            && input.sha256.as_deref() == Some(hex(&self.made_from.sha256).as_str());
        if self.whole {
            input.format != Format::Ndjson && same_file
        } else {
            input.format == Format::Ndjson && (same_file || input.asked == Some(self.made_from))
        }
    }
}

/// What earlier verdicts did for one opening of evidence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reuse {
    /// The index's directory (none: none were used).
    pub dir: Option<PathBuf>,
    /// Records whose verdicts were used again.
    pub reused: usize,
    /// Records verified.
    pub verified: usize,
    /// Files whose entry was written (new, or with verdicts of new records).
    pub written: usize,
    /// Verdicts that could not be kept, ready to print.
    pub problems: Vec<String>,
}
