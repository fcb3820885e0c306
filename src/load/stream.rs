//! Evidence read a chunk at a time — how every path is loaded — so a store's bytes are
//! never all in memory at once. Records come out exactly as parsing the whole file with
//! [`parse_input`](super::parse_input) gives them (same records, lines, indexes, errors
//! and digests; a test holds the two to that), a batch per chunk, to a callback (`check`
//! verifies them there) before the next chunk is read; a chunk's bytes are hashed while
//! its lines parse.

use super::digest::FileDigest;
use super::ndjson::{Lines, first_line, more_after_first_line, opens_a_store};
use super::{Format, Input, Origin, origins, parse_input_asked};
use crate::canon::hex;
use crate::model::{Record, Span};
use std::io::Read;
use std::sync::Arc;

/// Bytes read at a time: large enough to keep every core busy on a chunk's lines, small
/// next to any store worth streaming.
pub const CHUNK: usize = 8 << 20;

/// Records just parsed, handed to [`stream_paths`]'s callback.
#[derive(Debug)]
pub struct Batch<'a> {
    /// The records, in file order; they stay in the returned inputs (the callback may
    /// let go of their trees, [`Record::let_go`]).
    pub records: &'a mut [Record],
    /// Records in their file so far: at least 2 unless the file has ended, so "is this
    /// record alone in its file?" is always answered right.
    pub in_file: usize,
    /// Bytes read so far, over every input (for progress).
    pub read: u64,
    /// Which input the records are from: its place in the returned inputs, and its name.
    pub input: usize,
    pub path: &'a str,
    /// The bytes the records were parsed from, as far as they are still in memory.
    pub bytes: FileBytes<'a>,
}

/// Bytes of a file in memory: `bytes` begin `offset` bytes into it.
#[derive(Clone, Copy)]
pub struct FileBytes<'a> {
    pub offset: u64,
    pub bytes: &'a [u8],
}

impl FileBytes<'_> {
    /// The bytes of the line at `span`, when all of them are here.
    pub fn line(&self, span: Span) -> Option<&[u8]> {
        let start = usize::try_from(span.offset.checked_sub(self.offset)?).ok()?;
        self.bytes.get(start..start.checked_add(span.len as usize)?)
    }
}

impl std::fmt::Debug for FileBytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes from byte {}", self.bytes.len(), self.offset)
    }
}

/// Loads every path as [`load_paths`](super::load_paths) does, `chunk` bytes at a time,
/// and hands every record to `each` once, in load order, as soon as its chunk is parsed.
pub fn stream_paths(paths: &[String], chunk: usize, each: impl FnMut(Batch<'_>)) -> Vec<Input> {
    stream_paths_asking(paths, chunk, &mut |_| None, each)
}

/// [`stream_paths`], taking of each file the digest of as many leading bytes as `asked`
/// says when the file is opened ([`Input::asked`]).
pub fn stream_paths_asking(
    paths: &[String],
    chunk: usize,
    asked: &mut dyn FnMut(&str) -> Option<u64>,
    each: impl FnMut(Batch<'_>),
) -> Vec<Input> {
    let mut open = |_: usize, path: &str| Opening::Read {
        asked: asked(path),
        blake3: false,
    };
    stream_paths_opening(paths, chunk, &mut open, each)
}

/// How [`stream_paths_opening`] is to open one file.
#[derive(Debug)]
pub enum Opening {
    /// Read it, taking the digest of `asked` leading bytes ([`Input::asked`]) and, with
    /// `blake3`, the file's BLAKE3 ([`Input::blake3`]).
    Read { asked: Option<u64>, blake3: bool },
    /// It is known already (the evidence index had it, byte for byte): not read, and
    /// its records are not handed to the callback.
    Known(Input),
}

/// [`stream_paths`], asking `open` (with the input's place in the returned inputs and
/// its name) how to open each file.
pub fn stream_paths_opening(
    paths: &[String],
    chunk: usize,
    open: &mut dyn FnMut(usize, &str) -> Opening,
    mut each: impl FnMut(Batch<'_>),
) -> Vec<Input> {
    let chunk = chunk.max(1);
    let mut read = 0;
    let mut inputs = Vec::new();
    for origin in origins(paths) {
        let name: Arc<str> = match &origin {
            Origin::Stdin => "-".into(),
            // The name `input_names` gives.
            Origin::File(path) => path.display().to_string().into(),
            Origin::Problem(input) => input.path.clone(),
        };
        let number = inputs.len();
        let mut batch =
            |records: &mut [Record], in_file: usize, file_read: u64, bytes: FileBytes<'_>| {
                each(Batch {
                    records,
                    in_file,
                    read: read + file_read,
                    input: number,
                    path: &name,
                    bytes,
                });
            };
        let input = match origin {
            Origin::Stdin => stream_reader(
                name.clone(),
                std::io::stdin().lock(),
                chunk,
                (None, false),
                &mut batch,
            ),
            Origin::File(path) => match open(number, &name) {
                Opening::Known(input) => input,
                Opening::Read { asked, blake3 } => match std::fs::File::open(&path) {
                    Ok(file) => {
                        stream_reader(name.clone(), file, chunk, (asked, blake3), &mut batch)
                    }
                    Err(e) => Input::unreadable(name.clone(), format!("cannot read file: {e}")),
                },
            },
            Origin::Problem(input) => input,
        };
        read += input.bytes.unwrap_or(0);
        inputs.push(input);
    }
    inputs
}

/// Reads up to `want` more bytes onto `buf`; true at the end of the input.
fn fill(reader: &mut impl Read, buf: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    let goal = buf.len() + want;
    while buf.len() < goal {
        let before = buf.len();
        match reader
            .by_ref()
            .take((goal - before) as u64)
            .read_to_end(buf)
        {
            Ok(0) => return Ok(true),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

/// `buf` without a leading byte-order mark.
fn body(buf: &[u8]) -> &[u8] {
    buf.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(buf)
}

fn stream_reader(
    path: Arc<str>,
    mut reader: impl Read,
    chunk: usize,
    (asked, blake3): (Option<u64>, bool),
    each: &mut impl FnMut(&mut [Record], usize, u64, FileBytes<'_>),
) -> Input {
    let unreadable = |e: std::io::Error| {
        let what = if &*path == "-" { "stdin" } else { "file" };
        Input::unreadable(path.clone(), format!("cannot read {what}: {e}"))
    };
    let mut buf = Vec::new();
    let mut eof = false;
    // The format is settled once the first line with content has ended and something
    // follows it, or the input has ended.
    while !eof && !more_after_first_line(body(&buf)) {
        // Reads double while the first line goes on, so a long one is not rescanned
        // chunk after chunk.
        let want = chunk.max(buf.len());
        match fill(&mut reader, &mut buf, want) {
            Ok(end) => eof = end,
            Err(e) => return unreadable(e),
        }
    }
    // NDJSON is the one format read in chunks: the others are single documents, parsed
    // whole as `parse_input` does.
    let array = first_line(body(&buf)).is_some_and(|(first, _)| body(&buf)[first] == b'[');
    if array || !opens_a_store(body(&buf)) {
        if let Err(e) = reader.read_to_end(&mut buf) {
            return unreadable(e);
        }
        let mut input = parse_input_asked(path, &buf, (asked, blake3));
        let n = input.records.len();
        let bytes = FileBytes {
            offset: 0,
            bytes: &buf,
        };
        each(&mut input.records, n, buf.len() as u64, bytes);
        return input;
    }
    let mut digest = FileDigest::new(asked, blake3);
    let mut total = buf.len() as u64;
    let mut last_byte = buf.last().copied();
    let bom = buf.starts_with(b"\xEF\xBB\xBF");
    if bom {
        digest.update(&buf[..3]);
        buf.drain(..3);
    }
    let mut lines = Lines::at(if bom { 3 } else { 0 });
    let mut input = Input::empty(path.clone(), Format::Ndjson);
    let mut handed = 0;
    let mut read_error = None;
    // Bytes at the end of `buf` read since the last pass: not hashed yet, and the only
    // ones that can hold a newline (before them is a line's unfinished start).
    let mut fresh = buf.len();
    loop {
        // The whole lines in `buf` are parsed while the fresh bytes are hashed.
        let start = buf.len() - fresh;
        let offset = lines.offset();
        let cut = if eof {
            Some(buf.len())
        } else {
            memchr::memrchr(b'\n', &buf[start..]).map(|i| start + i)
        };
        rayon::join(
            || digest.update(&buf[start..]),
            || {
                if let Some(cut) = cut {
                    lines.feed(&mut input, &buf[..cut]);
                }
            },
        );
        let n = input.records.len();
        if n > handed && (n >= 2 || eof) {
            let bytes = FileBytes {
                offset,
                bytes: &buf[..cut.unwrap_or(0)],
            };
            each(&mut input.records[handed..], n, total, bytes);
            handed = n;
        }
        if eof {
            break;
        }
        if let Some(cut) = cut {
            buf.drain(..=cut);
        }
        let before = buf.len();
        match fill(&mut reader, &mut buf, chunk) {
            Ok(end) => eof = end,
            Err(e) => {
                read_error = Some(e);
                eof = true;
            }
        }
        fresh = buf.len() - before;
        total += fresh as u64;
        if fresh > 0 {
            last_byte = buf.last().copied();
        }
    }
    lines.finish(&mut input, last_byte == Some(b'\n'));
    if let Some(e) = read_error {
        input.errors.push(super::LoadError::whole(
            &path,
            format!("cannot read the rest of the file: {e} (the records before it are loaded)"),
        ));
    } else {
        let digests = digest.finish();
        input.sha256 = Some(hex(&digests.sha256));
        input.asked = digests.asked;
        input.blake3 = digests.blake3;
        input.bytes = Some(total);
    }
    input
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_input;

    /// Streamed in chunks of every size, a body loads exactly as parsed whole, and every
    /// record reaches the callback once, in order, with a count that answers "alone?".
    #[test]
    fn streaming_loads_what_a_whole_parse_loads() {
        let bodies: &[&[u8]] = &[
            b"{\"a\":1}\n{\"b\":2}\n",
            b"\xEF\xBB\xBF{\"a\":1}\r\nnot json\r\n{\"b\":\xff}\r\n[1]\r\n\r\n{\"c\":3}\r\n{\"d\":",
            b"{\"a\":1}\n\n\n{\"b\":[1,2,{\"c\":\"\\u00e9\"}]}\n{\"c\":\n   \n",
            b"{\"a\":1}\n{\"b\":2",
            b"\n\n  {\"a\":1}\n{\"b\":2}",
            b"{\"a\":1}\n",
            b"{\"a\":1}\n   ",
            b"{\n  \"a\": 1\n}\n",
            b"[{\"a\":1},\n{\"b\":2}]",
            b"  \n",
            b"",
            b"{\"a\":1} x\n{\"b\":2}\n",
        ];
        let dir = std::env::temp_dir().join(format!("aeplens-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Named `.json`, a one-line file is a document, not a store of one record.
        let named = bodies.iter().flat_map(|b| [(b, "ndjson"), (b, "json")]);
        for (i, (body, ext)) in named.enumerate() {
            let file = dir.join(format!("s{i}.{ext}"));
            std::fs::write(&file, body).unwrap();
            let name = file.display().to_string();
            let whole = parse_input(name.as_str().into(), body);
            // A record's span is its line: parsed again, it is the same JSON.
            for r in &whole.records {
                if let Some(span) = r.span {
                    let line = &body[span.offset as usize..][..span.len as usize];
                    let again = super::super::parser::parse(std::str::from_utf8(line).unwrap());
                    assert_eq!(
                        again.as_ref().ok(),
                        Some(r.json()),
                        "body {i}, {:?}",
                        r.source
                    );
                }
            }
            for chunk in [1, 2, 3, 5, 8, 64, CHUNK] {
                let (mut seen, mut lines_in_memory) = (Vec::new(), 0);
                let streamed = stream_paths(std::slice::from_ref(&name), chunk, |batch| {
                    let n = batch.in_file;
                    assert!(n >= 2 || n == whole.records.len(), "body {i}: count {n}");
                    assert!(batch.read <= body.len() as u64);
                    seen.extend(batch.records.iter().map(|r| r.source.line));
                    // A line the batch's bytes hold is the file's, at its span.
                    for span in batch.records.iter().filter_map(|r| r.span) {
                        if let Some(line) = batch.bytes.line(span) {
                            let start = span.offset as usize;
                            assert_eq!(line, &body[start..start + span.len as usize]);
                            lines_in_memory += 1;
                        }
                    }
                });
                // Only a first record handed with the next chunk's can be missing.
                let spans = whole.records.iter().filter(|r| r.span.is_some()).count();
                assert!(
                    lines_in_memory + 1 >= spans,
                    "body {i}, chunk {chunk}: {lines_in_memory} of {spans} lines"
                );
                assert_eq!(
                    format!("{:?}", streamed[0]),
                    format!("{whole:?}"),
                    "body {i}, chunk {chunk}"
                );
                let lines: Vec<usize> = whole.records.iter().map(|r| r.source.line).collect();
                assert_eq!(seen, lines, "body {i}, chunk {chunk}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
