//! NDJSON, one record a line: how a file is recognised as one (its first line is a whole
//! value and more follows) and how its lines become records and errors, a run of lines
//! at a time — a whole body, or a chunk of a streamed file.

use super::{Excerpt, Input, LoadError, parser, push_record};
use crate::model::Span;
use crate::model::json::Json;
use rayon::prelude::*;

/// Where the first line with content starts and where it ends (its newline), once it
/// has ended. `body` has no byte-order mark.
pub(crate) fn first_line(body: &[u8]) -> Option<(usize, usize)> {
    let first = body.iter().position(|b| !b" \t\r\n".contains(b))?;
    let end = memchr::memchr(b'\n', &body[first..])?;
    Some((first, first + end))
}

/// True when something follows the first line with content.
pub(crate) fn more_after_first_line(body: &[u8]) -> bool {
    first_line(body).is_some_and(|(_, end)| has_content(&body[end..]))
}

/// The NDJSON test: the first line with content is a whole JSON value and more follows.
pub(crate) fn opens_a_store(body: &[u8]) -> bool {
    first_line(body).is_some_and(|(first, end)| {
        has_content(&body[end..])
            && std::str::from_utf8(&body[first..end]).is_ok_and(|t| parser::parse(t).is_ok())
    })
}

/// True when `bytes` hold something other than whitespace.
pub(super) fn has_content(bytes: &[u8]) -> bool {
    bytes.iter().any(|b| !b" \t\r\n".contains(b))
}

/// The records and errors of a whole NDJSON body, `offset` bytes into its file (a
/// byte-order mark).
pub(super) fn parse_ndjson(input: &mut Input, body: &[u8], offset: u64) {
    let mut lines = Lines::at(offset);
    lines.feed(input, body);
    lines.finish(input, body.last() == Some(&b'\n'));
}

/// Every line of `run` (lines separated by `\n`, the last one unterminated), numbered
/// from `first`: its number, where it starts in `run`, its bytes without the line end
/// (`\r\n` or `\n`).
pub(crate) fn split_lines(run: &[u8], first: usize) -> impl Iterator<Item = (usize, usize, &[u8])> {
    // Line ends found with memchr (a byte-at-a-time split was 4 % of a reopen's CPU, on
    // one core).
    let ends = memchr::memchr_iter(b'\n', run).chain(std::iter::once(run.len()));
    let mut start = 0;
    ends.enumerate().map(move |(i, end)| {
        let line = &run[start..end];
        let at = start;
        start = end + 1;
        (first + i, at, line.strip_suffix(b"\r").unwrap_or(line))
    })
}

/// Why a line is no JSON value: the message, the column and excerpt when it has them,
/// and the parser's message when the line ended before the value did.
pub(crate) type Problem = (String, Option<(usize, Excerpt)>, Option<String>);

/// One line's bytes (no line end) as a JSON value.
pub(crate) fn parse_line(bytes: &[u8]) -> Result<Json, Problem> {
    match std::str::from_utf8(bytes) {
        Err(e) => Err((
            format!(
                "invalid UTF-8 at byte {} of the line (not repaired)",
                e.valid_up_to() + 1
            ),
            None,
            None,
        )),
        Ok(text) => parser::parse(text).map_err(|e| {
            let column = text[..e.offset.min(text.len())].chars().count() + 1;
            let place = Some((column, Excerpt::of(text, e.offset)));
            let open_ended = (e.offset >= text.len()).then(|| e.message.clone());
            (
                format!("invalid JSON at column {column}: {}", e.message),
                place,
                open_ended,
            )
        }),
    }
}

/// NDJSON lines → records and errors, one run of lines at a time (a whole body, or a
/// chunk of a streamed file), numbering lines across runs.
#[derive(Default)]
pub(crate) struct Lines {
    /// Lines consumed so far.
    consumed: usize,
    /// Where in the file the next run starts.
    offset: u64,
    /// The last line with content.
    last_with_content: Option<usize>,
    /// The last error when it is a JSON error at the very end of its line: the position
    /// in `errors` and the parser's message (a truncated last line is said so at the end).
    open_ended: Option<(usize, String)>,
}

impl Lines {
    /// Lines whose first run starts `offset` bytes into the file.
    pub(crate) fn at(offset: u64) -> Lines {
        Lines {
            offset,
            ..Lines::default()
        }
    }

    /// Where in the file the next run starts.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Parses `run` (whole lines separated by `\n`, the last one unterminated) on every
    /// core and appends its records and errors to `input` in line order.
    pub(crate) fn feed(&mut self, input: &mut Input, run: &[u8]) {
        let mut lines: Vec<(usize, Option<Span>, &[u8])> = Vec::new();
        for (n, start, line) in split_lines(run, self.consumed + 1) {
            self.consumed = n;
            if has_content(line) {
                // A line past 4 GiB is parsed but never read again.
                let offset = self.offset + start as u64;
                let span = u32::try_from(line.len())
                    .ok()
                    .map(|len| Span { offset, len });
                lines.push((n, span, line));
            }
        }
        // The caller goes on after the newline that ends the run.
        self.offset += run.len() as u64 + 1;
        if let Some((n, _, _)) = lines.last() {
            self.last_with_content = Some(*n);
        }
        let parsed: Vec<(usize, Option<Span>, Result<Json, Problem>)> = lines
            .into_par_iter()
            .map(|(n, span, bytes)| (n, span, parse_line(bytes)))
            .collect();
        for (line, span, result) in parsed {
            match result {
                Ok(json) => {
                    let index = input.records.len();
                    push_record(input, json, line, index, span);
                }
                Err((message, place, open_ended)) => {
                    let (column, excerpt) = place.map_or((None, None), |(c, x)| (Some(c), Some(x)));
                    self.open_ended = open_ended.map(|m| (input.errors.len(), m));
                    input.errors.push(LoadError {
                        column,
                        excerpt,
                        path: input.path.clone(),
                        line: Some(line),
                        message,
                    });
                }
            }
        }
    }

    /// After the last run: a last line cut short in a file that does not end with a
    /// newline is reported as truncated (a store still being written).
    pub(crate) fn finish(&mut self, input: &mut Input, ends_with_newline: bool) {
        if ends_with_newline {
            return;
        }
        if let Some((at, message)) = self.open_ended.take()
            && input.errors[at].line == self.last_with_content
        {
            input.errors[at].message =
                format!("truncated last line (a store still being written?): {message}");
        }
    }
}
