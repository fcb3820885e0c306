//! A file cut into the bytes of its records, for an engine that schedules the work on a
//! store itself (Spark's `mapInArrow`): [`split`] cuts a file as [`super::parse_input`]
//! reads it, and [`record`] parses one piece to the very record `parse_input` reads from
//! those bytes, at the same line. A file larger than a task should hold is cut into byte
//! ranges instead ([`split_range`]), once its first bytes show it is NDJSON
//! ([`ndjson_from_head`]).

use super::ndjson::{has_content, opens_a_store, parse_line, split_lines};
use super::{Format, Input, LoadError, Shape, array_elements, push_record, shape};
use crate::model::Record;
use std::ops::Range;
use std::sync::Arc;

/// The bytes of one record (or of a line that fails to be one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// 1-based line the record starts on.
    pub line: usize,
    /// Its position among the file's records when the file says it (an array element, a
    /// single document); `None` on an NDJSON line, whose position counts the lines before
    /// it that are records.
    pub index: Option<usize>,
    /// Where its bytes are in the file.
    pub bytes: Range<usize>,
}

/// A file: what `parse_input` says of it as a whole (path, SHA-256, size, format and the
/// errors of the whole file — empty, an unreadable array), no record yet, and its pieces.
#[derive(Debug)]
pub struct Pieces {
    pub input: Input,
    pub pieces: Vec<Piece>,
}

/// Cuts a file's bytes into the pieces [`record`] parses.
pub fn split(path: &str, bytes: &[u8]) -> Pieces {
    let path: Arc<str> = path.into();
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let offset = bytes.len() - body.len();
    let mut input = Input {
        sha256: Some(crate::canon::sha256_hex(bytes)),
        bytes: Some(bytes.len() as u64),
        ..Input::empty(path.clone(), Format::Ndjson)
    };
    let mut pieces = Vec::new();
    match shape(&path, body) {
        Shape::Empty => {
            input.format = Format::Empty;
            (input.errors).push(LoadError::whole(&path, "empty file: no records".into()));
        }
        Shape::Array => {
            input.format = Format::Array;
            match array_elements(&path, body) {
                Ok(elements) => {
                    for (index, (line, range, _)) in elements.into_iter().enumerate() {
                        let bytes = offset + range.start..offset + range.end;
                        let index = Some(index);
                        pieces.push(Piece { line, index, bytes });
                    }
                }
                Err(e) => input.errors.push(e),
            }
        }
        Shape::Object { line, .. } => {
            input.format = Format::Object;
            let bytes = offset..bytes.len();
            pieces.push(Piece {
                line,
                index: Some(0),
                bytes,
            });
        }
        Shape::Ndjson => {
            for (line, start, text) in split_lines(body, 1) {
                if has_content(text) {
                    let bytes = offset + start..offset + start + text.len();
                    pieces.push(Piece {
                        line,
                        index: None,
                        bytes,
                    });
                }
            }
        }
    }
    Pieces { input, pieces }
}

/// True when a file whose first bytes are `head` is NDJSON whatever follows them: its
/// first line with content is a whole value and more follows (the loader's rule
/// for NDJSON). Only then can it be cut into ranges; any other file is read whole.
pub fn ndjson_from_head(head: &[u8]) -> bool {
    let body = head.strip_prefix(BOM).unwrap_or(head);
    let first = body.iter().find(|b| !b" \t\r\n".contains(b));
    first.is_some_and(|&b| b != b'[') && opens_a_store(body)
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The pieces of one byte range of an NDJSON file ([`split_range`]).
#[derive(Debug, PartialEq, Eq)]
pub struct RangePieces {
    /// The lines that start in the range. A piece's `line` counts from the range's start:
    /// 1 plus the newlines between the range's start and the line; its `bytes` are
    /// positions in the `data` given.
    pub pieces: Vec<Piece>,
    /// The newlines in the range: the sum over a file's earlier ranges is what turns a
    /// piece's `line` into its line in the file.
    pub newlines: usize,
}

/// Cuts the range `start..end` of an NDJSON file (one [`ndjson_from_head`] accepts) into
/// the pieces [`split`] gives for the lines that start in it: a line belongs to the range
/// holding its first byte, so the ranges of a file, cut anywhere, give each line once.
/// `data` is the file's bytes from `start - 1` (from 0 when `start` is 0) through the
/// newline that ends the line holding byte `end - 1`, or to the end of the file.
pub fn split_range(start: usize, end: usize, data: &[u8]) -> Result<RangePieces, String> {
    let from = start.saturating_sub(1);
    if end < start || data.len() < end - from {
        return Err(format!(
            "range {start}..{end}: {} bytes given from byte {from}, fewer than it spans",
            data.len()
        ));
    }
    let inside = &data[start - from..end - from];
    let newlines = memchr::memchr_iter(b'\n', inside).count();
    // Where the first line starting in the range starts (past a byte-order mark: the
    // file's first line starts at byte 0 all the same), and its number.
    let (first, line, starts_inside) = if start == 0 {
        let bom = if data.starts_with(BOM) { BOM.len() } else { 0 };
        (bom, 1, end > 0)
    } else {
        match memchr::memchr(b'\n', data) {
            Some(at) => (at + 1, if at == 0 { 1 } else { 2 }, from + at + 1 < end),
            None => (data.len(), 1, false),
        }
    };
    let mut pieces = Vec::new();
    if starts_inside {
        // The last line starting in the range ends at the first newline from `end - 1`.
        let last = end - 1 - from;
        let stop = memchr::memchr(b'\n', &data[last..]).map_or(data.len(), |at| last + at + 1);
        let stop = stop.max(first);
        for (line, at, text) in split_lines(&data[first..stop], line) {
            if has_content(text) {
                let bytes = first + at..first + at + text.len();
                pieces.push(Piece {
                    line,
                    index: None,
                    bytes,
                });
            }
        }
    }
    Ok(RangePieces { pieces, newlines })
}

/// One piece of the file at `path` as the record it holds (at `line`, `index`-th of its
/// file), or the load error that line gets.
pub fn record(
    path: Arc<str>,
    line: usize,
    index: usize,
    bytes: &[u8],
) -> Result<Record, LoadError> {
    let mut input = Input::empty(path.clone(), Format::Ndjson);
    match parse_line(bytes) {
        Ok(json) => push_record(&mut input, json, line, index, None),
        Err((message, place, _)) => {
            let (column, excerpt) = place.map_or((None, None), |(c, x)| (Some(c), Some(x)));
            input.errors.push(LoadError {
                column,
                excerpt,
                path,
                line: Some(line),
                message,
            });
        }
    }
    match (input.records.pop(), input.errors.pop()) {
        (Some(record), _) => Ok(record),
        (None, Some(error)) => Err(error),
        (None, None) => unreachable!("a piece is a record or an error"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (line, index, H) of each record.
    type Found = Vec<(usize, usize, String)>;

    /// The records `parse_input` reads, and those the pieces give.
    fn both(path: &str, bytes: &[u8]) -> (Found, Found) {
        let whole = super::super::parse_input(path.into(), bytes);
        let of = |r: &Record| {
            let h = crate::canon::Sha256Digest::of(&crate::canon::canonical_bytes(
                r.json(),
                crate::canon::Variant::C2,
            ));
            (r.source.line, r.source.index, h.to_string())
        };
        let want: Vec<_> = whole.records.iter().map(of).collect();
        let cut = split(path, bytes);
        assert_eq!(cut.input.format, whole.format);
        assert_eq!(cut.input.sha256, whole.sha256);
        let mut got = Vec::new();
        for p in &cut.pieces {
            let index = p.index.unwrap_or(got.len());
            if let Ok(r) = record(path.into(), p.line, index, &bytes[p.bytes.clone()]) {
                got.push(of(&r));
            }
        }
        let errors = cut.pieces.len() - got.len() + cut.input.errors.len();
        assert_eq!(errors, whole.errors.len(), "{path}");
        (want, got)
    }

    #[test]
    fn pieces_parse_to_the_records_of_the_whole_file() {
        let cases: [(&str, &[u8]); 6] = [
            (
                "a.ndjson",
                b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \n{\"b\":[1,\n2]}\n[3]\n{\"c\":2}",
            ),
            (
                "b.json",
                b"\n[ {\"a\":1},\n\n  {\"b\": {\"c\": 2}} , 7, {\"d\":\"x\"}\n]\n",
            ),
            ("c.json", b"\n\n{\n  \"a\": 1,\n  \"a\": 2\n}\n"),
            ("d.ndjson", b"{\"a\":1}\n"),
            ("e.ndjson", b"  \n\t\n"),
            ("f.json", b"[{\"a\":1}, oops]"),
        ];
        for (path, bytes) in cases {
            let (want, got) = both(path, bytes);
            assert_eq!(got, want, "{path}");
        }
    }

    /// The pieces of `bytes` cut into ranges of `size` bytes, each given only its own
    /// bytes and what [`split_range`] asks for: lines numbered in the file, bytes in it.
    fn ranged(bytes: &[u8], size: usize) -> Vec<Piece> {
        let (mut out, mut before) = (Vec::new(), 0);
        for start in (0..bytes.len()).step_by(size) {
            let end = (start + size).min(bytes.len());
            let from = start.saturating_sub(1);
            let stop = memchr::memchr(b'\n', &bytes[end - 1..]).map_or(bytes.len(), |at| end + at);
            let cut = split_range(start, end, &bytes[from..stop]).unwrap();
            for p in cut.pieces {
                let bytes = from + p.bytes.start..from + p.bytes.end;
                out.push(Piece {
                    line: before + p.line,
                    index: None,
                    bytes,
                });
            }
            before += cut.newlines;
        }
        out
    }

    #[test]
    fn ranges_cut_anywhere_give_the_pieces_of_the_whole_file() {
        let store: &[u8] =
            b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \n{\"b\":[1,\n2]}\n\n\n[3]\n{\"c\":2}\r\n{\"d\":\"\xFF\"}\n{\"e\":4}";
        assert!(ndjson_from_head(&store[..20]));
        let whole = split("s.ndjson", store).pieces;
        assert!(whole.len() >= 6);
        for size in 1..=store.len() {
            assert_eq!(ranged(store, size), whole, "ranges of {size} bytes");
        }
        let newline_ended = b"{\"a\":1}\n{\"b\":2}\n";
        for size in 1..=newline_ended.len() {
            assert_eq!(
                ranged(newline_ended, size),
                split("t.ndjson", newline_ended).pieces
            );
        }
    }

    #[test]
    fn only_a_head_that_opens_a_store_is_cut() {
        assert!(ndjson_from_head(b"\n {\"a\":1}\n{"));
        assert!(!ndjson_from_head(b"[{\"a\":1},\n{\"b\":2}]\n"));
        assert!(!ndjson_from_head(b"{\n  \"a\": 1\n}\n"));
        assert!(!ndjson_from_head(b"{\"a\":1}\n"));
        assert!(!ndjson_from_head(b"{\"a\":1"));
        assert!(!ndjson_from_head(b"  \n"));
        assert!(split_range(10, 20, b"short").is_err());
    }
}
