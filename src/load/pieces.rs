//! A file cut into the bytes of its records, for an engine that schedules the work on a
//! store itself (Spark's `mapInArrow`): [`split`] cuts a file as [`super::parse_input`]
//! reads it, and [`record`] parses one piece to the very record `parse_input` reads from
//! those bytes, at the same line.

use super::ndjson::{has_content, parse_line, split_lines};
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
}
