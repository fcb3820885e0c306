//! Fingerprints: what tells one finding from another across runs and machines
//! (`model::finding::fingerprint`), made once every finding is known.

use crate::load::Corpus;
use crate::model::Record;
use crate::model::finding::{Finding, Location};
use crate::verify::RecordResult;

/// Fills in the fingerprint of every finding — those of the analysis and each record's
/// own in `verdicts` — from the canonical hashes, in `verdicts`, of the records its
/// locations name.
pub fn fingerprint_all(corpus: &Corpus, findings: &mut [Finding], verdicts: &mut [RecordResult]) {
    let places = Places::of(corpus);
    let of = |f: &Finding, verdicts: &[RecordResult]| {
        crate::model::finding::fingerprint(f, |l| {
            let verdict = verdicts.get(places.first_record_at(l)?)?;
            Some(verdict.canonical_sha256.to_string())
        })
    };
    for f in findings.iter_mut() {
        f.fingerprint = of(f, verdicts);
    }
    let own: Vec<String> = (verdicts.iter().flat_map(|r| &r.findings))
        .map(|f| of(f, verdicts))
        .collect();
    let per_record = verdicts.iter_mut().flat_map(|r| r.findings.iter_mut());
    for (f, fingerprint) in per_record.zip(own) {
        f.fingerprint = fingerprint;
    }
}

/// Finds the first record at a location's file and line by the line in each input of
/// that file, not by a table of every place (a large store's findings name a hundred
/// thousand).
struct Places<'a> {
    inputs: std::collections::HashMap<&'a str, Vec<InputAt<'a>>>,
}

/// One input of a file.
struct InputAt<'a> {
    records: &'a [Record],
    /// Its records are in line order (as loaded).
    in_line_order: bool,
    /// The flat index of its first record.
    first: usize,
}

impl<'a> Places<'a> {
    fn of(corpus: &'a Corpus) -> Places<'a> {
        let mut inputs = std::collections::HashMap::<&str, Vec<InputAt>>::new();
        let mut first = 0;
        for input in &corpus.inputs {
            let records = &input.records[..];
            inputs.entry(&input.path).or_default().push(InputAt {
                records,
                in_line_order: records.is_sorted_by_key(|r| r.source.line),
                first,
            });
            first += records.len();
        }
        Places { inputs }
    }

    /// The flat index of the first record at `at`'s file and line.
    fn first_record_at(&self, at: &Location) -> Option<usize> {
        self.inputs.get(&*at.path)?.iter().find_map(|input| {
            let records = input.records;
            let i = if input.in_line_order {
                records.partition_point(|r| r.source.line < at.line)
            } else {
                records.iter().position(|r| r.source.line == at.line)?
            };
            let found = records.get(i)?.source.line == at.line;
            found.then_some(input.first + i)
        })
    }
}
