//! Fingerprints: what tells one finding from another across runs and machines
//! (`model::finding::fingerprint`), made once every finding is known.

use crate::load::Corpus;
use crate::model::finding::{Finding, Location};
use crate::verify::RecordResult;

/// Fills in the fingerprint of every finding — those of the analysis and each record's
/// own in `verdicts` — from the canonical hashes, in `verdicts`, of the records its
/// locations name.
pub fn fingerprint_all(corpus: &Corpus, findings: &mut [Finding], verdicts: &mut [RecordResult]) {
    let places = Places::of(corpus);
    for f in findings.iter_mut() {
        f.fingerprint = places.fingerprint(f, verdicts);
    }
    let own: Vec<String> = (verdicts.iter().flat_map(|r| &r.findings))
        .map(|f| places.fingerprint(f, verdicts))
        .collect();
    let per_record = verdicts.iter_mut().flat_map(|r| r.findings.iter_mut());
    for (f, fingerprint) in per_record.zip(own) {
        f.fingerprint = fingerprint;
    }
}

/// Where each record of a corpus is, to find the first record at a location's file and
/// line by the line in each input of that file, not by a table of every place (a large
/// store's findings name a hundred thousand). Holds no record: the corpus may change
/// (records let go of their facts) while it is used.
pub struct Places {
    inputs: std::collections::HashMap<std::sync::Arc<str>, Vec<InputAt>>,
}

/// One input of a file.
struct InputAt {
    /// The line of each record, in the input's order.
    lines: Vec<usize>,
    /// Its records are in line order (as loaded).
    in_line_order: bool,
    /// The flat index of its first record.
    first: usize,
}

impl Places {
    /// The places of `corpus`'s records.
    pub fn of(corpus: &Corpus) -> Places {
        let mut inputs = std::collections::HashMap::<std::sync::Arc<str>, Vec<InputAt>>::new();
        let mut first = 0;
        for input in &corpus.inputs {
            let lines: Vec<usize> = input.records.iter().map(|r| r.source.line).collect();
            let count = lines.len();
            inputs.entry(input.path.clone()).or_default().push(InputAt {
                in_line_order: lines.is_sorted(),
                lines,
                first,
            });
            first += count;
        }
        Places { inputs }
    }

    /// The fingerprint of `f`, from the canonical hashes in `verdicts` (one per record
    /// of the corpus, in order) of the records its locations name.
    pub fn fingerprint(&self, f: &Finding, verdicts: &[RecordResult]) -> String {
        crate::model::finding::fingerprint(f, |l| {
            let verdict = verdicts.get(self.first_record_at(l)?)?;
            Some(verdict.canonical_sha256.to_string())
        })
    }

    /// The flat index of the first record at `at`'s file and line.
    pub fn first_record_at(&self, at: &Location) -> Option<usize> {
        self.inputs.get(&*at.path)?.iter().find_map(|input| {
            let lines = &input.lines;
            let i = if input.in_line_order {
                lines.partition_point(|&l| l < at.line)
            } else {
                lines.iter().position(|&l| l == at.line)?
            };
            let found = *lines.get(i)? == at.line;
            found.then_some(input.first + i)
        })
    }
}
