//! `export --format parquet`: the schema is the one `docs/tables.md` documents, exports are
//! idempotent, the tables round-trip through DuckDB, every SQL recipe of `docs/tables.md`
//! runs in DuckDB and agrees with aeplens, and two shards exported apart read together as
//! one. DuckDB is its Python package (`scripts/test` installs it); without it the DuckDB
//! parts fail in CI (`CI` set) and are skipped elsewhere.
#![cfg(feature = "tables")]

use crate::common;

use aeplens::analysis::evidence::Evidence;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::cli::export::tables;
use aeplens::load::{Corpus, load_paths};
use aeplens::model::Link;
use aeplens::verify::Options;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const KEYS: &str = "tests/fixtures/reference-stores/keys.json";
const ROTATED: [&str; 3] = [
    "tests/fixtures/reference-stores/rotated/2026-09-14.ndjson",
    "tests/fixtures/reference-stores/rotated/2026-09-15.ndjson",
    "tests/fixtures/reference-stores/rotated/2026-09-16.ndjson",
];
/// Stores with denials, leases, unknown keys, forks and gaps.
const MIXED: [&str; 5] = [
    "tests/fixtures/reference-stores/reapproval_after_denial.ndjson",
    "tests/fixtures/reference-stores/key_not_in_keyring.ndjson",
    "tests/fixtures/reference-stores/append_lost_io_error.ndjson",
    "tests/fixtures/reference-stores/fork_parallel_emit.ndjson",
    "assets/demo/evidence/incident.ndjson",
];

fn scratch(name: &str) -> PathBuf {
    let dir = common::run_dir(&format!("tables-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn evidence(paths: &[&str]) -> Evidence {
    let keys = common::keyring(Path::new(KEYS));
    let paths: Vec<String> = paths.iter().map(ToString::to_string).collect();
    Evidence::open(
        Corpus::new(load_paths(&paths)),
        &keys,
        &Options::default(),
        &SuppliedLeases::default(),
    )
}

fn export(paths: &[&str], out: &Path) {
    let mut args = vec!["export", "--format", "parquet", "-q", "--keys", KEYS, "-o"];
    let out = out.to_str().unwrap();
    args.push(out);
    args.extend_from_slice(paths);
    let (code, _, err) = common::aeplens(&args);
    assert_eq!(code, 0, "{err}");
}

/// The documented tables: name → [(column, type)].
fn documented() -> BTreeMap<String, Vec<(String, String)>> {
    let doc = std::fs::read_to_string("docs/tables.md").unwrap();
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut table: Option<String> = None;
    for line in doc.lines() {
        if let Some(rest) = line.strip_prefix("### `") {
            table = rest.split('`').next().map(str::to_string);
            continue;
        }
        if line.starts_with("## ") {
            table = None;
        }
        let Some(t) = &table else { continue };
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() >= 4
            && !cells[1].is_empty()
            && cells[1] != "column"
            && !cells[1].starts_with('-')
        {
            out.entry(t.clone())
                .or_default()
                .push((cells[1].to_string(), cells[2].to_string()));
        }
    }
    out
}

#[test]
fn the_tables_are_the_documented_ones() {
    let ev = evidence(&MIXED);
    let docs = documented();
    let built = tables::tables(ev.as_ref());
    assert_eq!(
        built.iter().map(|t| t.name.to_string()).collect::<Vec<_>>(),
        [
            "inputs", "records", "actions", "findings", "edges", "leases", "spans"
        ]
    );
    assert_eq!(docs.len(), built.len(), "{docs:?}");
    for t in built {
        let schema = t.schema();
        let actual: Vec<(String, String)> = schema
            .fields()
            .iter()
            .map(|f| {
                let ty = match f.data_type() {
                    arrow_schema::DataType::Utf8 => "string",
                    arrow_schema::DataType::Int64 => "bigint",
                    arrow_schema::DataType::Float64 => "double",
                    arrow_schema::DataType::Boolean => "boolean",
                    other => panic!("undocumented type {other}"),
                };
                (f.name().clone(), ty.to_string())
            })
            .collect();
        assert_eq!(Some(&actual), docs.get(t.name), "table {}", t.name);
    }
}

#[test]
fn re_exporting_writes_the_same_files_and_never_touches_evidence() {
    let out = scratch("idem");
    let files = |d: &Path| {
        let mut v = Vec::new();
        for t in [
            "inputs", "records", "actions", "findings", "edges", "leases", "spans", "manifest",
        ] {
            for part in std::fs::read_dir(d.join(t)).unwrap() {
                let p = part.unwrap().path();
                for f in std::fs::read_dir(&p).map_or_else(
                    |_| vec![p.clone()],
                    |r| r.flatten().map(|e| e.path()).collect(),
                ) {
                    v.push((
                        f.strip_prefix(d).unwrap().to_path_buf(),
                        std::fs::read(&f).unwrap(),
                    ));
                }
            }
        }
        v.sort();
        v
    };
    let before = std::fs::read(MIXED[0]).unwrap();
    export(&MIXED, &out);
    let first = files(&out);
    export(&MIXED, &out);
    assert_eq!(files(&out), first, "a second export changed the files");
    assert_eq!(std::fs::read(MIXED[0]).unwrap(), before);
    assert_eq!(first.len(), 8);
    let manifest: Value = serde_json::from_slice(
        &first
            .iter()
            .find(|(p, _)| p.starts_with("manifest"))
            .unwrap()
            .1,
    )
    .unwrap();
    assert_eq!(manifest["tables_version"], tables::TABLES_VERSION);
    assert_eq!(
        manifest["evidence"]["inputs"].as_array().unwrap().len(),
        MIXED.len()
    );
    assert!(
        manifest["keyring"][0]["fingerprint"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    // Each part is named by its own SHA-256.
    for (name, table) in manifest["tables"].as_object().unwrap() {
        let file = table["file"].as_str().unwrap();
        let (path, bytes) = first
            .iter()
            .find(|(p, _)| p.to_str() == Some(file))
            .unwrap();
        assert!(path.starts_with(name));
        let sha = table["sha256"].as_str().unwrap();
        assert!(file.ends_with(&format!("part-{}.parquet", &sha[..16])));
        assert!(bytes.starts_with(b"PAR1"));
    }
    // Without -o there is nowhere to write.
    let (code, _, err) = common::aeplens(&["export", "--format", "parquet", MIXED[0]]);
    assert_eq!(code, 2);
    assert!(err.contains("-o OUT/"), "{err}");
    let _ = std::fs::remove_dir_all(&out);
}

/// An export that cannot write a table says which (exit 2) and leaves no file of its
/// own half-written: the tables being written when it stopped take their hidden files
/// with them (here `actions`: 5,118 rows, its first 4,096 written when `records` fails).
#[test]
fn an_export_that_cannot_write_a_table_says_so_and_leaves_no_partial_file() {
    let out = scratch("blocked");
    let store = out.join("incident.ndjson");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&store).unwrap());
    crate::incident::generate(3_000, &mut file).unwrap();
    drop(file);
    let keys = out.join("keys.json");
    std::fs::write(&keys, crate::incident::keys_json()).unwrap();
    let lake = out.join("lake");
    std::fs::create_dir_all(&lake).unwrap();
    std::fs::write(lake.join("records"), b"a file where the records table goes").unwrap();
    let (code, _, err) = common::export_parquet(&keys, &lake, &store);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("records"), "{err}");
    let mut left = Vec::new();
    let mut dirs = vec![lake.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.to_string_lossy().contains("partial") {
                left.push(path);
            }
        }
    }
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&out);
}

/// Runs every recipe of docs/tables.md in DuckDB over `out`; also counts each table's
/// rows. `None` when DuckDB is not installed (outside CI).
fn duckdb(out: &Path) -> Option<Value> {
    const SCRIPT: &str = r#"
import json, re, sys
import duckdb
out, doc = sys.argv[1], sys.argv[2]
con = duckdb.connect()
tables = ["inputs", "records", "actions", "findings", "edges", "leases", "spans"]
for t in tables:
    con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{out}/{t}/*/*.parquet', hive_partitioning = true)")
res = {"rows": {t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchall()[0][0] for t in tables}}
res["canonical"] = sorted(r[0] for r in con.execute("SELECT canonical_sha256 FROM records").fetchall())
for block in re.findall(r"```sql\n(.*?)```", open(doc).read(), re.S):
    m = re.match(r"-- recipe: (\w+)\n", block)
    if m:
        res[m.group(1)] = [list(r) for r in con.execute(block).fetchall()]
print(json.dumps(res))
"#;
    let ok = std::process::Command::new("python3")
        .args(["-c", "import duckdb"])
        .status()
        .is_ok_and(|s| s.success());
    if !common::present(ok, "DuckDB (pip install duckdb)") {
        return None;
    }
    let args = [out.to_str().unwrap(), "docs/tables.md"];
    Some(common::python_json(Path::new("python3"), SCRIPT, &args))
}

/// What each recipe must answer, from aeplens itself. `skip_chain_findings`: leave out
/// the link graph's own findings (a shard sees only itself).
fn expected(ev: &Evidence, skip_chain_findings: bool) -> Value {
    let rs = &ev.report.records;
    let at = |i: usize| (rs[i].source.path.clone(), rs[i].source.line);
    let mut links = Vec::new();
    let mut gaps = Vec::new();
    for i in 0..rs.len() {
        if let Link::Hash(h) = ev.corpus.record(i).link() {
            let parents: Vec<usize> = (0..rs.len())
                .filter(|j| Some(rs[*j].canonical_sha256) == h.digest())
                .collect();
            if parents.is_empty() {
                gaps.push(json!([at(i).0, at(i).1, h.to_string()]));
            }
            for j in parents {
                links.push(json!([at(i).0, at(i).1, at(j).0, at(j).1]));
            }
        }
    }
    let mut by_id: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &ev.findings {
        if !(skip_chain_findings && f.id.starts_with("F-CHAIN-")) {
            *by_id.entry(f.id).or_default() += 1;
        }
    }
    let g = &ev.analysis.graph;
    let mut after_deny: BTreeMap<String, usize> = BTreeMap::new();
    for f in ev.findings.iter().filter(|f| f.id == "F-EXEC-AFTER-DENY") {
        for id in &f.action_ids {
            let n = g
                .find(&ev.corpus, f.run_id.as_deref().unwrap(), id)
                .unwrap();
            let (_, a) = g.action(&ev.corpus, n).unwrap();
            *after_deny
                .entry(a.tool().unwrap_or("").to_string())
                .or_default() += 1;
        }
    }
    let mut untrusted: BTreeMap<String, usize> = BTreeMap::new();
    for r in rs.iter().filter(|r| r.authenticity.key_unknown) {
        *untrusted
            .entry(r.authenticity.key_id.clone().unwrap())
            .or_default() += 1;
    }
    let mut outside: BTreeMap<String, usize> = BTreeMap::new();
    for run in &g.runs {
        let n = run
            .nodes
            .iter()
            .filter(|n| {
                ev.analysis
                    .leases
                    .by_node
                    .get(n)
                    .is_some_and(|l| l.verdict.is_outside())
            })
            .count();
        if n > 0 {
            outside.insert(run.id.clone(), n);
        }
    }
    let pairs = |m: BTreeMap<String, usize>| {
        m.into_iter()
            .map(|(k, v)| json!([k, v]))
            .collect::<Vec<_>>()
    };
    json!({
        "chain_links": links,
        "chain_gaps": gaps,
        "findings_by_id": by_id.into_iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        "executed_after_deny_by_tool": pairs(after_deny),
        "untrusted_keys": pairs(untrusted),
        "lease_violations_per_run": pairs(outside),
    })
}

/// Rows compared as sorted lists (engines order NULLs and ties differently).
fn sorted(v: &Value) -> Vec<String> {
    let mut rows: Vec<String> = v.as_array().unwrap().iter().map(Value::to_string).collect();
    rows.sort();
    rows
}

fn assert_recipes(actual: &Value, expected: &Value, skip_chain_findings: bool) {
    for (name, want) in expected.as_object().unwrap() {
        let mut got = actual[name].clone();
        if name == "findings_by_id" && skip_chain_findings {
            got = Value::Array(
                got.as_array()
                    .unwrap()
                    .iter()
                    .filter(|r| !r[0].as_str().unwrap().starts_with("F-CHAIN-"))
                    .cloned()
                    .collect(),
            );
        }
        assert_eq!(sorted(&got), sorted(want), "recipe {name}");
    }
}

/// The "fires" records of some finding cases (`tests/findings/`), as one NDJSON file.
fn catalogue_store(dir: &Path, ids: &[&str]) -> String {
    let mut text = String::new();
    for id in ids {
        let case: Value = common::read_json(Path::new(&format!("tests/findings/{id}.json")));
        // Each case in a run of its own (the cases reuse run and action ids).
        for r in case["fires"]["records"].as_array().unwrap() {
            let mut r = r.clone();
            r["run_id"] = json!(format!("run-{id}"));
            text.push_str(&r.to_string());
            text.push('\n');
        }
    }
    let file = dir.join("catalogue.ndjson");
    std::fs::write(&file, text).unwrap();
    file.display().to_string()
}

#[test]
fn every_recipe_runs_in_duckdb_and_agrees_with_aeplens() {
    let out = scratch("recipes");
    let extra = catalogue_store(&out, &["F-EXEC-AFTER-DENY", "F-LEASE-OUTSIDE"]);
    let inputs: Vec<&str> = MIXED.iter().copied().chain([extra.as_str()]).collect();
    let data = out.join("tables");
    export(&inputs, &data);
    let Some(actual) = duckdb(&data) else { return };
    let ev = evidence(&inputs);
    // The round trip: every row and every record hash.
    let rows = &actual["rows"];
    assert_eq!(rows["records"], ev.report.records.len());
    assert_eq!(rows["inputs"], inputs.len());
    assert_eq!(rows["actions"], ev.analysis.graph.nodes.len());
    assert_eq!(rows["leases"], ev.analysis.leases.summaries.len());
    let mut hashes: Vec<String> = ev
        .report
        .records
        .iter()
        .map(|r| r.canonical_sha256.to_string())
        .collect();
    hashes.sort_unstable();
    assert_eq!(actual["canonical"], json!(hashes));
    let want = expected(&ev, false);
    // The fixtures exercise every recipe.
    for name in [
        "chain_links",
        "chain_gaps",
        "findings_by_id",
        "executed_after_deny_by_tool",
        "untrusted_keys",
        "lease_violations_per_run",
    ] {
        assert!(
            !want[name].as_array().unwrap().is_empty(),
            "{name} has nothing to find"
        );
    }
    assert_recipes(&actual, &want, false);
    let _ = std::fs::remove_dir_all(&out);
}

/// With the agent's telemetry, the `spans` table holds every tool-call span with the action
/// it is joined to, and the `capture_gaps` recipe finds what `check` reports as
/// F-CAPTURE-GAP.
#[test]
fn the_spans_table_holds_the_telemetry_and_its_gaps() {
    let out = scratch("spans");
    let data = out.join("tables");
    let traces = "tests/fixtures/otel/demo.jsonl";
    let evidence = "tests/fixtures/otel/demo_incident.ndjson";
    let keys = "tests/fixtures/otel/demo_keys.json";
    let data_dir = data.to_str().unwrap();
    let (code, _, err) = common::aeplens(&[
        "export", "--format", "parquet", "-q", "--keys", keys, "--traces", traces, "-o", data_dir,
        evidence,
    ]);
    assert_eq!(code, 0, "{err}");
    let Some(actual) = duckdb(&data) else { return };
    assert_eq!(actual["rows"]["spans"], 10);
    let (_, check, _) = common::aeplens(&[
        "check",
        "--format",
        "json",
        "--no-index",
        "--keys",
        keys,
        "--traces",
        traces,
        evidence,
    ]);
    let check: Value = serde_json::from_str(&check).unwrap();
    let gaps: Vec<Value> = (check["findings"].as_array().unwrap().iter())
        .filter(|f| f["id"] == "F-CAPTURE-GAP")
        .map(|f| {
            let s = &f["evidence"]["span"];
            json!([f["run_id"], s["tool"], s["span_id"], s["trace_id"]])
        })
        .collect();
    assert_eq!(gaps.len(), 1);
    assert_eq!(actual["capture_gaps"], json!(gaps));
    let _ = std::fs::remove_dir_all(&out);
}

/// Two files as an emitter writes them when it rotates between runs: `run-a` in the first,
/// `run-b` in the second, one hash chain running from the first file into the second.
fn rotated_between_runs(dir: &Path) -> [String; 2] {
    let record = |run: &str, prev: Value, action: Value| {
        json!({"schema_version": "aep/v0.3", "run_id": run, "created_at_ms": 1_780_000_000_000u64,
               "prev_record_hash": prev, "actions": [action]})
    };
    let denied_yet_ran = json!({"action_id": "a1", "tool_name": "sql_exec", "state_changing": true,
        "timestamp_ms": 1_780_000_000_000u64, "side_effect_class": "mutate-external",
        "capability_decision": {"decision": "deny", "capability": "db.write"}, "outcome": "success"});
    let first = record("run-a", Value::Null, denied_yet_ran);
    let one = dir.join("2026-09-14.ndjson");
    std::fs::write(&one, format!("{first}\n")).unwrap();
    let h = evidence(&[one.to_str().unwrap()]).report.records[0].canonical_sha256;
    let write = json!({"action_id": "b1", "tool_name": "write_file", "state_changing": true,
        "timestamp_ms": 1_780_000_100_000u64, "side_effect_class": "mutate-local"});
    let second = record("run-b", json!(h), write);
    let two = dir.join("2026-09-15.ndjson");
    std::fs::write(&two, format!("{second}\n")).unwrap();
    [one.display().to_string(), two.display().to_string()]
}

#[test]
fn two_shards_exported_apart_read_as_one() {
    let dir = scratch("shards");
    let [one, two] = rotated_between_runs(&dir);
    let out = dir.join("tables");
    export(&[&one], &out);
    export(&[&two], &out);
    let sets = std::fs::read_dir(out.join("records")).unwrap().count();
    assert_eq!(sets, 2, "one partition per shard");
    let Some(actual) = duckdb(&out) else { return };
    let whole = evidence(&[&one, &two]);
    let want = expected(&whole, true);
    // The chain crosses the shard boundary, and nothing is missing.
    assert_eq!(want["chain_links"].as_array().unwrap().len(), 1);
    assert!(want["chain_gaps"].as_array().unwrap().is_empty());
    assert!(!want["findings_by_id"].as_array().unwrap().is_empty());
    assert_recipes(&actual, &want, true);
    // The second shard alone sees a gap where its predecessor lives in the first.
    let alone = evidence(&[&two]);
    assert_eq!(
        expected(&alone, false)["chain_gaps"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // Files of one run split across shards would be seen twice (chained snapshots repeat
    // a run's actions): docs/tables.md says to shard by whole runs. The rotated store of
    // the reference emitter is one run over three files: exported whole, it agrees.
    let rotated = dir.join("rotated");
    export(&ROTATED, &rotated);
    let actual = duckdb(&rotated).unwrap();
    assert_recipes(&actual, &expected(&evidence(&ROTATED), false), false);
    let _ = std::fs::remove_dir_all(&dir);
}
