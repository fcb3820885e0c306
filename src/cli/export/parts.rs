//! The tables of `docs/tables.md` made in parts, for an engine that schedules the work
//! itself (Spark's `mapInArrow` and `applyInArrow`: `python -m aeplens.spark`,
//! `docs/spark.md`). Each step takes and gives Arrow record batches:
//!
//! 1. [`split`]: files (`path`, `content`) → their pieces (`path`, `line`, `index`, `raw`:
//!    the bytes of one record each, cut as `parse_input` reads the file) and one row per
//!    file with what is said of the file as a whole; or [`split_range`]: a byte range of a
//!    large NDJSON file → the pieces whose lines start in it.
//! 2. [`ties`]: pieces → each with what ties its record to other records
//!    ([`crate::analysis::groups::record_ties`]), from its bytes alone, or its load error;
//!    or [`verify`]: pieces → the `records` columns of each record verified alone, and the
//!    same ties.
//! 3. [`groups`]: the ties → one group per set of records no cross-record pass reads
//!    across (the engine's join finds the parents named across runs).
//! 4. [`analyse`]: all pieces of one group → its `records`, `actions`, `findings`,
//!    `edges` and `leases` rows, by the very code `export --format parquet` runs.
//!
//! Tables made so equal the export's, row for row (`tests/engine/parts.rs`; the Spark job,
//! `tests/engine/spark.rs`, in DuckDB): no cross-record pass reads across groups, as
//! `analysis::groups` proves for the CLI — but for what a file says of its own records,
//! which each piece carries: its file's format and the record before it in the file
//! (`chain_link`).

use super::columns::{Column, Kind, Table};
use super::tables::{RECORDS, Scope, record_rows, tables};
use crate::analysis::groups::{Components, record_ties};
use crate::canon::Sha256Digest;
use crate::load::{Corpus, Format, Input, pieces};
use crate::open::Setting;
use crate::verify::chain::link_state;
use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The trust's fingerprints (`Keyring::fingerprints`), one string: every row a step
/// gives carries it.
pub fn keyring(setting: &Setting) -> String {
    setting.trust.fingerprints().join(",")
}

/// The lease files' SHA-256s, one string: every row a step gives carries it.
pub fn lease_files(setting: &Setting) -> String {
    setting.leases.digests.join(",")
}

/// Adds the two fingerprint columns to every row of `t`.
fn stamp(setting: &Setting, t: &mut Table) {
    let (keyring, leases) = (keyring(setting), lease_files(setting));
    let mut stamped = Table::new(
        t.name,
        &[("keyring", Kind::Str), ("lease_files", Kind::Str)],
    );
    for _ in 0..t.rows() {
        stamped.s("keyring", Some(&keyring));
        stamped.s("lease_files", Some(&leases));
    }
    t.columns.extend(stamped.columns);
}

/// A column of a batch, by name, or the error naming what is missing.
fn column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a dyn Array, String> {
    batch
        .column_by_name(name)
        .map(AsRef::as_ref)
        .ok_or_else(|| format!("the batch has no column {name:?}"))
}

/// The strings of a string column (any of Arrow's string layouts); null as `None`.
fn strings(a: &dyn Array) -> Result<Vec<Option<&str>>, String> {
    Ok(match a.data_type() {
        DataType::Utf8 => a.as_string::<i32>().iter().collect(),
        DataType::LargeUtf8 => a.as_string::<i64>().iter().collect(),
        DataType::Utf8View => a.as_string_view().iter().collect(),
        other => return Err(format!("expected a string column, found {other}")),
    })
}

/// The bytes of a binary column (any of Arrow's binary layouts); null as `None`.
fn binaries(a: &dyn Array) -> Result<Vec<Option<&[u8]>>, String> {
    Ok(match a.data_type() {
        DataType::Binary => a.as_binary::<i32>().iter().collect(),
        DataType::LargeBinary => a.as_binary::<i64>().iter().collect(),
        DataType::BinaryView => a.as_binary_view().iter().collect(),
        other => return Err(format!("expected a binary column, found {other}")),
    })
}

/// The integers of an integer column; null as `None`.
fn integers(a: &dyn Array) -> Result<Vec<Option<i64>>, String> {
    use arrow_array::types::{Int32Type, Int64Type};
    Ok(match a.data_type() {
        DataType::Int64 => a.as_primitive::<Int64Type>().iter().collect(),
        DataType::Int32 => (a.as_primitive::<Int32Type>().iter())
            .map(|v| v.map(i64::from))
            .collect(),
        other => return Err(format!("expected an integer column, found {other}")),
    })
}

/// The columns of [`split`] and [`split_range`]: a piece's, a file's, a range's.
fn pieces_table() -> Table {
    Table::new(
        "pieces",
        &[
            ("path", Kind::Str),
            ("line", Kind::Int),
            ("index", Kind::Int),
            ("raw", Kind::Bytes),
            ("offset", Kind::Int),
            ("sha256", Kind::Str),
            ("format", Kind::Str),
            ("bytes", Kind::Int),
            ("file_errors", Kind::Int),
            ("newlines", Kind::Int),
        ],
    )
}

/// Step 1: whole files (`path` string, `content` binary) → one row
/// per piece (`path`, `line`, `index` — null on an NDJSON line —, `raw` and the `offset`
/// of its first byte in the file) and one row
/// per file (`raw` null: its `sha256`, `format`, `bytes` and `file_errors`, the errors of
/// the whole file). (`newlines` is [`split_range`]'s.)
pub fn split(files: &RecordBatch) -> Result<RecordBatch, String> {
    let paths = strings(column(files, "path")?)?;
    let contents = binaries(column(files, "content")?)?;
    let mut t = pieces_table();
    for (path, content) in paths.into_iter().zip(contents) {
        let path = path.ok_or("a file without a path")?;
        let Some(content) = content else {
            t.s("path", Some(path));
            t.s("format", Some(Format::Unreadable.name()));
            t.i("file_errors", Some(1));
            t.end_row();
            continue;
        };
        let cut = pieces::split(path, content);
        t.s("path", Some(path));
        t.s("sha256", cut.input.sha256.as_deref());
        t.s("format", Some(cut.input.format.name()));
        t.i("bytes", Some(content.len() as i64));
        t.i("file_errors", Some(cut.input.errors.len() as i64));
        t.end_row();
        for p in cut.pieces {
            t.s("path", Some(path));
            t.i("line", Some(p.line as i64));
            t.i("index", p.index.map(|i| i as i64));
            t.i("offset", Some(p.bytes.start as i64));
            t.bytes("raw", Some(&content[p.bytes]));
            t.end_row();
        }
    }
    Ok(t.batch())
}

/// Step 1 for a file too large for one task: the byte range `start..end` of the NDJSON
/// file `path` ([`pieces::split_range`]: `data` from byte `start - 1` through the end of
/// the line holding byte `end - 1`) → one row per piece starting in it, its `line`
/// counted from the range's start (its `offset` in the file), and the range's own row
/// (`raw` null, `newlines`: the newlines in it). A piece's line in the file is its `line` plus the `newlines` of the
/// file's ranges before it. The file's own row (SHA-256, size) is the caller's: it reads
/// the whole file.
pub fn split_range(path: &str, start: u64, end: u64, data: &[u8]) -> Result<RecordBatch, String> {
    let at = |n: u64| usize::try_from(n).map_err(|_| format!("{path}: byte {n}"));
    let cut =
        pieces::split_range(at(start)?, at(end)?, data).map_err(|e| format!("{path}: {e}"))?;
    let from = at(start)?.saturating_sub(1); // the file's byte at data[0]
    let mut t = pieces_table();
    for p in cut.pieces {
        t.s("path", Some(path));
        t.i("line", Some(p.line as i64));
        t.i("offset", Some((from + p.bytes.start) as i64));
        t.bytes("raw", Some(&data[p.bytes]));
        t.end_row();
    }
    t.s("path", Some(path));
    t.i("newlines", Some(cut.newlines as i64));
    t.end_row();
    Ok(t.batch())
}

/// Step 2 of the job: pieces (`path`, `line`, `raw`, and `index` when known; rows
/// without `raw` pass through) → the same rows, each with what ties its record to
/// others, from its bytes alone (parsed and hashed, not verified: [`analyse`] verifies
/// each record once): `canonical_sha256`, `run_id`, `ties`, `action_ids` and
/// `parent_ids` ([`crate::analysis::groups::RecordTies`]), or the `load_error` of a piece
/// that is no record.
pub fn ties(pieces: &RecordBatch) -> Result<RecordBatch, String> {
    let paths = strings(column(pieces, "path")?)?;
    let lines = integers(column(pieces, "line")?)?;
    let raws = binaries(column(pieces, "raw")?)?;
    let indexes = match pieces.column_by_name("index") {
        Some(c) => integers(c.as_ref())?,
        None => vec![None; pieces.num_rows()],
    };
    let mut t = Table::new(
        "ties",
        &[
            ("canonical_sha256", Kind::Str),
            ("run_id", Kind::Str),
            ("load_error", Kind::Str),
            ("ties", Kind::IntList),
            ("action_ids", Kind::StrList),
            ("parent_ids", Kind::StrList),
        ],
    );
    for i in 0..pieces.num_rows() {
        if let (Some(path), Some(line), Some(raw)) = (paths[i], lines[i], raws[i]) {
            let line = usize::try_from(line).map_err(|_| format!("{path}: line {line}"))?;
            let index = indexes[i]
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(0);
            match pieces::record(path.into(), line, index, raw) {
                Ok(record) => {
                    let hash = Sha256Digest::of(&crate::verify::chain_bytes(&record));
                    let ties = record_ties(&record, hash);
                    t.s("canonical_sha256", Some(&hash.to_string()));
                    t.s("run_id", record.run_id());
                    t.ints("ties", ties.ties.iter().map(|&t| t as i64).collect());
                    let text = |ids: &[&str]| ids.iter().map(ToString::to_string).collect();
                    t.strs("action_ids", text(&ties.action_ids));
                    t.strs("parent_ids", text(&ties.parent_ids));
                }
                Err(e) => t.s("load_error", Some(&e.to_string())),
            }
        } else {
            t.s("load_error", None);
        }
        t.end_row();
    }
    let extra = t.batch();
    let mut fields: Vec<_> = pieces.schema().fields().iter().cloned().collect();
    fields.extend(extra.schema().fields().iter().cloned());
    let mut columns = pieces.columns().to_vec();
    columns.extend(extra.columns().iter().cloned());
    RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns)
        .map_err(|e| e.to_string())
}

/// One piece: where it is and its bytes.
struct Row<'a> {
    path: &'a str,
    /// Position of its file among the inputs (the order `export` reads them in).
    input: i64,
    /// Its file's format, when known (`split`'s `format`).
    format: Option<Format>,
    line: usize,
    index: Option<usize>,
    raw: &'a [u8],
    /// What the batch knows of its record from an earlier reading.
    known: Known,
}

/// What an engine knew of a record when it read its bytes before: they are read again
/// for its group.
#[derive(Clone, Copy)]
struct Known {
    /// The canonical hash of the record before it in its file (`file_previous`; `None`
    /// for the file's first record, or when the batch does not say).
    previous: Option<Sha256Digest>,
    /// Its own canonical hash then (`canonical_sha256`): read again, it must still have it.
    read_as: Option<Sha256Digest>,
}

/// The pieces of a batch (`path`, `line`, `raw`; `index`, `input`, `format`,
/// `file_previous` and `canonical_sha256` when it has them).
fn rows(batch: &RecordBatch) -> Result<Vec<Row<'_>>, String> {
    let paths = strings(column(batch, "path")?)?;
    let lines = integers(column(batch, "line")?)?;
    let raws = binaries(column(batch, "raw")?)?;
    let n = batch.num_rows();
    let optional = |name: &str| match batch.column_by_name(name) {
        Some(c) => integers(c.as_ref()),
        None => Ok(vec![None; n]),
    };
    let (indexes, inputs) = (optional("index")?, optional("input")?);
    let formats = match batch.column_by_name("format") {
        Some(c) => strings(c.as_ref())?,
        None => vec![None; n],
    };
    let hashes = |name: &str| match batch.column_by_name(name) {
        Some(c) => strings(c.as_ref()),
        None => Ok(vec![None; n]),
    };
    let (previous, read_as) = (hashes("file_previous")?, hashes("canonical_sha256")?);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let (Some(path), Some(line), Some(raw)) = (paths[i], lines[i], raws[i]) else {
            if read_as[i].is_some() {
                let (path, line) = (paths[i].unwrap_or("?"), lines[i].unwrap_or(0));
                return Err(changed(&format!("{path}:{line}")));
            }
            continue; // a file's own row (`split`), or nothing to verify
        };
        let hash = |name: &str, hex: Option<&str>| match hex {
            None => Ok(None),
            Some(h) => Sha256Digest::from_hex(h)
                .map(Some)
                .ok_or_else(|| format!("{path}:{line}: {name} {h:?}")),
        };
        let known = Known {
            previous: hash("file_previous", previous[i])?,
            read_as: hash("canonical_sha256", read_as[i])?,
        };
        out.push(Row {
            path,
            input: inputs[i].unwrap_or(0),
            format: formats[i].and_then(Format::of_name),
            line: usize::try_from(line).map_err(|_| format!("{path}: line {line}"))?,
            index: indexes[i].and_then(|i| usize::try_from(i).ok()),
            raw,
            known,
        });
    }
    Ok(out)
}

/// The pieces as a corpus: one input per file (in `input`, then path order), each
/// file's records in line order; the load errors of pieces that hold no record; and what
/// was known of each record, in the corpus's order.
type Pieces = (Corpus, Vec<crate::load::LoadError>, Vec<Known>);

/// [`Pieces`] of `rows`; an error when a piece read before as a record
/// ([`Known::read_as`]) holds none now.
fn corpus(mut rows: Vec<Row<'_>>) -> Result<Pieces, String> {
    rows.sort_by(|a, b| (a.input, a.path, a.line).cmp(&(b.input, b.path, b.line)));
    let mut inputs: Vec<Input> = Vec::new();
    let (mut errors, mut known) = (Vec::new(), Vec::new());
    for row in rows {
        if inputs.last().is_none_or(|i| &*i.path != row.path) {
            let format = row.format.unwrap_or(Format::Ndjson);
            inputs.push(Input::empty(row.path.into(), format));
        }
        let input = inputs.last_mut().expect("pushed above");
        let index = row.index.unwrap_or(input.records.len());
        match pieces::record(input.path.clone(), row.line, index, row.raw) {
            Ok(record) => {
                input.records.push(record);
                known.push(row.known);
            }
            Err(e) if row.known.read_as.is_some() => return Err(changed(&e.render())),
            Err(e) => errors.push(e),
        }
    }
    Ok((Corpus::new(inputs), errors, known))
}

/// The error of a record that is not what an engine read before in its place.
fn changed(what: &str) -> String {
    format!("{what}: not the record read there before: its file changed while it was read")
}

/// Step 2: pieces (`path`, `line`, `raw`, and `index` when known) → one row per record:
/// the `records` columns of `docs/tables.md` for the record verified alone (`chain`
/// `not-evaluated`, `chain_link` null, `semantic` `fail` or `not-evaluated`: they need
/// the other records, [`analyse`]), `record_index` when the piece knows it; then
/// `load_error` (a row per piece that is no record), `ties`, `action_ids` and
/// `parent_ids` ([`crate::analysis::groups::RecordTies`]), `keyring` and `lease_files`.
pub fn verify(pieces: &RecordBatch, setting: &Setting) -> Result<RecordBatch, String> {
    let rows = rows(pieces)?;
    let known: std::collections::HashSet<(&str, usize)> = (rows.iter())
        .filter(|r| r.index.is_some())
        .map(|r| (r.path, r.line))
        .collect();
    let (corpus, errors, _) = corpus(rows)?;
    let report = crate::open::verify_alone(setting, &corpus);
    let mut t = Table::new("records", RECORDS);
    record_rows(
        corpus.records().zip(&report.records),
        Scope::EachAlone,
        &mut t,
    );
    if let Column::Int(index) = t.col("record_index") {
        for (i, value) in index.iter_mut().enumerate() {
            let source = &corpus.record(i).source;
            if !known.contains(&(&*source.path, source.line)) {
                *value = None;
            }
        }
    }
    let mut extra = Table::new(
        "records",
        &[
            ("load_error", Kind::Str),
            ("ties", Kind::IntList),
            ("action_ids", Kind::StrList),
            ("parent_ids", Kind::StrList),
        ],
    );
    for (i, r) in report.records.iter().enumerate() {
        let ties = record_ties(corpus.record(i), r.canonical_sha256);
        extra.s("load_error", None);
        extra.ints("ties", ties.ties.iter().map(|&t| t as i64).collect());
        extra.strs(
            "action_ids",
            ties.action_ids.iter().map(ToString::to_string).collect(),
        );
        extra.strs(
            "parent_ids",
            ties.parent_ids.iter().map(ToString::to_string).collect(),
        );
    }
    t.columns.extend(extra.columns);
    for e in errors {
        t.s("path", Some(&e.path));
        t.i("line", e.line.map(|l| l as i64));
        t.s("load_error", Some(&e.to_string()));
        t.end_row();
    }
    stamp(setting, &mut t);
    Ok(t.batch())
}

/// Step 3: ties (`record_key` and `tie`, 64-bit integers, in any number of batches: one
/// row per tie of a record) → one row per record (`record_key`, `group`: the smallest
/// `record_key` of its group). Records sharing a tie are in one group, transitively.
pub fn groups(ties: &[RecordBatch]) -> Result<RecordBatch, String> {
    use rustc_hash::FxHashMap;
    // Dense numbers for records, then ties, in one union–find.
    let mut records: FxHashMap<i64, u32> = FxHashMap::default();
    let mut keys: Vec<i64> = Vec::new();
    let mut edges: Vec<(u32, i64)> = Vec::new();
    for batch in ties {
        let record_keys = integers(column(batch, "record_key")?)?;
        let tie = integers(column(batch, "tie")?)?;
        for (r, t) in record_keys.into_iter().zip(tie) {
            let Some(r) = r else { continue };
            let n = *records.entry(r).or_insert_with(|| {
                keys.push(r);
                keys.len() as u32 - 1
            });
            if let Some(t) = t {
                edges.push((n, t));
            }
        }
    }
    let mut components = Components::new(keys.len());
    let mut first: FxHashMap<i64, u32> = FxHashMap::default();
    for (n, tie) in edges {
        let at = *first.entry(tie).or_insert(n);
        components.join(n, at);
    }
    let mut least: FxHashMap<u32, i64> = FxHashMap::default();
    for (n, &key) in keys.iter().enumerate() {
        let root = components.root(n as u32);
        let l = least.entry(root).or_insert(key);
        *l = (*l).min(key);
    }
    let mut t = Table::new("groups", &[("record_key", Kind::Int), ("group", Kind::Int)]);
    for (n, &key) in keys.iter().enumerate() {
        t.i("record_key", Some(key));
        t.i("group", Some(least[&components.root(n as u32)]));
    }
    Ok(t.batch())
}

/// The tables [`analyse`] gives, in order.
pub const GROUP_TABLES: [&str; 5] = ["records", "actions", "findings", "edges", "leases"];

/// Step 4: every piece of one group (`path`, `input` — its file's position among the
/// inputs —, `format`, `line`, `index`, `raw`, `file_previous` — the canonical hash of
/// the record before it in its file, null for the first; without the column the group
/// holds whole files), `canonical_sha256` when an engine read the pieces before (each
/// must hold the record it held then: an error names the first that does not) → its
/// [`GROUP_TABLES`], each row with `keyring` and `lease_files`: the rows `export --format
/// parquet` writes for these records.
pub fn analyse(pieces: &RecordBatch, setting: &Setting) -> Result<Vec<RecordBatch>, String> {
    let (corpus, _, known) = corpus(rows(pieces)?)?;
    let mut ev = crate::open::open_corpus(setting, corpus);
    let linked = pieces.column_by_name("file_previous").is_some();
    for (i, known) in known.into_iter().enumerate() {
        let result = &mut ev.report.records[i];
        if known.read_as.is_some_and(|h| h != result.canonical_sha256) {
            return Err(changed(&ev.corpus.record(i).source.to_string()));
        }
        // The link to the record before it in its file, which the group may not hold.
        if linked {
            result.chain.link = Some(link_state(ev.corpus.record(i).link(), known.previous));
        }
    }
    let mut out = Vec::new();
    for mut t in tables(ev.as_ref()) {
        if GROUP_TABLES.contains(&t.name) {
            stamp(setting, &mut t);
            out.push(t.batch());
        }
    }
    Ok(out)
}

/// The manifest of tables made in parts — `inputs` (`path`, `sha256`, `bytes`, one row
/// per file) and each table's rows and files (as the engine wrote them) — with the
/// evidence set's key (its `set=` partition is the key's first 16 hex digits).
pub fn manifest(
    inputs: &RecordBatch,
    setting: &Setting,
    tables: BTreeMap<String, (u64, Vec<String>)>,
) -> Result<(String, String), String> {
    let paths = strings(column(inputs, "path")?)?;
    let sums = strings(column(inputs, "sha256")?)?;
    let sizes = integers(column(inputs, "bytes")?)?;
    let mut files = Vec::new();
    for i in 0..inputs.num_rows() {
        let Some(path) = paths[i] else { continue };
        files.push(Input {
            sha256: sums[i].map(str::to_string),
            bytes: sizes[i].map(|b| b as u64),
            ..Input::empty(Arc::from(path), Format::Ndjson)
        });
    }
    let set = crate::review::file::EvidenceSet::of(&Corpus::new(files));
    let parts = (tables.into_iter())
        .map(|(name, (rows, files))| (name, serde_json::json!({"rows": rows, "files": files})))
        .collect();
    let manifest = super::tables::manifest(&set, &setting.trust, &parts);
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())? + "\n";
    Ok((set.key, text))
}
