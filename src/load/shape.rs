//! How a file's body is read: its [`Shape`] (empty, a JSON array, one document, NDJSON),
//! detected from the content, and a JSON array's elements — the one rule the loader
//! (`parse_body`) and the pieces an engine verifies apart (`pieces::split`) both follow.

use super::ndjson::{first_line, has_content, opens_a_store};
use super::{Excerpt, LoadError, parser};
use crate::model::json::Json;
use std::sync::Arc;

/// How a file's body is read, detected from its content (after any byte-order mark):
/// the one rule [`parse_body`] and [`pieces::split`] both follow.
pub(crate) enum Shape {
    /// Nothing but whitespace.
    Empty,
    /// A JSON array of records (starts with `[`).
    Array,
    /// One (possibly pretty-printed) document, starting on `line`.
    Object { line: usize, json: Json },
    /// One record a line.
    Ndjson,
}

/// The [`Shape`] of a body (no byte-order mark) of the file at `path`.
// `.json` as written: the loader's rule for a one-record store has always been so.
#[allow(clippy::case_sensitive_file_extension_comparisons)]
pub(crate) fn shape(path: &str, body: &[u8]) -> Shape {
    let Some(first) = body.iter().position(|b| !b" \t\r\n".contains(b)) else {
        return Shape::Empty;
    };
    if body[first] == b'[' {
        return Shape::Array;
    }
    // NDJSON when the first line is a complete value and more follows; otherwise a
    // single (possibly pretty-printed) document when the whole text is one value.
    let first_line_end = first_line(body).map(|(_, end)| end);
    let first_line_complete = opens_a_store(body);
    // One record on one newline-terminated line, not named `.json`: a store of one
    // record (what `FilesystemEvidenceStore` writes), not a standalone document.
    let one_line_store =
        first_line_end.is_some_and(|end| !has_content(&body[end..])) && !path.ends_with(".json");
    if !first_line_complete
        && !one_line_store
        && let Ok(text) = std::str::from_utf8(body)
        && let Ok(json) = parser::parse(text)
    {
        let line = 1 + body[..first].iter().filter(|&&b| b == b'\n').count();
        return Shape::Object { line, json };
    }
    Shape::Ndjson
}

/// The elements of a JSON array body: each with the line it starts on and the bytes it
/// spans in `body`; or the error that makes the whole array unreadable.
pub(crate) fn array_elements(
    path: &Arc<str>,
    body: &[u8],
) -> Result<Vec<(usize, std::ops::Range<usize>, Json)>, LoadError> {
    let line_of = |offset: usize| 1 + body[..offset].iter().filter(|&&b| b == b'\n').count();
    let text = std::str::from_utf8(body).map_err(|e| LoadError {
        column: None,
        excerpt: None,
        path: path.clone(),
        line: Some(line_of(e.valid_up_to())),
        message: "invalid UTF-8 (not repaired)".into(),
    })?;
    match parser::parse_array_elements(text) {
        Ok(elements) => {
            let (mut at, mut line) = (0, 1);
            let mut out = Vec::with_capacity(elements.len());
            for (range, json) in elements {
                line += body[at..range.start]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count();
                at = range.start;
                out.push((line, range, json));
            }
            Ok(out)
        }
        Err(e) => {
            // The line holding the offending byte, and where in it.
            let offset = e.offset.min(text.len());
            let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
            let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
            let line_text = &text[start..end];
            Err(LoadError {
                column: Some(text[start..offset].chars().count() + 1),
                excerpt: Some(Excerpt::of(line_text, offset - start)),
                path: path.clone(),
                line: Some(line_of(e.offset)),
                message: format!("invalid JSON array: {}", e.message),
            })
        }
    }
}
