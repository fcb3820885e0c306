//! The verdict lines of an entry. A store's records mostly share their verdicts but for
//! their place, canonical hash and run (a million `pass`/`valid` records differ in nothing
//! else), so each distinct rest — a *template* — is written once, as JSON on a line of its
//! own starting with `T`, before the first record that uses it; each record is then a line
//! `[template, line, index, "canonical hash", run]`. Template numbers count template lines
//! in order. Read back a block of whole lines at a time, on every core.

use super::RecordResult;
use crate::canon::Sha256Digest;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One record's verdicts and the two facts the report does not print.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored<R> {
    result: R,
    signed: bool,
    key_unknown: bool,
    /// The timestamp proof's authority (d.4, judged across the evidence on each opening).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timestamp_authority: Option<compact_str::CompactString>,
}

/// What varies from record to record, apart from its template.
type Own = (
    u32,
    usize,
    usize,
    Sha256Digest,
    Option<compact_str::CompactString>,
);

/// Writes verdict lines, each distinct template once.
#[derive(Default)]
pub(super) struct Writer {
    /// Template number by the BLAKE3 of its JSON.
    numbers: HashMap<[u8; 32], u32>,
}

impl Writer {
    /// The lines of `results` (a batch, in order, made on every core), without line
    /// ends: a template line before a record's line when its template is new.
    pub(super) fn lines(&mut self, results: &[RecordResult]) -> serde_json::Result<Vec<Vec<u8>>> {
        let made: Vec<(Vec<u8>, [u8; 32])> = results
            .par_iter()
            .map(|result| {
                let mut rest = result.clone();
                rest.source.line = 0;
                rest.source.index = 0;
                rest.canonical_sha256 = Sha256Digest::default();
                rest.run_id = None;
                let json = serde_json::to_vec(&Stored {
                    result: &rest,
                    signed: result.signed,
                    key_unknown: result.authenticity.key_unknown,
                    timestamp_authority: result.authenticity.timestamp_authority.clone(),
                })?;
                let hash = *blake3::hash(&json).as_bytes();
                Ok((json, hash))
            })
            .collect::<serde_json::Result<_>>()?;
        let mut out = Vec::with_capacity(results.len());
        for (result, (json, hash)) in results.iter().zip(made) {
            let next = self.numbers.len() as u32;
            let number = *self.numbers.entry(hash).or_insert(next);
            if number == next {
                out.push([&b"T"[..], &json].concat());
            }
            let own: (u32, usize, usize, Sha256Digest, Option<&str>) = (
                number,
                result.source.line,
                result.source.index,
                result.canonical_sha256,
                result.run_id.as_deref(),
            );
            out.push(serde_json::to_vec(&own)?);
        }
        Ok(out)
    }
}

/// Reads verdict lines back, a block of whole lines at a time.
#[derive(Default)]
pub(super) struct Reader {
    templates: Vec<RecordResult>,
}

impl Reader {
    /// The records of `block` (whole lines, without the last line end), its templates
    /// kept for the blocks after it; `None` when a line is not one [`Writer`] makes.
    pub(super) fn block(&mut self, block: &[u8]) -> Option<Vec<RecordResult>> {
        let lines: Vec<&[u8]> = block.split(|&b| b == b'\n').collect();
        let templates: Vec<RecordResult> = lines
            .par_iter()
            .filter_map(|line| line.strip_prefix(b"T"))
            .map(|json| {
                let s: Stored<RecordResult> = serde_json::from_slice(json).ok()?;
                let mut result = s.result;
                result.signed = s.signed;
                let auth = std::sync::Arc::make_mut(&mut result.authenticity);
                auth.key_unknown = s.key_unknown;
                auth.timestamp_authority = s.timestamp_authority;
                Some(result)
            })
            .collect::<Option<_>>()?;
        self.templates.extend(templates);
        let templates = &self.templates;
        lines
            .par_iter()
            .filter(|line| !line.starts_with(b"T"))
            .map(|line| {
                let (number, line, index, canonical, run): Own =
                    serde_json::from_slice(line).ok()?;
                let mut result = templates.get(number as usize)?.clone();
                result.source.line = line;
                result.source.index = index;
                result.canonical_sha256 = canonical;
                result.run_id = run;
                Some(result)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fixture's verdicts read back as written, in blocks cut at any line; records
    /// that differ only in place, hash and run share one template; a record naming a
    /// template not yet read, or a line no writer makes, is refused.
    #[test]
    fn verdicts_read_back_as_written_each_template_once() {
        let mut report = crate::verify::fixture_report();
        // What a record names among the other evidence is found at each opening, never kept.
        for r in &mut report.records {
            r.links.clear();
        }
        let results = &report.records;
        assert!(results.len() > 300);
        let mut writer = Writer::default();
        let mut lines = Vec::new();
        for batch in results.chunks(97) {
            lines.extend(writer.lines(batch).unwrap());
        }
        let templates = lines.iter().filter(|l| l.starts_with(b"T")).count();
        assert_eq!(lines.len() - templates, results.len());
        for block in [1, 5, lines.len()] {
            let mut reader = Reader::default();
            let mut back = Vec::new();
            for part in lines.chunks(block) {
                back.extend(reader.block(&part.join(&b'\n')).unwrap());
            }
            assert_eq!(&back, results, "blocks of {block} lines");
            assert!(back.iter().zip(results).all(|(a, b)| a.signed == b.signed));
        }
        // The same record at other places, with other hashes and runs: one template.
        let moved: Vec<RecordResult> = (0..50)
            .map(|i| {
                let mut r = results[0].clone();
                r.source.line += 1000 + i;
                r.source.index = i;
                r.canonical_sha256 = Sha256Digest::of(&i.to_le_bytes());
                r.run_id = (i % 2 == 0).then(|| format!("run-{i}").into());
                r
            })
            .collect();
        let again = Writer::default().lines(&moved).unwrap();
        assert_eq!(again.len(), 51);
        assert_eq!(Reader::default().block(&again.join(&b'\n')).unwrap(), moved);
        let known = writer.lines(&moved).unwrap();
        assert_eq!(known.len(), 50, "its template was written already");
        // Refused: a template not read yet, an unknown member, an empty line.
        let record = lines.iter().position(|l| !l.starts_with(b"T")).unwrap();
        assert_eq!(Reader::default().block(&lines[record]), None);
        let first = &lines[0];
        let odd = [&first[..first.len() - 1], b",\"extra\":1}"].concat();
        let block = [odd, lines[record].clone()].join(&b'\n');
        assert_eq!(Reader::default().block(&block), None);
        assert_eq!(Reader::default().block(b""), None);
    }
}
