//! `export --format parquet` writes each table as its rows are made, a batch of
//! `BATCH_ROWS` at a time: the files it writes hold exactly the tables made whole in
//! memory, row for row and value for value, on a reference-shaped store whose larger
//! tables span several batches.
#![cfg(feature = "tables")]

use crate::common;
use crate::reference_shape::generated;

use crate::common::table_rows::rows;
use aeplens::analysis::gathered::Batch;
use aeplens::cli::export::columns::BATCH_ROWS;
use aeplens::cli::export::tables;
use aeplens::load::{Corpus, load_paths};
use aeplens::open::{Budget, Setting};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::path::Path;

/// The schema and batches of the one Parquet file under `dir`.
fn read_table(dir: &Path) -> (arrow_schema::SchemaRef, Vec<RecordBatch>) {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|f| f.unwrap().path())
        .collect();
    assert_eq!(
        files.len(),
        1,
        "one part file in {}: {files:?}",
        dir.display()
    );
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&files[0]).unwrap()).unwrap();
    let schema = builder.schema().clone();
    (
        schema,
        builder.build().unwrap().map(Result::unwrap).collect(),
    )
}

#[test]
fn the_streamed_tables_equal_the_tables_made_whole() {
    let (store, _) = generated();
    let keys = store.with_file_name("fleet.keys.json");
    let out = common::run_dir("tables-streamed");
    let _ = std::fs::remove_dir_all(&out);
    let (code, _, err) = common::export_parquet(&keys, &out, store);
    assert_eq!(code, 0, "{err}");

    let mut setting = Setting::default();
    setting.trust.add_file(keys.to_str().unwrap()).unwrap();
    let paths = vec![store.to_str().unwrap().to_string()];
    let ev = aeplens::open::open_corpus(&setting, Corpus::new(load_paths(&paths)));
    let mut spanning = 0;
    for table in tables::tables(ev.as_ref()) {
        let name = table.name;
        let whole = table.batch();
        let partitions: Vec<_> = std::fs::read_dir(out.join(name))
            .unwrap()
            .map(|p| p.unwrap().path())
            .collect();
        assert_eq!(partitions.len(), 1, "{name}: one evidence set");
        let (schema, written) = read_table(&partitions[0]);
        let rows: usize = written.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows, whole.num_rows(), "{name}: rows");
        assert_eq!(schema.fields(), whole.schema().fields(), "{name}");
        let mut offset = 0;
        for batch in &written {
            let part = whole.slice(offset, batch.num_rows());
            for (c, field) in whole.schema().fields().iter().enumerate() {
                assert_eq!(
                    batch.column(c).to_data(),
                    part.column(c).to_data(),
                    "{name}.{} in rows {offset}..",
                    field.name()
                );
            }
            offset += batch.num_rows();
        }
        spanning += usize::from(whole.num_rows() > BATCH_ROWS);
    }
    assert!(
        spanning >= 1,
        "no table spans more than one batch of {BATCH_ROWS} rows: the store is too small to test streaming"
    );
}

/// Made batch by batch, as the export of a large store is (`check`'s batches: here of
/// about 250 records, and past 1,000 records each batch reads its records' lines again),
/// the tables hold exactly the rows of the tables made whole.
#[test]
fn the_tables_made_batch_by_batch_hold_the_rows_made_whole() {
    let (store, _) = generated();
    let keys = store.with_file_name("fleet.keys.json");
    let out = common::run_dir("tables-batched");
    let _ = std::fs::remove_dir_all(&out);
    let mut setting = Setting::default();
    setting.trust.add_file(keys.to_str().unwrap()).unwrap();
    let paths = vec![store.to_str().unwrap().to_string()];

    let mut made = tables::Tables::new(Some(&out));
    let mut batches = 0;
    let budget = Budget {
        batch: 250,
        facts_kept: 1_000,
    };
    let mut each = |b: &Batch<'_>| {
        batches += 1;
        made.add_batch(b);
    };
    let (opened, _) =
        aeplens::open::open_each_batch(&setting, &paths, budget, &mut each, &mut |_| {});
    assert!(batches > 3, "{batches} batches");
    let (corpus, report, findings) = opened.parts();
    made.add_rest(report, findings, None);
    made.finish(corpus, &setting.trust, &out).unwrap();

    let ev = aeplens::open::open_corpus(&setting, Corpus::new(load_paths(&paths)));
    for table in tables::tables(ev.as_ref()) {
        let name = table.name;
        let whole = rows(&[table.batch()]);
        let partitions: Vec<_> = std::fs::read_dir(out.join(name))
            .unwrap()
            .map(|p| p.unwrap().path())
            .collect();
        assert_eq!(
            partitions.len(),
            1,
            "{name}: one evidence set and nothing else"
        );
        let (_, written) = read_table(&partitions[0]);
        assert_eq!(rows(&written), whole, "{name}");
        // The store has no leases and no telemetry.
        let empty = ["leases", "spans"].contains(&name);
        assert_eq!(whole.is_empty(), empty, "{name}: rows");
    }
}
