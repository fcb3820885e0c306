//! A table filled row by row — named columns of one length, each of one kind — and
//! made into an Arrow record batch, or written to a Parquet file as its rows are made:
//! what `export --format parquet` and an engine's steps (`parts`) build their tables with.

use crate::model::sha256::Hasher;
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows a written table holds before they leave it for its Parquet file (a row group
/// takes several such batches).
pub const BATCH_ROWS: usize = 4096;

/// Rows of a Parquet row group at most (a written table's file: what its writer holds).
const ROW_GROUP_ROWS: usize = 128 * 1024;

/// The memory a writer's row group may take before it is written out (every table of an
/// export is written at once: a wide table's full row group takes tens of MB).
const ROW_GROUP_MEMORY: usize = 8 << 20;

/// One column, filled row by row. The documented tables hold the first four kinds; the
/// batches an engine passes between its steps (`parts`) also bytes and lists.
pub enum Column {
    Str(Vec<Option<String>>),
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
    Bytes(Vec<Option<Vec<u8>>>),
    IntList(Vec<Option<Vec<i64>>>),
    StrList(Vec<Option<Vec<String>>>),
}

impl Column {
    fn data_type(&self) -> DataType {
        let list = |item: DataType| DataType::List(Arc::new(Field::new("item", item, true)));
        match self {
            Column::Str(_) => DataType::Utf8,
            Column::Int(_) => DataType::Int64,
            Column::Float(_) => DataType::Float64,
            Column::Bool(_) => DataType::Boolean,
            Column::Bytes(_) => DataType::Binary,
            Column::IntList(_) => list(DataType::Int64),
            Column::StrList(_) => list(DataType::Utf8),
        }
    }

    fn len(&self) -> usize {
        match self {
            Column::Str(v) => v.len(),
            Column::Int(v) => v.len(),
            Column::Float(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Bytes(v) => v.len(),
            Column::IntList(v) => v.len(),
            Column::StrList(v) => v.len(),
        }
    }

    /// A null at the end.
    fn push_null(&mut self) {
        match self {
            Column::Str(v) => v.push(None),
            Column::Int(v) => v.push(None),
            Column::Float(v) => v.push(None),
            Column::Bool(v) => v.push(None),
            Column::Bytes(v) => v.push(None),
            Column::IntList(v) => v.push(None),
            Column::StrList(v) => v.push(None),
        }
    }

    /// An empty column of the same kind.
    fn empty_like(&self) -> Column {
        match self {
            Column::Str(_) => Column::Str(Vec::new()),
            Column::Int(_) => Column::Int(Vec::new()),
            Column::Float(_) => Column::Float(Vec::new()),
            Column::Bool(_) => Column::Bool(Vec::new()),
            Column::Bytes(_) => Column::Bytes(Vec::new()),
            Column::IntList(_) => Column::IntList(Vec::new()),
            Column::StrList(_) => Column::StrList(Vec::new()),
        }
    }

    fn array(self) -> ArrayRef {
        use arrow_array::builder::{Int64Builder, ListBuilder, StringBuilder};
        match self {
            Column::Str(v) => Arc::new(StringArray::from(v)),
            Column::Int(v) => Arc::new(Int64Array::from(v)),
            Column::Float(v) => Arc::new(Float64Array::from(v)),
            Column::Bool(v) => Arc::new(BooleanArray::from(v)),
            Column::Bytes(v) => Arc::new(arrow_array::BinaryArray::from_iter(v)),
            Column::IntList(v) => {
                let mut b = ListBuilder::new(Int64Builder::new());
                for row in v {
                    b.append_option(row.map(|r| r.into_iter().map(Some)));
                }
                Arc::new(b.finish())
            }
            Column::StrList(v) => {
                let mut b = ListBuilder::new(StringBuilder::new());
                for row in v {
                    b.append_option(row.map(|r| r.into_iter().map(Some)));
                }
                Arc::new(b.finish())
            }
        }
    }
}

/// A table being built: named columns of equal length — all its rows, or, for a table
/// written to a file (`Table::written_to`), those not yet written.
pub struct Table {
    pub name: &'static str,
    pub columns: Vec<(&'static str, Column)>,
    file: Option<Box<Written>>,
}

/// A table's Parquet file as its rows are written: under a hidden name of its own until
/// it is complete, then moved into its directory and named after its SHA-256.
struct Written {
    partial: PathBuf,
    /// The file's writer once the first rows are written, or why the file failed; taken
    /// when the file is complete.
    writer: Option<Result<Writer, String>>,
    rows: usize,
}

type Writer = ArrowWriter<Hashing<std::io::BufWriter<std::fs::File>>>;

impl Written {
    /// The file's writer, made (with the file) at the first rows.
    fn writer(&mut self, schema: &Schema) -> &mut Result<Writer, String> {
        let partial = &self.partial;
        self.writer.get_or_insert_with(|| {
            let dir = partial.parent().unwrap_or(Path::new("."));
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))
                .and_then(|()| {
                    std::fs::File::create(partial)
                        .map_err(|e| format!("cannot write {}: {e}", partial.display()))
                })
                .and_then(|f| {
                    let out = Hashing {
                        inner: std::io::BufWriter::new(f),
                        sha256: Hasher::default(),
                    };
                    let schema = Arc::new(schema.clone());
                    ArrowWriter::try_new(out, schema, Some(properties())).map_err(|e| e.to_string())
                })
        })
    }
}

impl Drop for Written {
    /// A file left incomplete (an export that failed) is removed.
    fn drop(&mut self) {
        if self.writer.is_some() {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

/// A writer that hashes what goes through it.
struct Hashing<W> {
    inner: W,
    sha256: Hasher,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sha256.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A written table's file, complete.
pub struct TableFile {
    pub rows: usize,
    pub path: PathBuf,
    pub sha256: String,
}

/// The Parquet writer's settings: Snappy, row groups of [`ROW_GROUP_ROWS`] (or fewer:
/// [`ROW_GROUP_MEMORY`]).
fn properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .build()
}

impl Table {
    pub(super) fn new(name: &'static str, columns: &[(&'static str, Kind)]) -> Table {
        let empty = |k: Kind| match k {
            Kind::Str => Column::Str(Vec::new()),
            Kind::Int => Column::Int(Vec::new()),
            Kind::Float => Column::Float(Vec::new()),
            Kind::Bool => Column::Bool(Vec::new()),
            Kind::Bytes => Column::Bytes(Vec::new()),
            Kind::IntList => Column::IntList(Vec::new()),
            Kind::StrList => Column::StrList(Vec::new()),
        };
        Table {
            name,
            columns: columns.iter().map(|(n, k)| (*n, empty(*k))).collect(),
            file: None,
        }
    }

    /// The table written to a Parquet file as its rows are made: every [`BATCH_ROWS`]
    /// rows leave it at [`Table::end_row`], the rest at [`Table::finish`]. The file is
    /// made in `staging` under a hidden name of this process's own (exports of shards
    /// into one place run side by side), so a failure says so at `finish`.
    pub(super) fn written_to(mut self, staging: &Path) -> Table {
        let name = format!(".{}-{}-partial", self.name, std::process::id());
        self.file = Some(Box::new(Written {
            partial: staging.join(name),
            writer: None,
            rows: 0,
        }));
        self
    }

    /// Writes the rows held to the table's file (none without one).
    fn write_held(&mut self) {
        let Some(file) = &mut self.file else { return };
        let columns = (self.columns.iter())
            .map(|(n, c)| (*n, c.empty_like()))
            .collect();
        let held = Table {
            name: self.name,
            columns: std::mem::replace(&mut self.columns, columns),
            file: None,
        };
        file.rows += held.rows();
        let partial = file.partial.display().to_string();
        let writer = file.writer(&held.schema());
        if let Ok(w) = writer {
            let mut written = w.write(&held.batch());
            if written.is_ok() && w.memory_size() > ROW_GROUP_MEMORY {
                written = w.flush();
            }
            if let Err(e) = written {
                *writer = Err(format!("cannot write {partial}: {e}"));
            }
        }
    }

    /// Completes a written table's file: its last rows, then the file moved into `dir`,
    /// named `part-<16 hex of its SHA-256>.parquet`, replacing what `dir` held (a re-run
    /// of the same evidence writes the same file again).
    pub(super) fn finish(mut self, dir: &Path) -> Result<TableFile, String> {
        self.write_held();
        let mut file = self
            .file
            .take()
            .ok_or("the table is not written to a file")?;
        let partial = file.partial.clone();
        let writer = file.writer.take().ok_or("the table's file was not made")?;
        let moved = writer
            .and_then(|w| w.into_inner().map_err(|e| e.to_string()))
            .and_then(|hashing| {
                let sha256 = crate::canon::hex(&hashing.sha256.finish());
                (hashing.inner.into_inner())
                    .map_err(std::io::IntoInnerError::into_error)
                    .and_then(|f| f.sync_all())
                    .and_then(|()| std::fs::create_dir_all(dir))
                    .map_err(|e| format!("cannot write {}: {e}", partial.display()))?;
                if let Ok(old) = std::fs::read_dir(dir) {
                    for f in old.flatten() {
                        let _ = std::fs::remove_file(f.path());
                    }
                }
                let path = dir.join(format!("part-{}.parquet", &sha256[..16]));
                std::fs::rename(&partial, &path)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                Ok(TableFile {
                    rows: file.rows,
                    path,
                    sha256,
                })
            });
        if moved.is_err() {
            let _ = std::fs::remove_file(&partial);
        }
        moved
    }

    /// The column `name` (every table's columns are fixed; a wrong name is a bug).
    pub(super) fn col(&mut self, name: &str) -> &mut Column {
        let i = self
            .columns
            .iter()
            .position(|(n, _)| *n == name)
            .unwrap_or_else(|| unreachable!("no column {name} in {}", self.name));
        &mut self.columns[i].1
    }

    /// Rows so far.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }

    /// Ends a row: brings every column shorter than the longest to its length with nulls
    /// (a row whose unset columns are null), and, for a written table holding
    /// [`BATCH_ROWS`] rows, writes them to its file.
    pub(super) fn end_row(&mut self) {
        let rows = self.columns.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
        for (_, c) in &mut self.columns {
            while c.len() < rows {
                c.push_null();
            }
        }
        if rows >= BATCH_ROWS {
            self.write_held();
        }
    }

    pub(super) fn bytes(&mut self, name: &str, v: Option<&[u8]>) {
        if let Column::Bytes(c) = self.col(name) {
            c.push(v.map(<[u8]>::to_vec));
        }
    }

    pub(super) fn ints(&mut self, name: &str, v: Vec<i64>) {
        if let Column::IntList(c) = self.col(name) {
            c.push(Some(v));
        }
    }

    pub(super) fn strs(&mut self, name: &str, v: Vec<String>) {
        if let Column::StrList(c) = self.col(name) {
            c.push(Some(v));
        }
    }

    pub(super) fn s(&mut self, name: &str, v: Option<&str>) {
        if let Column::Str(c) = self.col(name) {
            c.push(v.map(str::to_string));
        }
    }

    pub(super) fn i(&mut self, name: &str, v: Option<i64>) {
        if let Column::Int(c) = self.col(name) {
            c.push(v);
        }
    }

    pub(super) fn f(&mut self, name: &str, v: Option<f64>) {
        if let Column::Float(c) = self.col(name) {
            c.push(v);
        }
    }

    pub(super) fn b(&mut self, name: &str, v: Option<bool>) {
        if let Column::Bool(c) = self.col(name) {
            c.push(v);
        }
    }

    /// The Arrow schema (column names and types, all nullable).
    pub fn schema(&self) -> Schema {
        Schema::new(
            self.columns
                .iter()
                .map(|(n, c)| Field::new(*n, c.data_type(), true))
                .collect::<Vec<_>>(),
        )
    }

    /// The table as one Arrow record batch.
    pub fn batch(self) -> RecordBatch {
        let schema = Arc::new(self.schema());
        let arrays: Vec<ArrayRef> = self.columns.into_iter().map(|(_, c)| c.array()).collect();
        RecordBatch::try_new(schema, arrays)
            .unwrap_or_else(|e| unreachable!("columns of one length and their own types: {e}"))
    }
}

/// A column's type, as `docs/tables.md` names it: string, bigint, double, boolean (and
/// the binary and list columns of an engine's batches, `parts`).
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Str,
    Int,
    Float,
    Bool,
    Bytes,
    IntList,
    StrList,
}
