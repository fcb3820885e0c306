//! The tables made in parts (`cli::export::parts`: split, verify each record alone, group
//! by ties, analyse each group — the steps `python -m aeplens.spark` runs) equal the
//! export's tables made from the whole evidence at once, row for row, on the reference
//! stores (interleaved emitters, forks, retries, rotation, BOM and CRLF, arrays and pretty
//! documents, tampered records). The engine's joins are done here in plain Rust.
#![cfg(feature = "tables")]

use crate::common;
use crate::common::table_rows::rows;

use aeplens::cli::export::parts::{self, GROUP_TABLES};
use aeplens::cli::export::tables;
use aeplens::load::{Corpus, load_paths};
use aeplens::open::Setting;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, BinaryArray, Int64Array, RecordBatch, StringArray};
use arrow_schema::DataType;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

const KEYS: &str = "tests/fixtures/reference-stores/keys.json";
const LEASES: &str = "tests/fixtures/reference-stores/reapproval_after_denial.leases.ndjson";

fn setting(leases: bool) -> Setting {
    let mut s = Setting::default();
    s.trust.add_file(KEYS).unwrap();
    if leases {
        assert!(s.leases.add_file(Path::new(LEASES)).is_empty());
    }
    s
}

/// The export's tables of the whole evidence, by name.
fn whole(paths: &[&str], leases: bool) -> BTreeMap<&'static str, Vec<String>> {
    let s = setting(leases);
    let names: Vec<String> = paths.iter().map(ToString::to_string).collect();
    let ev = aeplens::open::open_corpus(&s, Corpus::new(load_paths(&names)));
    (tables::tables(ev.as_ref()).into_iter())
        .filter(|t| GROUP_TABLES.contains(&t.name))
        .map(|t| (t.name, rows(&[t.batch()])))
        .collect()
}

fn column<'a, T: 'static>(b: &'a RecordBatch, name: &str) -> &'a T {
    b.column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_any()
        .downcast_ref::<T>()
        .unwrap()
}

/// The same tables made in parts, as the Spark job makes them; and how many groups.
fn in_parts(paths: &[&str], leases: bool) -> (BTreeMap<&'static str, Vec<String>>, usize) {
    let s = setting(leases);
    // Step 1: the files as binaryFile rows.
    let contents: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let files = RecordBatch::try_from_iter([
        (
            "path",
            Arc::new(StringArray::from(paths.to_vec())) as ArrayRef,
        ),
        (
            "content",
            Arc::new(BinaryArray::from_iter_values(contents.iter())) as ArrayRef,
        ),
    ])
    .unwrap();
    let pieces = parts::split(&files).unwrap();
    // Step 2, on two batches (as two tasks would).
    let piece_rows: Vec<usize> = (0..pieces.num_rows())
        .filter(|&i| !pieces.column_by_name("raw").unwrap().is_null(i))
        .collect();
    let half = piece_rows.len() / 2;
    let take = |rows: &[usize]| {
        let idx = arrow_array::UInt32Array::from_iter_values(rows.iter().map(|&r| r as u32));
        let cols: Vec<ArrayRef> = ["path", "line", "index", "raw"]
            .iter()
            .map(|c| arrow_select_take(pieces.column_by_name(c).unwrap(), &idx))
            .collect();
        RecordBatch::try_from_iter(["path", "line", "index", "raw"].into_iter().zip(cols)).unwrap()
    };
    let batches = [take(&piece_rows[..half]), take(&piece_rows[half..])];
    // A record: (path, line) → its key, run, index, ties, action ids, parent ids.
    struct Rec {
        path: String,
        line: i64,
        index: Option<i64>,
        hash: String,
        previous: Option<String>,
        run: String,
        ties: Vec<i64>,
        ids: Vec<String>,
        parents: Vec<String>,
    }
    let mut recs: Vec<Rec> = Vec::new();
    for b in &batches {
        let v = parts::verify(b, &s).unwrap();
        let err = column::<StringArray>(&v, "load_error");
        let list = |name: &str, i: usize| v.column_by_name(name).unwrap().as_list::<i32>().value(i);
        for i in 0..v.num_rows() {
            if !err.is_null(i) {
                continue;
            }
            let strs = |a: ArrayRef| {
                (a.as_string::<i32>().iter())
                    .map(|s| s.unwrap().to_string())
                    .collect()
            };
            recs.push(Rec {
                path: column::<StringArray>(&v, "path").value(i).to_string(),
                line: column::<Int64Array>(&v, "line").value(i),
                index: Some(column::<Int64Array>(&v, "record_index"))
                    .filter(|c| !c.is_null(i))
                    .map(|c| c.value(i)),
                hash: column::<StringArray>(&v, "canonical_sha256")
                    .value(i)
                    .to_string(),
                previous: None,
                run: (column::<StringArray>(&v, "run_id").iter().nth(i).flatten())
                    .unwrap_or("")
                    .to_string(),
                ties: (list("ties", i)
                    .as_primitive::<Int64Type>()
                    .values()
                    .to_vec()),
                ids: strs(list("action_ids", i)),
                parents: strs(list("parent_ids", i)),
            });
        }
    }
    // The window: an NDJSON record's position among its file's records, and the record
    // before it there.
    recs.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    let mut seen: HashMap<String, (i64, Option<String>)> = HashMap::new();
    for r in &mut recs {
        let (n, before) = seen.entry(r.path.clone()).or_default();
        r.index = Some(r.index.unwrap_or(*n));
        r.previous = before.replace(r.hash.clone());
        *n += 1;
    }
    // Each file's format, from its own row.
    let formats: HashMap<&str, &str> = {
        let p = column::<StringArray>(&pieces, "path");
        let f = column::<StringArray>(&pieces, "format");
        (0..pieces.num_rows())
            .filter(|&i| !f.is_null(i))
            .map(|i| (p.value(i), f.value(i)))
            .collect()
    };
    // Step 3: the ties, and the join for parents named in another run.
    let held: HashSet<(&str, &str)> = (recs.iter())
        .flat_map(|r| r.ids.iter().map(move |id| (r.run.as_str(), id.as_str())))
        .collect();
    let dangling: HashSet<&str> = (recs.iter())
        .flat_map(|r| r.parents.iter().map(move |p| (r.run.as_str(), p.as_str())))
        .filter(|k| !held.contains(k))
        .map(|(_, p)| p)
        .collect();
    // A dangling parent's tie: a number no record tie is (records' ties are hashes).
    let mut sorted: Vec<&str> = dangling.iter().copied().collect();
    sorted.sort_unstable();
    let parent_tie = |id: &str| -1 - sorted.iter().position(|x| *x == id).unwrap() as i64;
    let (mut keys, mut ties) = (Vec::new(), Vec::new());
    for (k, r) in recs.iter().enumerate() {
        let mut mine = r.ties.clone();
        mine.extend(
            (r.parents.iter().chain(&r.ids))
                .filter(|p| dangling.contains(p.as_str()))
                .map(|p| parent_tie(p)),
        );
        for t in mine {
            keys.push(k as i64);
            ties.push(t);
        }
    }
    let edges = RecordBatch::try_from_iter([
        ("record_key", Arc::new(Int64Array::from(keys)) as ArrayRef),
        ("tie", Arc::new(Int64Array::from(ties)) as ArrayRef),
    ])
    .unwrap();
    let g = parts::groups(&[edges]).unwrap();
    let mut members: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    let (rk, gr) = (
        column::<Int64Array>(&g, "record_key"),
        column::<Int64Array>(&g, "group"),
    );
    for i in 0..g.num_rows() {
        members
            .entry(gr.value(i))
            .or_default()
            .push(rk.value(i) as usize);
    }
    // Step 4: each group analysed alone, its pieces in shuffled order.
    let raw: HashMap<(&str, i64), &[u8]> = {
        let p = column::<StringArray>(&pieces, "path");
        let l = column::<Int64Array>(&pieces, "line");
        let r = column::<BinaryArray>(&pieces, "raw");
        (0..pieces.num_rows())
            .filter(|&i| !r.is_null(i))
            .map(|i| ((p.value(i), l.value(i)), r.value(i)))
            .collect()
    };
    let mut made: BTreeMap<&'static str, Vec<RecordBatch>> = BTreeMap::new();
    for group in members.values() {
        let mut rs: Vec<&Rec> = group.iter().map(|&k| &recs[k]).collect();
        rs.reverse();
        let input = |p: &str| paths.iter().position(|x| *x == p).unwrap() as i64;
        let batch = RecordBatch::try_from_iter([
            (
                "path",
                Arc::new(StringArray::from_iter_values(
                    rs.iter().map(|r| r.path.as_str()),
                )) as ArrayRef,
            ),
            (
                "input",
                Arc::new(Int64Array::from_iter_values(
                    rs.iter().map(|r| input(&r.path)),
                )),
            ),
            (
                "format",
                Arc::new(StringArray::from_iter_values(
                    rs.iter().map(|r| formats[r.path.as_str()]),
                )),
            ),
            (
                "file_previous",
                Arc::new(
                    rs.iter()
                        .map(|r| r.previous.as_deref())
                        .collect::<StringArray>(),
                ),
            ),
            (
                "line",
                Arc::new(Int64Array::from_iter_values(rs.iter().map(|r| r.line))),
            ),
            (
                "index",
                Arc::new(rs.iter().map(|r| r.index).collect::<Int64Array>()),
            ),
            (
                "raw",
                Arc::new(BinaryArray::from_iter_values(
                    rs.iter().map(|r| raw[&(r.path.as_str(), r.line)]),
                )),
            ),
        ])
        .unwrap();
        for (name, t) in GROUP_TABLES.iter().zip(parts::analyse(&batch, &s).unwrap()) {
            made.entry(name).or_default().push(t);
        }
    }
    let tables = made.into_iter().map(|(n, b)| (n, rows(&b))).collect();
    (tables, members.len())
}

/// `take` without arrow-select: the rows at `idx` of a string, integer or binary column.
fn arrow_select_take(a: &ArrayRef, idx: &arrow_array::UInt32Array) -> ArrayRef {
    let at = idx.values().iter().map(|&i| i as usize);
    match a.data_type() {
        DataType::Utf8 => {
            let s = a.as_string::<i32>();
            Arc::new(
                at.map(|i| (!s.is_null(i)).then(|| s.value(i)))
                    .collect::<StringArray>(),
            )
        }
        DataType::Int64 => {
            let s = a.as_primitive::<Int64Type>();
            Arc::new(
                at.map(|i| (!s.is_null(i)).then(|| s.value(i)))
                    .collect::<Int64Array>(),
            )
        }
        DataType::Binary => {
            let s = a.as_binary::<i32>();
            Arc::new(
                at.map(|i| (!s.is_null(i)).then(|| s.value(i)))
                    .collect::<BinaryArray>(),
            )
        }
        other => panic!("{other}"),
    }
}

fn assert_equal(paths: &[&str], leases: bool, at_least_groups: usize) {
    let want = whole(paths, leases);
    let (got, groups) = in_parts(paths, leases);
    assert!(groups >= at_least_groups, "{groups} groups");
    for name in GROUP_TABLES {
        assert_eq!(
            got.get(name).unwrap_or(&Vec::new()),
            &want[name],
            "table {name} of {paths:?}"
        );
    }
}

#[test]
fn every_reference_store_in_parts_equals_the_export() {
    let dir = "tests/fixtures/reference-stores";
    let mut stores: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path().display().to_string())
        .filter(|p| p.ends_with(".ndjson") && !p.contains(".leases."))
        .collect();
    stores.sort();
    assert!(stores.len() > 25);
    for store in &stores {
        assert_equal(&[store.as_str()], false, 1);
    }
}

#[test]
fn many_files_in_parts_equal_the_export_and_split_into_groups() {
    let rotated = [
        "tests/fixtures/reference-stores/rotated/2026-09-14.ndjson",
        "tests/fixtures/reference-stores/rotated/2026-09-15.ndjson",
        "tests/fixtures/reference-stores/rotated/2026-09-16.ndjson",
    ];
    let mut all: Vec<&str> = rotated.to_vec();
    all.extend([
        "tests/fixtures/reference-stores/reapproval_after_denial.ndjson",
        "tests/fixtures/reference-stores/three_emitters_one_store.ndjson",
        "tests/fixtures/reference-stores/fork_parallel_emit.ndjson",
        "tests/fixtures/reference-stores/subagents_default_action_ids.ndjson",
        "tests/fixtures/reference-stores/resaved_bom_crlf.ndjson",
        "tests/fixtures/reference/equivalent_array.json",
        "tests/fixtures/reference/equivalent_pretty.json",
        "tests/fixtures/reference/chain.ndjson",
        "assets/demo/evidence/incident.ndjson",
    ]);
    assert_equal(&all, true, 4);
    // A copy of a store in another place: every record duplicated, one group.
    let dir = common::run_dir("parts-copies");
    std::fs::create_dir_all(&dir).unwrap();
    let store = "tests/fixtures/reference-stores/fork_parallel_emit.ndjson";
    let copy = dir.join("copy.ndjson");
    std::fs::copy(store, &copy).unwrap();
    assert_equal(&[store, copy.to_str().unwrap()], false, 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_line_is_a_row_with_its_error_not_a_failure() {
    let dir = common::run_dir("parts-bad-line");
    std::fs::create_dir_all(&dir).unwrap();
    let good = std::fs::read_to_string("tests/fixtures/reference/chain.ndjson").unwrap();
    let first = good.lines().next().unwrap();
    let file = dir.join("bad.ndjson");
    let mut bytes = format!("{first}\n{{\"run_id\": \n").into_bytes();
    bytes.extend(b"\xFFoops\n[1]\n");
    std::fs::write(&file, bytes).unwrap();
    let path = file.display().to_string();
    let files = RecordBatch::try_from_iter([
        (
            "path",
            Arc::new(StringArray::from(vec![path.as_str()])) as ArrayRef,
        ),
        (
            "content",
            Arc::new(BinaryArray::from_iter_values([
                std::fs::read(&file).unwrap()
            ])) as ArrayRef,
        ),
    ])
    .unwrap();
    let pieces = parts::split(&files).unwrap();
    let v = parts::verify(&pieces, &setting(false)).unwrap();
    let err = column::<StringArray>(&v, "load_error");
    let errors: Vec<(i64, &str)> = (0..v.num_rows())
        .filter(|&i| !err.is_null(i))
        .map(|i| (column::<Int64Array>(&v, "line").value(i), err.value(i)))
        .collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert_eq!(errors.iter().map(|e| e.0).collect::<Vec<_>>(), [2, 3, 4]);
    assert!(errors[1].1.contains("invalid UTF-8"), "{errors:?}");
    assert!(errors[2].1.contains("expected a JSON object"), "{errors:?}");
    // The record verified alone says what it cannot know yet, and whose keys it used.
    let i = (0..v.num_rows()).find(|&i| err.is_null(i)).unwrap();
    assert_eq!(column::<StringArray>(&v, "chain").value(i), "not-evaluated");
    assert!(column::<StringArray>(&v, "chain_link").is_null(i));
    assert_ne!(column::<StringArray>(&v, "semantic").value(i), "pass");
    let fingerprints = parts::keyring(&setting(false));
    assert!(!fingerprints.is_empty());
    for i in 0..v.num_rows() {
        assert_eq!(column::<StringArray>(&v, "keyring").value(i), fingerprints);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
