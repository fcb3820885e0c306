//! A store's summary in its index entry — what loading it gave besides its verdicts: its
//! load errors and each record's line, span and facts — written after the verdict lines
//! and read back a chunk at a time ([`BodyReader`]).

use super::{RecordResult, verdicts};
use crate::load::{Excerpt, Format, Input, LoadError, reread};
use crate::model::codec::{Reader, Writer};
use crate::model::facts::RecordFacts;
use crate::model::{Record, Source, Span};
use rayon::prelude::*;
use std::io::Read;
use std::sync::Arc;

/// True when the entry of `input` gets a summary of the store: what loading it gave
/// besides its verdicts (its load errors, [`summary_head`], and each record's line, span
/// and [`RecordFacts`], [`summary_part`]) — for a store whose records all have a span.
pub(super) fn summarised(input: &Input, results: &[RecordResult]) -> bool {
    input.format == Format::Ndjson
        && input.records.len() == results.len()
        && input.records.iter().all(|r| r.span.is_some())
}

/// The start of a store's summary: its load errors and record count.
pub(super) fn summary_head(input: &Input) -> Vec<u8> {
    let mut head = Writer::default();
    head.uint(input.errors.len() as u64);
    for e in &input.errors {
        head.uint(e.line.map_or(0, |l| l as u64 + 1));
        head.uint(e.column.map_or(0, |c| c as u64 + 1));
        head.uint(u64::from(e.excerpt.is_some()));
        if let Some(x) = &e.excerpt {
            head.bytes(x.text.as_bytes());
            head.uint(x.at as u64);
        }
        head.bytes(e.message.as_bytes());
    }
    head.uint(input.records.len() as u64);
    head.bytes
}

/// One record of a store's summary, length first (so the records are read back on every
/// core): its line, span and facts.
pub(crate) fn summary_part(record: &Record) -> Vec<u8> {
    let span = record.span.unwrap_or(Span { offset: 0, len: 0 });
    let mut w = Writer::default();
    w.uint(record.source.line as u64);
    w.uint(span.offset);
    w.uint(u64::from(span.len));
    record.facts().encode(&mut w);
    let mut part = Writer::default();
    part.bytes(&w.bytes);
    part.bytes
}

/// Bytes of an entry's body read at a time by [`super::Index::known`].
pub(super) const BODY_CHUNK: usize = 8 << 20;

/// An entry's body read a chunk at a time (never whole in memory), each byte going into
/// its checksum as it is read.
pub(super) struct BodyReader<R> {
    file: R,
    /// Bytes read at a time.
    chunk: usize,
    hasher: blake3::Hasher,
    /// Bytes read and not yet used.
    pending: Vec<u8>,
    eof: bool,
}

impl<R: Read> BodyReader<R> {
    /// Reads the body from `file`, `chunk` bytes at a time.
    pub(super) fn new(file: R, chunk: usize) -> BodyReader<R> {
        BodyReader {
            file,
            chunk: chunk.max(1),
            hasher: blake3::Hasher::new(),
            pending: Vec::new(),
            eof: false,
        }
    }

    /// The [`super::checksum`] of the body, read to its end first when it was not (what
    /// is left is read and dropped); `None` when it cannot be read.
    pub(super) fn checksum(&mut self) -> Option<String> {
        while !self.eof {
            self.pending.clear();
            self.more(self.chunk)?;
        }
        Some(crate::canon::hex(self.hasher.finalize().as_bytes()))
    }

    /// Appends up to `want` more bytes to `pending`; false once there are none.
    fn more(&mut self, want: usize) -> Option<bool> {
        let before = self.pending.len();
        (&mut self.file)
            .take(want as u64)
            .read_to_end(&mut self.pending)
            .ok()?;
        self.hasher.update(&self.pending[before..]);
        self.eof = self.pending.len() == before;
        Some(!self.eof)
    }

    /// The verdict lines (`len` bytes, `n` records), parsed a chunk at a time on every
    /// core.
    pub(super) fn verdicts(&mut self, mut len: u64, n: usize) -> Option<Vec<RecordResult>> {
        let mut results = Vec::with_capacity(n);
        let mut lines = verdicts::Reader::default();
        while len > 0 {
            let want = usize::try_from(len).ok()?.min(self.chunk);
            if !self.more(want)? {
                return None;
            }
            len -= want as u64;
            // Whole lines only, until the last.
            let cut = if len == 0 {
                self.pending.len()
            } else {
                match self.pending.iter().rposition(|&b| b == b'\n') {
                    Some(cut) => cut,
                    None => continue,
                }
            };
            results.extend(lines.block(&self.pending[..cut])?);
            self.pending.drain(..(cut + 1).min(self.pending.len()));
        }
        (results.len() == n).then_some(results)
    }

    /// The store's summary after the verdict lines: its load errors and its records, each
    /// bound to the canonical hash of its verdicts (`results`) and keeping `only_ids` or
    /// all its facts, read to the end.
    pub(super) fn summary(
        &mut self,
        path: &Arc<str>,
        results: &[RecordResult],
        only_ids: bool,
    ) -> Option<(Vec<LoadError>, Vec<Record>)> {
        // The line end between the verdicts and the summary.
        while self.pending.is_empty() && self.more(self.chunk)? {}
        if self.pending.first() != Some(&b'\n') {
            return None;
        }
        self.pending.drain(..1);
        // The head: read until it is whole (a damaged one never is, and the end comes).
        let (errors, used) = loop {
            let mut r = Reader::new(&self.pending);
            if let Some(errors) = summary_errors(&mut r, path, results.len()) {
                break (errors, self.pending.len() - r.rest().len());
            }
            if !self.more(self.chunk)? {
                return None;
            }
        };
        self.pending.drain(..used);
        let mut records: Vec<Record> = Vec::with_capacity(results.len());
        loop {
            // Every whole record part read so far, decoded on every core.
            let mut r = Reader::new(&self.pending);
            let mut parts = Vec::new();
            while records.len() + parts.len() < results.len() {
                let mut next = Reader::new(r.rest());
                match next.bytes() {
                    Some(part) => {
                        parts.push(part);
                        r = next;
                    }
                    None => break,
                }
            }
            let first = records.len();
            let decoded: Vec<Record> = parts
                .into_par_iter()
                .enumerate()
                .map(|(i, part)| {
                    let mut record = summary_record(part, path, first + i, &results[first + i])?;
                    if only_ids {
                        record.keep_only_ids();
                    }
                    Some(record)
                })
                .collect::<Option<_>>()?;
            records.extend(decoded);
            let used = self.pending.len() - r.rest().len();
            self.pending.drain(..used);
            if !self.more(self.chunk)? {
                break;
            }
        }
        (records.len() == results.len() && self.pending.is_empty()).then_some((errors, records))
    }
}

/// The load errors at the head of a store's summary, when its record count is `n`.
fn summary_errors(r: &mut Reader<'_>, path: &Arc<str>, n: usize) -> Option<Vec<LoadError>> {
    let count: usize = r.int()?;
    let mut errors = Vec::with_capacity(count.min(r.rest().len()));
    for _ in 0..count {
        let line = r.int::<usize>()?.checked_sub(1);
        let column = r.int::<usize>()?.checked_sub(1);
        let excerpt = if r.bool()? {
            Some(Excerpt {
                text: r.str()?.to_string(),
                at: r.int()?,
            })
        } else {
            None
        };
        errors.push(LoadError {
            path: path.clone(),
            line,
            column,
            excerpt,
            message: r.str()?.to_string(),
        });
    }
    (r.int::<usize>()? == n).then_some(errors)
}

/// The record at `index` of the store at `path` from its part of the summary, bound to
/// the canonical hash of its verdicts `result`, when the part is one made for it.
fn summary_record(
    part: &[u8],
    path: &Arc<str>,
    index: usize,
    result: &RecordResult,
) -> Option<Record> {
    let mut r = Reader::new(part);
    let line = r.int()?;
    let span = Span {
        offset: r.uint()?,
        len: r.int()?,
    };
    let facts = RecordFacts::decode(&mut r)?;
    let canonical = result.canonical_sha256.0;
    if !r.is_empty() || result.source.line != line || result.source.index != index {
        return None;
    }
    let source = Source {
        path: path.clone(),
        line,
        index,
    };
    Some(Record::on_disk(source, span, canonical, reread, facts))
}
