//! Sources → records. Files, directories (recursive, sorted) and stdin; the format is
//! detected from the content: one JSON object, a JSON array of records, or NDJSON (one
//! record a line). Bad input never stops a load: each problem becomes a [`LoadError`]
//! naming the file and line, and everything else still loads. Files are only read.

pub mod digest;
mod ndjson;
pub mod parser;
pub mod pieces;
mod reread;
mod shape;
pub mod spill;
pub mod stream;
pub mod traces;

pub use reread::{line_digest, read_again, reread, reread_line};
pub(crate) use shape::{Shape, array_elements, shape};

use crate::model::json::Json;
use crate::model::text::sanitize;
use crate::model::{Record, Source, Span};
use ndjson::parse_ndjson;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a file's content was laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One record a line (`FilesystemEvidenceStore`).
    Ndjson,
    /// A single JSON object.
    Object,
    /// A JSON array of records.
    Array,
    /// Nothing but whitespace.
    Empty,
    /// Could not be read at all.
    Unreadable,
}

impl Format {
    /// The name used in output.
    pub fn name(self) -> &'static str {
        match self {
            Format::Ndjson => "ndjson",
            Format::Object => "json-object",
            Format::Array => "json-array",
            Format::Empty => "empty",
            Format::Unreadable => "unreadable",
        }
    }

    /// The format of a name [`Format::name`] gives.
    pub fn of_name(name: &str) -> Option<Format> {
        [
            Format::Ndjson,
            Format::Object,
            Format::Array,
            Format::Empty,
            Format::Unreadable,
        ]
        .into_iter()
        .find(|f| f.name() == name)
    }
}

/// A problem with part of an input; the rest of the input still loads.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadError {
    pub path: Arc<str>,
    /// 1-based line, when the problem has one.
    pub line: Option<usize>,
    /// 1-based column (in characters) on that line, when the problem has one.
    pub column: Option<usize>,
    /// The offending line around the column, escaped, with the column inside it.
    pub excerpt: Option<Excerpt>,
    pub message: String,
}

/// A window of an offending line (records are long single lines): its text, escaped so
/// nothing reaches a terminal raw, and where the problem is within it.
#[derive(Clone, Debug, PartialEq)]
pub struct Excerpt {
    pub text: String,
    /// Character offset of the problem within `text`.
    pub at: usize,
}

/// Characters shown on each side of a problem's column.
const EXCERPT_AROUND: usize = 40;

impl Excerpt {
    /// The window of `line` around byte `offset`.
    pub fn of(line: &str, offset: usize) -> Excerpt {
        let offset = offset.min(line.len());
        let mut cut = offset;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        let before: Vec<char> = line[..cut].chars().collect();
        let after: Vec<char> = line[cut..].chars().collect();
        let start = before.len().saturating_sub(EXCERPT_AROUND);
        let head: String = before[start..].iter().collect();
        let tail: String = after.iter().take(EXCERPT_AROUND).collect();
        let lead = if start > 0 { "…" } else { "" };
        let trail = if after.len() > EXCERPT_AROUND {
            "…"
        } else {
            ""
        };
        let head = format!("{lead}{}", sanitize(&head));
        Excerpt {
            at: head.chars().count(),
            text: format!("{head}{}{trail}", sanitize(&tail)),
        }
    }
}

/// The byte offset in `text` of a 1-based `line` and `column` as serde_json reports them
/// (columns counted in bytes), clamped to the text.
pub fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (start + column.saturating_sub(1)).min(text.len())
}

impl LoadError {
    /// An error at byte `offset` of a whole file's `text` (a keyring, a configuration):
    /// its line, its column in characters and the excerpt of that line.
    pub fn located(path: &str, text: &str, offset: usize, message: String) -> LoadError {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
        let line = text[start..end].trim_end_matches('\r');
        LoadError {
            path: path.into(),
            line: Some(text[..start].matches('\n').count() + 1),
            column: Some(text[start..offset].chars().count() + 1),
            excerpt: Some(Excerpt::of(line, offset - start)),
            message,
        }
    }

    /// An error about a whole file (it cannot be read, say), with no place inside it.
    pub fn whole(path: &str, message: String) -> LoadError {
        LoadError {
            path: path.into(),
            line: None,
            column: None,
            excerpt: None,
            message,
        }
    }

    /// The error with its place and, when it has one, the offending line around the
    /// column with a caret under it.
    pub fn render(&self) -> String {
        use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
        let place = match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}", sanitize(&self.path)),
            (Some(l), None) => format!("{}:{l}", sanitize(&self.path)),
            _ => sanitize(&self.path).into_owned(),
        };
        let title = format!("{place}: {}", sanitize(&self.message));
        let Some(x) = &self.excerpt else {
            return format!("error: {title}");
        };
        let byte = |chars: usize| {
            x.text
                .char_indices()
                .nth(chars)
                .map_or(x.text.len(), |(i, _)| i)
        };
        // The offending character; one cell past the end for a line cut short.
        let a = byte(x.at);
        let b = byte(x.at + 1).max(a + 1);
        let report = &[Level::ERROR.primary_title(title.as_str()).element(
            Snippet::source(x.text.as_str())
                .line_start(self.line.unwrap_or(1))
                .annotation(AnnotationKind::Primary.span(a..b)),
        )];
        Renderer::plain().render(report).clone()
    }
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.path, line, self.message),
            None => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

/// One input file and what was read from it.
#[derive(Clone, Debug)]
pub struct Input {
    pub path: Arc<str>,
    /// SHA-256 of the file's bytes (absent when it could not be read).
    pub sha256: Option<String>,
    /// Size of the file in bytes (absent when it could not be read).
    pub bytes: Option<u64>,
    pub format: Format,
    pub records: Vec<Record>,
    pub errors: Vec<LoadError>,
    /// The SHA-256 of as many leading bytes as were asked for when the file was opened
    /// (the evidence index's question: does the file still begin with the bytes an entry
    /// answers for?). `None` when not asked, or the file is shorter.
    pub asked: Option<digest::Prefix>,
    /// The file's BLAKE3, when the evidence index asked for it as the file was read:
    /// how it later tells the file unchanged without a slower SHA-256 of every byte.
    pub blake3: Option<[u8; 32]>,
}

impl Input {
    pub(crate) fn unreadable(path: Arc<str>, message: String) -> Input {
        let error = LoadError {
            column: None,
            excerpt: None,
            path: path.clone(),
            line: None,
            message,
        };
        Input {
            errors: vec![error],
            ..Input::empty(path, Format::Unreadable)
        }
    }

    /// An input of that path and format, with nothing read yet.
    pub(crate) fn empty(path: Arc<str>, format: Format) -> Input {
        Input {
            path,
            sha256: None,
            bytes: None,
            format,
            records: Vec::new(),
            errors: Vec::new(),
            asked: None,
            blake3: None,
        }
    }
}

/// Every loaded input, with its records addressable by one flat index (input order,
/// then file order) — the index `verify` results and `analysis` nodes use.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    pub inputs: Vec<Input>,
    /// Flat index of each input's first record.
    starts: Vec<usize>,
    /// Whether each input's records are in line order (as a file is read): then a
    /// record is found by its line in a binary search ([`Corpus::index_at`]).
    in_line_order: Vec<bool>,
}

impl Corpus {
    /// Indexes the records of `inputs`.
    pub fn new(inputs: Vec<Input>) -> Corpus {
        let mut starts = Vec::with_capacity(inputs.len());
        let mut n = 0;
        for i in &inputs {
            starts.push(n);
            n += i.records.len();
        }
        let in_line_order = (inputs.iter())
            .map(|i| i.records.is_sorted_by_key(|r| r.source.line))
            .collect();
        Corpus {
            inputs,
            starts,
            in_line_order,
        }
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.starts.last().copied().unwrap_or(0) + self.inputs.last().map_or(0, |i| i.records.len())
    }

    /// True when no record loaded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The record at a flat index.
    pub fn record(&self, index: usize) -> &Record {
        let input = self.input_of(index);
        &self.inputs[input].records[index - self.starts[input]]
    }

    /// The record at a flat index, to change.
    pub fn record_mut(&mut self, index: usize) -> &mut Record {
        let input = self.input_of(index);
        &mut self.inputs[input].records[index - self.starts[input]]
    }

    /// The position in `inputs` of the input holding a record.
    pub fn input_of(&self, index: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= index)
            .saturating_sub(1)
    }

    /// The flat index of the first record at `path` and `line` (a finding's location).
    pub fn index_at(&self, path: &str, line: usize) -> Option<usize> {
        let inputs = self
            .inputs
            .iter()
            .zip(&self.starts)
            .zip(&self.in_line_order);
        inputs.filter(|((i, _), _)| &*i.path == path).find_map(
            |((input, start), &in_line_order)| {
                let records = &input.records;
                let at = if in_line_order {
                    let at = records.partition_point(|r| r.source.line < line);
                    records
                        .get(at)
                        .filter(|r| r.source.line == line)
                        .map(|_| at)
                } else {
                    records.iter().position(|r| r.source.line == line)
                };
                Some(start + at?)
            },
        )
    }

    /// Every record in flat-index order.
    pub fn records(&self) -> impl Iterator<Item = &Record> {
        self.inputs.iter().flat_map(|i| i.records.iter())
    }

    /// The records at these flat indexes (ascending) in their inputs, with all their facts
    /// ([`Record::with_facts_again`]): a part the analysis takes alone (`analysis::groups`).
    pub fn subset(&self, records: &[u32]) -> Corpus {
        use rayon::prelude::*;
        let mut inputs: Vec<Input> = self
            .inputs
            .iter()
            .map(|i| Input::empty(i.path.clone(), i.format))
            .collect();
        let copies: Vec<Record> = records
            .par_iter()
            .map(|&r| self.record(r as usize).with_facts_again())
            .collect();
        for (&r, copy) in records.iter().zip(copies) {
            inputs[self.input_of(r as usize)].records.push(copy);
        }
        Corpus::new(inputs)
    }

    /// Every load error.
    pub fn errors(&self) -> impl Iterator<Item = &LoadError> {
        self.inputs.iter().flat_map(|i| i.errors.iter())
    }
}

/// File names picked up when walking a directory.
fn has_evidence_extension(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    [".json", ".jsonl", ".ndjson"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

/// Loads every path: files as given, directories recursively (evidence files only, in
/// sorted path order), `-` for stdin. Never fails as a whole. NDJSON is read a chunk at a
/// time ([`stream::stream_paths`]), so a store's bytes and its records are not in memory
/// together.
pub fn load_paths(paths: &[String]) -> Vec<Input> {
    stream::stream_paths(paths, stream::CHUNK, |_| {})
}

/// [`load_paths`], taking of each file the digest of as many leading bytes as `asked`
/// says ([`Input::asked`]).
pub fn load_paths_asking(
    paths: &[String],
    asked: &mut dyn FnMut(&str) -> Option<u64>,
) -> Vec<Input> {
    stream::stream_paths_asking(paths, stream::CHUNK, asked, |_| {})
}

/// One input `paths` name, in load order.
pub(crate) enum Origin {
    Stdin,
    File(PathBuf),
    /// A directory that could not be walked, already an input with its error.
    Problem(Input),
}

/// What `paths` name, in load order: files as given, directories walked (evidence files
/// in sorted path order, each walking problem before them), `-` for stdin.
pub(crate) fn origins(paths: &[String]) -> Vec<Origin> {
    let mut out = Vec::new();
    for p in paths {
        if p == "-" {
            out.push(Origin::Stdin);
            continue;
        }
        let path = PathBuf::from(p);
        if path.is_dir() {
            let mut files = Vec::new();
            let mut problems = Vec::new();
            walk(&path, &mut Vec::new(), &mut files, &mut problems);
            files.sort();
            out.extend(problems.into_iter().map(Origin::Problem));
            out.extend(files.into_iter().map(Origin::File));
        } else {
            out.push(Origin::File(path));
        }
    }
    out
}

/// The first path of `paths` that cannot be opened at all (missing, no permission), with
/// the message `check` reports for it — so the explorer refuses it up front instead of
/// opening on nothing. Stdin is never checked here.
pub fn unopenable(paths: &[String]) -> Option<LoadError> {
    paths.iter().filter(|p| *p != "-").find_map(|p| {
        let path = Path::new(p);
        let opened = if path.is_dir() {
            std::fs::read_dir(path)
                .map(|_| ())
                .map_err(|e| format!("cannot read directory: {e}"))
        } else {
            std::fs::File::open(path)
                .map(|_| ())
                .map_err(|e| format!("cannot read file: {e}"))
        };
        opened.err().map(|message| LoadError {
            column: None,
            excerpt: None,
            path: p.as_str().into(),
            line: None,
            message,
        })
    })
}

/// The files `paths` name, in load order (directories walked as [`load_paths`] does;
/// stdin and unreadable directories are left out).
pub fn evidence_files(paths: &[String]) -> Vec<PathBuf> {
    origins(paths)
        .into_iter()
        .filter_map(|o| match o {
            Origin::File(path) => Some(path),
            _ => None,
        })
        .collect()
}

/// The input names of the files `paths` name, in load order, as the loader names them
/// (directories walked); `None` when they name stdin or a directory that cannot be walked
/// (inputs that are not files).
pub fn input_names(paths: &[String]) -> Option<Vec<String>> {
    origins(paths)
        .into_iter()
        .map(|o| match o {
            Origin::File(path) => Some(path.display().to_string()),
            Origin::Stdin | Origin::Problem(_) => None,
        })
        .collect()
}

/// True when `out` is one of the evidence files `paths` name (aeplens never writes one).
pub fn is_evidence_file(paths: &[String], out: &Path) -> bool {
    let Ok(out) = out.canonicalize() else {
        return false;
    };
    evidence_files(paths)
        .iter()
        .any(|p| p.canonicalize().is_ok_and(|p| p == out))
}

/// True when `out` would sit inside a directory `paths` name: written there, it would be
/// read as evidence the next time.
pub fn in_evidence_dir(paths: &[String], out: &Path) -> bool {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(parent) = parent.canonicalize() else {
        return false;
    };
    paths
        .iter()
        .filter(|p| *p != "-" && Path::new(p).is_dir())
        .filter_map(|p| Path::new(p).canonicalize().ok())
        .any(|dir| parent.starts_with(dir))
}

/// A quick first look at large evidence: the records in the first `budget` bytes (whole
/// NDJSON lines only; files that are not NDJSON are taken whole or not at all). Returns
/// None when everything fits in the budget (the full load is as fast).
pub fn load_prefix(paths: &[String], budget: u64) -> Option<Vec<Input>> {
    if paths.iter().any(|p| p == "-") {
        return None;
    }
    let files = evidence_files(paths);
    let total: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    if total <= budget {
        return None;
    }
    let mut inputs = Vec::new();
    let mut left = budget;
    for f in files {
        if left == 0 {
            break;
        }
        let size = std::fs::metadata(&f).map_or(0, |m| m.len());
        if size <= left {
            inputs.push(load_file(&f));
            left -= size;
            continue;
        }
        let mut head = vec![0u8; left as usize];
        let read = std::fs::File::open(&f)
            .and_then(|mut file| std::io::Read::read_exact(&mut file, &mut head));
        if read.is_ok()
            && let Some(cut) = head.iter().rposition(|b| *b == b'\n')
        {
            let input = parse_input(f.display().to_string().into(), &head[..=cut]);
            if input.format == Format::Ndjson {
                inputs.push(input);
            }
        }
        break;
    }
    Some(inputs)
}

fn walk(
    dir: &Path,
    ancestors: &mut Vec<PathBuf>,
    files: &mut Vec<PathBuf>,
    problems: &mut Vec<Input>,
) {
    let real = match std::fs::canonicalize(dir) {
        Ok(r) => r,
        Err(e) => {
            problems.push(Input::unreadable(
                dir.display().to_string().into(),
                format!("cannot open directory: {e}"),
            ));
            return;
        }
    };
    if ancestors.contains(&real) {
        problems.push(Input::unreadable(
            dir.display().to_string().into(),
            "directory symlink loop (already being walked); skipped".into(),
        ));
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            problems.push(Input::unreadable(
                dir.display().to_string().into(),
                format!("cannot read directory: {e}"),
            ));
            return;
        }
    };
    ancestors.push(real);
    let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    children.sort();
    for child in children {
        if child.is_dir() {
            walk(&child, ancestors, files, problems);
        } else if has_evidence_extension(&child) {
            files.push(child);
        }
    }
    ancestors.pop();
}

/// Reads one file (read-only) and parses it.
pub fn load_file(path: &Path) -> Input {
    let name: Arc<str> = path.display().to_string().into();
    match std::fs::read(path) {
        Ok(bytes) => parse_input(name, &bytes),
        Err(e) => Input::unreadable(name, format!("cannot read file: {e}")),
    }
}

/// Parses the bytes of one input, detecting its format from the content.
pub fn parse_input(path: Arc<str>, bytes: &[u8]) -> Input {
    parse_input_asked(path, bytes, (None, false))
}

/// [`parse_input`], also taking the digest of the first `asked` bytes ([`Input::asked`])
/// and, with `blake3`, the file's BLAKE3 ([`Input::blake3`]).
pub(crate) fn parse_input_asked(
    path: Arc<str>,
    bytes: &[u8],
    (asked, blake3): (Option<u64>, bool),
) -> Input {
    // The file's digest on one core while the records parse on the others.
    let (digest, mut input) = rayon::join(
        || {
            let mut digest = digest::FileDigest::new(asked, blake3);
            digest.update(bytes);
            digest
        },
        || parse_body(path, bytes),
    );
    let digests = digest.finish();
    input.sha256 = Some(crate::canon::hex(&digests.sha256));
    input.asked = digests.asked;
    input.blake3 = digests.blake3;
    input
}

/// The records of a file's bytes (its digest is [`parse_input`]'s).
fn parse_body(path: Arc<str>, bytes: &[u8]) -> Input {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut input = Input {
        bytes: Some(bytes.len() as u64),
        ..Input::empty(path, Format::Ndjson)
    };
    let path = input.path.clone();
    match shape(&path, body) {
        Shape::Empty => {
            input.format = Format::Empty;
            input
                .errors
                .push(LoadError::whole(&path, "empty file: no records".into()));
        }
        Shape::Array => {
            input.format = Format::Array;
            match array_elements(&path, body) {
                Ok(elements) => {
                    for (index, (line, _, json)) in elements.into_iter().enumerate() {
                        push_record(&mut input, json, line, index, None);
                    }
                }
                Err(e) => input.errors.push(e),
            }
        }
        Shape::Object { line, json } => {
            input.format = Format::Object;
            push_record(&mut input, json, line, 0, None);
        }
        Shape::Ndjson => parse_ndjson(&mut input, body, (bytes.len() - body.len()) as u64),
    }
    input
}

fn push_record(input: &mut Input, json: Json, line: usize, index: usize, span: Option<Span>) {
    if json.as_object().is_none() {
        input.errors.push(LoadError {
            column: None,
            excerpt: None,
            path: input.path.clone(),
            line: Some(line),
            message: format!(
                "expected a JSON object (a record), found {}",
                json.type_name()
            ),
        });
        return;
    }
    let source = Source {
        path: input.path.clone(),
        line,
        index,
    };
    input.records.push(Record::new(source, span, json));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &[u8]) -> Input {
        parse_input("t".into(), text)
    }

    #[test]
    fn detects_formats() {
        assert_eq!(load(b"{\"a\":1}").format, Format::Object);
        assert_eq!(load(b"{\n  \"a\": 1\n}\n").format, Format::Object);
        assert_eq!(load(b"{\"a\":1}\n").format, Format::Ndjson);
        assert_eq!(load(b"[{\"a\":1},{\"b\":2}]").records.len(), 2);
        let nd = load(b"{\"a\":1}\n{\"b\":2}\n");
        assert_eq!(nd.format, Format::Ndjson);
        assert_eq!(nd.records[1].source.line, 2);
        assert_eq!(load(b"  \n").format, Format::Empty);
    }

    #[test]
    fn bad_lines_are_reported_and_the_rest_loads() {
        let text =
            b"\xEF\xBB\xBF{\"a\":1}\r\nnot json\r\n{\"b\":\xff}\r\n[1]\r\n\r\n{\"c\":3}\r\n{\"d\":";
        let input = load(text);
        assert_eq!(input.records.len(), 2);
        assert_eq!(input.records[1].source.line, 6);
        assert_eq!(input.records[1].source.index, 1);
        let lines: Vec<_> = input.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![Some(2), Some(3), Some(4), Some(7)]);
        assert!(input.errors[1].message.contains("UTF-8"));
        assert!(input.errors[2].message.contains("found array"));
        assert!(input.errors[3].message.contains("truncated last line"));
    }

    /// A long store, streamed in many chunks: every line keeps its number, blank lines
    /// and CRLF included, and every broken line is reported on its own.
    #[test]
    fn a_long_store_keeps_every_line_number() {
        use std::fmt::Write as _;
        let mut text = String::new();
        let (mut records, mut broken) = (Vec::new(), Vec::new());
        for n in 1..=30_000 {
            match n % 997 {
                0 => {
                    text.push_str("{\"broken\": \n");
                    broken.push(n);
                }
                1 => text.push_str("   \r\n"),
                _ => {
                    let _ = write!(
                        text,
                        "{{\"run_id\":\"r\",\"n\":{n},\"pad\":\"{n:040}\"}}\r\n"
                    );
                    records.push(n);
                }
            }
        }
        let dir = std::env::temp_dir().join(format!("aeplens-long-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("long.ndjson");
        std::fs::write(&file, &text).unwrap();
        let paths = [file.display().to_string()];
        for input in [
            load(text.as_bytes()),
            stream::stream_paths(&paths, 100_000, |_| {}).remove(0),
        ] {
            let lines: Vec<usize> = input.records.iter().map(|r| r.source.line).collect();
            assert_eq!(lines, records);
            let indexes: Vec<usize> = input.records.iter().map(|r| r.source.index).collect();
            assert_eq!(indexes, (0..records.len()).collect::<Vec<_>>());
            let errors: Vec<usize> = input.errors.iter().filter_map(|e| e.line).collect();
            assert_eq!(errors, broken);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn array_elements_get_their_line() {
        let input = load(b"[\n{\"a\":1},\n\n{\"b\":2},\n3\n]");
        assert_eq!(input.records.len(), 2);
        assert_eq!(input.records[1].source.line, 4);
        assert_eq!(input.errors[0].line, Some(5));
    }

    #[test]
    fn a_quick_look_takes_whole_lines_within_the_budget() {
        let dir = std::env::temp_dir().join(format!("aeplens-prefix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let line = "{\"schema_version\":\"aep/v0.3\",\"run_id\":\"r\",\"created_at_ms\":1}\n";
        std::fs::write(dir.join("a.ndjson"), line.repeat(100)).unwrap();
        let paths = vec![dir.display().to_string()];
        assert!(
            load_prefix(&paths, 1 << 20).is_none(),
            "small evidence loads whole"
        );
        let budget = (line.len() * 10 + 5) as u64;
        let head = load_prefix(&paths, budget).unwrap();
        assert_eq!(head.len(), 1);
        assert_eq!(head[0].records.len(), 10);
        assert!(
            head[0].errors.is_empty(),
            "cut at a line end: {:?}",
            head[0].errors
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
