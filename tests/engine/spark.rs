//! `python -m aeplens.spark` (the package in `python/`) run for real with
//! `--master local[2]`: the tables it writes equal `aeplens export --format parquet` on the
//! same inputs (DuckDB compares every table, rows sorted), each table's partition has the
//! committer's `_SUCCESS`, the manifests agree but for the part files, and the counts are
//! `check`'s. On a rotated, interleaved store in several files (chains across files and
//! partitions, arrays, a pretty document, bad lines, an empty file, a broken array,
//! leases; each group's bytes read from the files, then shuffled to it) and on a generated
//! 5,000-record incident-shaped store (`BENCHMARKS.md` runs the job on 200,000).
//!
//! `scripts/test` makes the environment (`target/spark-venv`: the package, pyspark,
//! pandas, pyarrow, DuckDB; OpenJDK 17); without it these tests fail in CI (`CI` set) and
//! are skipped elsewhere.
#![cfg(feature = "tables")]

use crate::common;

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const KEYS: &str = "tests/fixtures/reference-stores/keys.json";
/// The keys of the time-stamped store (`tests/fixtures/tsa/`).
const TSA_KEYS: &str = "tests/fixtures/tsa/keys.json";
const LEASES: &str = "tests/fixtures/reference-stores/reapproval_after_denial.leases.ndjson";

/// The environment's Python, when it can run the job.
fn python() -> Option<PathBuf> {
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/spark-venv/bin/python");
    let ready = py.exists()
        && Command::new(&py)
            .args(["-c", "import aeplens.spark, duckdb, pyspark, pandas"])
            .status()
            .is_ok_and(|s| s.success())
        && Command::new("java")
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success());
    common::present(ready, "the Spark environment (target/spark-venv, java)").then_some(py)
}

/// Runs the job; returns its summary line.
fn spark(py: &Path, args: &[&str]) -> String {
    let out = Command::new(py)
        .args(["-m", "aeplens.spark", "--master", "local[2]"])
        .args(args)
        .env("SPARK_LOCAL_IP", "127.0.0.1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the job failed:\n{stderr}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// DuckDB's reading of two table directories: per table the rows of each (sorted, `set`
/// aside), whether they are equal, and the `set` partitions.
fn compare(py: &Path, a: &Path, b: &Path) -> Value {
    const SCRIPT: &str = r#"
import json, sys, duckdb
a, b = sys.argv[1], sys.argv[2]
con = duckdb.connect()
out = {}
for t in ["inputs", "records", "actions", "findings", "edges", "leases", "spans"]:
    def rows(d):
        q = f"SELECT * EXCLUDE (set) FROM read_parquet('{d}/{t}/*/*.parquet', hive_partitioning = true)"
        return sorted(repr(r) for r in con.execute(q).fetchall())
    def sets(d):
        q = f"SELECT DISTINCT set FROM read_parquet('{d}/{t}/*/*.parquet', hive_partitioning = true)"
        return sorted(r[0] for r in con.execute(q).fetchall())
    ra, rb = rows(a), rows(b)
    sa, sb = set(ra), set(rb)
    out[t] = {"rows": [len(ra), len(rb)], "equal": ra == rb, "sets": [sets(a), sets(b)],
              "only_a": [r for r in ra if r not in sb][:3], "only_b": [r for r in rb if r not in sa][:3]}
print(json.dumps(out))
"#;
    common::python_json(py, SCRIPT, &[a.to_str().unwrap(), b.to_str().unwrap()])
}

/// The CLI's export of `files` (as the job names them: absolute paths, in its order),
/// with the `trust` arguments (`--tsa-certs`, `--anchors`) the job was given.
fn export(files: &[String], out: &Path, keys: &str, leases: bool, trust: &[&str]) {
    let out = out.to_str().unwrap();
    let mut args = vec!["export", "--format", "parquet", "-q", "--keys", keys];
    args.extend(trust);
    if leases {
        args.extend(["--leases", LEASES]);
    }
    args.extend(["-o", out]);
    args.extend(files.iter().map(String::as_str));
    let (code, _, err) = common::aeplens(&args);
    assert_eq!(code, 0, "{err}");
}

/// `check`'s record and finding counts.
fn check_counts(files: &[String], keys: &str, leases: bool, trust: &[&str]) -> (u64, u64) {
    let mut args = vec!["check", "--format", "json", "--no-index", "--keys", keys];
    args.extend(trust);
    if leases {
        args.extend(["--leases", LEASES]);
    }
    args.extend(files.iter().map(String::as_str));
    let (_, out, err) = common::aeplens(&args);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let n = |k: &str| v[k].as_array().unwrap().len() as u64;
    (n("records"), n("findings"))
}

/// The number before `word` in the job's summary line.
fn count(summary: &str, word: &str) -> u64 {
    let words: Vec<&str> = summary.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| w.trim_end_matches(',') == word)
        .unwrap();
    words[at - 1].parse().unwrap()
}

/// The job and the CLI on the same files agree on every table, the manifest and the
/// counts. `trust`: arguments both take (`--tsa-certs`, `--anchors`); `extra`: the job's.
fn assert_same(
    py: &Path,
    dir: &Path,
    files: &[String],
    (keys, trust): (&str, &[&str]),
    leases: bool,
    extra: &[&str],
) -> Value {
    let (job, cli) = (dir.join("job"), dir.join("cli"));
    for earlier in [&job, &cli] {
        let _ = std::fs::remove_dir_all(earlier);
    }
    let (job_out, input) = (job.to_str().unwrap(), dir.join("in"));
    let mut args = vec!["--keys", keys, "--out", job_out];
    args.extend(trust);
    if leases {
        args.extend(["--leases", LEASES]);
    }
    args.extend(extra);
    args.push(input.to_str().unwrap());
    let summary = spark(py, &args);
    export(files, &cli, keys, leases, trust);
    let tables = compare(py, &cli, &job);
    for (name, t) in tables.as_object().unwrap() {
        assert!(t["equal"].as_bool().unwrap(), "table {name}: {t}");
        assert_eq!(t["sets"][0], t["sets"][1], "table {name}: {t}");
        if ["inputs", "records", "actions", "findings", "edges"].contains(&name.as_str()) {
            assert!(t["rows"][0].as_u64().unwrap() > 0, "table {name} is empty");
        }
        // One partition, as the export's, with the committer's mark.
        let parts: Vec<_> = std::fs::read_dir(job.join(name))
            .unwrap()
            .flatten()
            .collect();
        let cli_parts: Vec<_> = std::fs::read_dir(cli.join(name))
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(parts.len(), 1, "table {name}");
        assert_eq!(
            parts[0].file_name(),
            cli_parts[0].file_name(),
            "table {name}"
        );
        let success = parts[0].path().join("_SUCCESS");
        assert!(success.exists(), "no {}", success.display());
    }
    // The manifests: the same but for the files each wrote.
    let manifest = |d: &Path| {
        let files: Vec<_> = std::fs::read_dir(d.join("manifest"))
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(files.len(), 1, "one manifest, nothing beside it: {files:?}");
        let mut m: Value = common::read_json(&files[0].path());
        let rows: std::collections::BTreeMap<String, Value> = (m["tables"].as_object())
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v["rows"].clone()))
            .collect();
        m.as_object_mut().unwrap().remove("tables");
        (m, rows)
    };
    assert_eq!(manifest(&cli), manifest(&job));
    let (records, findings) = check_counts(files, keys, leases, trust);
    assert_eq!(count(&summary, "records"), records, "{summary}");
    assert_eq!(count(&summary, "findings"), findings, "{summary}");
    tables
}

/// A directory `in/` holding `files` under their own names, and their absolute paths in
/// the order the job reads them (sorted).
fn inputs(dir: &Path, files: &[(&str, Vec<u8>)]) -> Vec<String> {
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let mut out = Vec::new();
    for (name, bytes) in files {
        let path = input.join(name);
        std::fs::write(&path, bytes).unwrap();
        out.push(std::fs::canonicalize(&path).unwrap().display().to_string());
    }
    out.sort();
    out
}

#[test]
fn the_job_writes_the_exports_tables_for_a_rotated_interleaved_store() {
    let Some(py) = python() else { return };
    let dir = common::run_dir("spark-rotated");
    let _ = std::fs::remove_dir_all(&dir);
    let read = |p: &str| std::fs::read(p).unwrap();
    let stores = "tests/fixtures/reference-stores";
    let mut bad = read(&format!("{stores}/retried_append_middle.ndjson"));
    bad.extend(b"{\"run_id\": \n\xFFnot json\n");
    let files = inputs(
        &dir,
        &[
            (
                "2026-09-14.ndjson",
                read(&format!("{stores}/rotated/2026-09-14.ndjson")),
            ),
            (
                "2026-09-15.ndjson",
                read(&format!("{stores}/rotated/2026-09-15.ndjson")),
            ),
            (
                "2026-09-16.ndjson",
                read(&format!("{stores}/rotated/2026-09-16.ndjson")),
            ),
            (
                "emitters.ndjson",
                read(&format!("{stores}/three_emitters_one_store.ndjson")),
            ),
            (
                "subagents.ndjson",
                read(&format!("{stores}/subagents_default_action_ids.ndjson")),
            ),
            (
                "fork.ndjson",
                read(&format!("{stores}/fork_parallel_emit.ndjson")),
            ),
            (
                "reapproval.ndjson",
                read(&format!("{stores}/reapproval_after_denial.ndjson")),
            ),
            (
                "bom_crlf.ndjson",
                read(&format!("{stores}/resaved_bom_crlf.ndjson")),
            ),
            ("retried.ndjson", bad),
            (
                "array.json",
                read("tests/fixtures/reference/equivalent_array.json"),
            ),
            (
                "pretty.json",
                read("tests/fixtures/reference/equivalent_pretty.json"),
            ),
            (
                "chain.ndjson",
                read("tests/fixtures/reference/chain.ndjson"),
            ),
            ("empty.ndjson", Vec::new()),
            ("broken.json", b"[{\"run_id\": \"r\"}, oops]\n".to_vec()),
            ("stamped.ndjson", read("tests/fixtures/tsa/stamped.ndjson")),
        ],
    );
    // Each group's records read where they lie (the default for local files), then sent
    // to it through the shuffle (an object store's way).
    for bytes_from in ["files", "shuffle"] {
        let tables = assert_same(
            &py,
            &dir,
            &files,
            (KEYS, &["--keys", TSA_KEYS]),
            true,
            &[
                "--partitions",
                "3",
                "--range-size",
                "2K",
                "--bytes-from",
                bytes_from,
            ],
        );
        // Every file has its row, the empty one and the unreadable array too (their load
        // errors are counted), and the rest of the file with bad lines still loads.
        assert_eq!(tables["inputs"]["rows"][1], 15, "{bytes_from}");
    }
    // Without `--tsa-certs` the stamped store's tokens prove no time.
    let unproven = timestamps(&py, &dir.join("job"));
    let rows = unproven.as_array().unwrap();
    assert!(
        rows.iter()
            .all(|r| r[0] != "tsa-verified" && r[1].is_null()),
        "{unproven}"
    );
    assert!(rows.iter().any(|r| r[0] == "tsa-untrusted"), "{unproven}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_job_writes_the_exports_tables_for_a_generated_incident_store() {
    let Some(py) = python() else { return };
    let dir = common::run_dir("spark-incident");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("in")).unwrap();
    // The store the benchmark generator writes (`gen_store --shape incident`), its key
    // apart (beside it, it would be read as evidence).
    let store = dir.join("in/incident.ndjson");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&store).unwrap());
    crate::incident::generate(5_000, &mut file).unwrap();
    drop(file);
    let keys = dir.join("keys.json");
    std::fs::write(&keys, crate::incident::keys_json()).unwrap();
    let files = vec![std::fs::canonicalize(&store).unwrap().display().to_string()];
    let tables = assert_same(
        &py,
        &dir,
        &files,
        (keys.to_str().unwrap(), &[]),
        false,
        &["--range-size", "1M"],
    );
    // 5,000 appends, and the retried ones the incident shape has.
    assert!(tables["records"]["rows"][1].as_u64().unwrap() >= 5_000);
    let (_, findings) = check_counts(&files, keys.to_str().unwrap(), false, &[]);
    assert!(
        findings > 2_500,
        "incident-shaped: about one finding a record"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// No task holds a large file whole: one file of reference-shaped records larger than the
/// JVM's whole heap (in local mode the executors run in the driver:
/// `spark.driver.memory=192m`, Spark's 300 MB reserve, made for larger heaps, set aside;
/// one task at a time) is cut into ranges, and the job counts the records and findings
/// `check` does (the tests above prove ranges give the export's very tables). The job
/// before ranges read a file as one `binaryFile` row: it failed with `OutOfMemoryError`
/// on three 95 MB files in Spark's default 1 GB.
#[test]
fn a_file_larger_than_the_executors_memory_is_read_in_ranges() {
    let Some(py) = python() else { return };
    let dir = common::run_dir("spark-large");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("in")).unwrap();
    let store = dir.join("in/large.ndjson");
    let mut records = Vec::new();
    crate::reference::generate(HEAP_RECORDS, &mut records).unwrap();
    let mut file = std::io::BufWriter::new(std::fs::File::create(&store).unwrap());
    for line in records.split_inclusive(|b| *b == b'\n') {
        // Whitespace JSON allows after the `{`: the same records in more bytes.
        file.write_all(&line[..1]).unwrap();
        file.write_all(&[b' '; PADDING]).unwrap();
        file.write_all(&line[1..]).unwrap();
    }
    drop(file);
    let size = std::fs::metadata(&store).unwrap().len();
    assert!(
        size > HEAP_MB << 20,
        "{size} bytes: not larger than the heap"
    );
    let keys = dir.join("keys.json");
    std::fs::write(&keys, crate::reference::keys_json()).unwrap();
    let (keys, out) = (keys.to_str().unwrap(), dir.join("job"));
    let heap = format!("spark.driver.memory={HEAP_MB}m");
    let summary = spark(
        &py,
        &[
            "--master",
            "local[1]",
            "--conf",
            &heap,
            "--conf",
            "spark.testing.reservedMemory=0",
            "--range-size",
            "16M",
            "--keys",
            keys,
            "--out",
            out.to_str().unwrap(),
            store.to_str().unwrap(),
        ],
    );
    let files = vec![std::fs::canonicalize(&store).unwrap().display().to_string()];
    let (records, findings) = check_counts(&files, keys, false, &[]);
    assert!(records >= HEAP_RECORDS as u64, "{records}");
    assert_eq!(count(&summary, "records"), records, "{summary}");
    assert_eq!(count(&summary, "findings"), findings, "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The JVM's heap, in MiB, in [`a_file_larger_than_the_executors_memory_is_read_in_ranges`].
const HEAP_MB: u64 = 192;

/// Records of the reference shape (56 MB), each line padded by [`PADDING`] spaces into a
/// file larger than that heap (218 MB): the job's memory follows bytes, its time records.
const HEAP_RECORDS: usize = 13_000;

/// The spaces after each record's `{` in that file (JSON whitespace: the record, its
/// signature and its chain hash stay the same).
const PADDING: usize = 12 << 10;

/// The `records` table's timestamp columns in `out`, row by row (sorted by line):
/// `timestamp`, `proven_time_ms`, `proven_by`.
fn timestamps(py: &Path, out: &Path) -> Value {
    const SCRIPT: &str = r#"
import json, sys, duckdb
q = f"SELECT timestamp, proven_time_ms, proven_by FROM read_parquet('{sys.argv[1]}/records/*/*.parquet', hive_partitioning = true) ORDER BY path, line"
print(json.dumps(duckdb.connect().execute(q).fetchall()))
"#;
    common::python_json(py, SCRIPT, &[out.to_str().unwrap()])
}

/// Under `--tsa-certs` the job proves a time as `check` does: each RFC 3161 token that
/// chains to the root is `tsa-verified` with the time and TSA it proves in the `records`
/// table, equal to the CLI's export, and a proof that is no token is a `claim`. (Without
/// the root no time is proven: the rotated store's test holds the same stamped store.)
#[test]
fn the_job_proves_a_time_under_tsa_certs() {
    let Some(py) = python() else { return };
    let dir = common::run_dir("spark-tsa");
    let _ = std::fs::remove_dir_all(&dir);
    let read = |p: &str| std::fs::read(format!("tests/fixtures/{p}")).unwrap();
    let files = inputs(
        &dir,
        &[
            ("stamped.ndjson", read("tsa/stamped.ndjson")),
            (
                "local.ndjson",
                read("reference-stores/tsa_local_default_v03.ndjson"),
            ),
        ],
    );
    let keys = TSA_KEYS;
    let other_keys = ["--keys", "tests/fixtures/reference-stores/keys.json"];
    let root = [other_keys, ["--tsa-certs", "tests/fixtures/tsa/root.pem"]].concat();
    assert_same(&py, &dir, &files, (keys, &root), false, &[]);
    let proven = timestamps(&py, &dir.join("job"));
    let rows = proven.as_array().unwrap();
    let verified: Vec<&Value> = (rows.iter()).filter(|r| r[0] == "tsa-verified").collect();
    assert!(!verified.is_empty(), "{proven}");
    for r in &verified {
        assert!(r[1].as_i64().unwrap() > 1_700_000_000_000, "{r}");
        assert!(!r[2].as_str().unwrap().is_empty(), "{r}");
    }
    assert!(
        rows.iter().any(|r| r[0] == "claim" && r[1].is_null()),
        "{proven}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
