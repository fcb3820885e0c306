//! A table filled row by row — named columns of one length, each of one kind — and
//! made into an Arrow record batch or Parquet bytes: what `export --format parquet` and an
//! engine's steps (`parts`) build their tables with.

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::sync::Arc;

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

/// A table being built: named columns of equal length.
pub struct Table {
    pub name: &'static str,
    pub columns: Vec<(&'static str, Column)>,
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
        }
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

    /// Brings every column shorter than the longest to its length with nulls: a row
    /// whose unset columns are null.
    pub(super) fn end_row(&mut self) {
        let rows = self.columns.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
        for (_, c) in &mut self.columns {
            while c.len() < rows {
                c.push_null();
            }
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

    /// The table as Parquet bytes (Snappy-compressed).
    pub fn parquet(self) -> Result<Vec<u8>, String> {
        let batch = self.batch();
        let schema = batch.schema();
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build();
        let mut out = Vec::new();
        let mut w =
            ArrowWriter::try_new(&mut out, schema, Some(props)).map_err(|e| e.to_string())?;
        w.write(&batch).map_err(|e| e.to_string())?;
        w.close().map_err(|e| e.to_string())?;
        Ok(out)
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
