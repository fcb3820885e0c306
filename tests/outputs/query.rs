//! The filter language (docs/query.md, `aeplens query`, `--where`): malformed and
//! ill-typed expressions point at their fault; the reviewer questions of
//! `tests/fixtures/queries/questions.json` answer as their DuckDB SQL over the Parquet
//! export does; null and set semantics; the old explorer terms; `--where` on the commands.

use crate::common;

use aeplens::analysis::evidence::Evidence;
use aeplens::query::{Columns, Ctx, FIELDS, Query};
use serde_json::Value;
use std::collections::BTreeSet;

/// The demo's evidence, verified with its keys and leases.
fn demo() -> Evidence {
    common::open_evidence(
        &["assets/demo/evidence"],
        Some("assets/demo/keys.json"),
        Some("assets/demo/leases.ndjson"),
    )
    .0
}

/// (run, action) of every action `expr` matches in `ev`.
fn matched(ev: &Evidence, expr: &str) -> BTreeSet<(String, String)> {
    let q = Query::parse(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let pass = q.matches(&Ctx::new(ev.as_ref()), &Columns::default());
    let g = &ev.analysis.graph;
    (0..g.nodes.len() as u32)
        .filter(|&n| pass[n as usize])
        .map(|n| {
            let run = g.runs[g.nodes[n as usize].run as usize].id.clone();
            let id = g
                .facts(&ev.corpus, n)
                .and_then(|f| f.id())
                .unwrap()
                .to_string();
            (run, id)
        })
        .collect()
}

/// `0042/act-005`: the run's last four characters and the action id, in order.
fn ids(set: &BTreeSet<(String, String)>) -> Vec<String> {
    (set.iter())
        .map(|(r, a)| format!("{}/{a}", &r[r.len() - 4..]))
        .collect()
}

#[test]
fn every_malformed_expression_points_at_its_fault() {
    let corpus = std::fs::read_to_string("tests/fixtures/queries/errors.tsv").unwrap();
    let mut n = 0;
    for line in corpus
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let mut parts = line.splitn(3, '\t');
        let (column, fragment, expr) = (
            parts.next().unwrap().parse::<usize>().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap(),
        );
        let e = Query::parse(expr).expect_err(expr);
        assert_eq!(e.column(), column, "{expr}: {e}");
        assert!(
            e.message.contains(fragment),
            "{expr}: {e} (expected {fragment:?})"
        );
        assert!(
            e.at < expr.len() && e.at + e.len <= expr.len(),
            "{expr}: {e:?}"
        );
        // The caret sits under the fault.
        let rendered = e.render(expr);
        let caret = rendered.lines().nth(1).unwrap();
        assert_eq!(
            caret.find('^'),
            Some(2 + expr[..e.at].chars().count()),
            "{rendered}"
        );
        n += 1;
    }
    assert!(n >= 50, "only {n} malformed expressions");
}

#[test]
fn a_missing_value_is_null_and_a_set_matches_any_member() {
    let ev = demo();
    let all = matched(&ev, "");
    assert_eq!(all.len(), 9);
    // act-001 has no observed result: every comparison is false but `!=` and `== null`.
    let act1 = "0042/act-001".to_string();
    let observed_null = matched(&ev, "observed == null");
    assert!(ids(&observed_null).contains(&act1), "{observed_null:?}");
    assert!(!ids(&matched(&ev, "observed == \"success\"")).contains(&act1));
    assert!(ids(&matched(&ev, "observed != \"success\"")).contains(&act1));
    assert!(!ids(&matched(&ev, "observed exists")).contains(&act1));
    assert!(!ids(&matched(&ev, "observed contains \"s\"")).contains(&act1));
    // `not` of a false comparison is true.
    let not_success = matched(&ev, "not observed == \"success\"");
    assert_eq!(not_success, matched(&ev, "observed != \"success\""));
    // A set: `==` any member, `!=` no member, `in` any, `exists` not empty.
    let gap = matched(&ev, "finding == \"F-STATE-GAP\"");
    assert_eq!(ids(&gap), ["0042/act-005", "0042/act-006"]);
    let lease = matched(&ev, "finding == \"F-LEASE-OUTSIDE\"");
    assert_eq!(ids(&lease), ["0042/act-007"]);
    let v14_or_gap = matched(&ev, "finding in {\"V14\", \"F-STATE-GAP\"}");
    assert_eq!(
        ids(&v14_or_gap),
        ["0042/act-005", "0042/act-006", "0042/act-007"]
    );
    let no_gap = matched(&ev, "finding != \"F-STATE-GAP\"");
    assert_eq!(no_gap.len(), all.len() - gap.len());
    assert_eq!(matched(&ev, "finding exists").len(), 4);
    assert_eq!(matched(&ev, "finding == null").len(), 5);
    assert_eq!(matched(&ev, "finding contains \"LEASE\""), lease);
    // Severity orders; `findings` counts; ranges are closed.
    assert_eq!(
        matched(&ev, "severity >= \"low\""),
        matched(&ev, "finding exists")
    );
    assert_eq!(
        ids(&matched(&ev, "severity < \"high\"")),
        Vec::<String>::new()
    );
    assert_eq!(ids(&matched(&ev, "findings == 2")), ["0042/act-007"]);
    assert_eq!(
        matched(&ev, "findings in {1..2}"),
        matched(&ev, "findings >= 1")
    );
    // Times: a literal or epoch milliseconds, the same instant.
    let t = aeplens::model::time::parse_iso8601_ms("2026-06-06T10:03:00Z").unwrap();
    assert_eq!(
        matched(&ev, "time >= 2026-06-06T10:03Z"),
        matched(&ev, &format!("time >= {t}"))
    );
    assert_eq!(matched(&ev, "time >= 2026-06-07"), BTreeSet::new());
    // Precedence: not > and > or.
    assert_eq!(
        matched(
            &ev,
            "decision == \"deny\" or tool == \"read_file\" and observed == null"
        ),
        matched(
            &ev,
            "decision == \"deny\" or (tool == \"read_file\" and observed == null)"
        )
    );
    assert_eq!(
        matched(&ev, "! decision == \"deny\" && copies > 1"),
        matched(&ev, "(not decision == \"deny\") and copies > 1")
    );
}

#[test]
fn record_fields_say_the_verdict_and_never_more() {
    let ev = demo();
    // The record at line 2 (first holding act-003 and act-004) does not verify: their
    // actions are never `verified`, whatever their chain.
    let invalid = matched(&ev, "record.authenticity == \"invalid\"");
    assert_eq!(ids(&invalid), ["0042/act-003", "0042/act-004"]);
    assert!(!ids(&matched(&ev, "verified")).contains(&"0042/act-003".to_string()));
    // No token in the demo: no proven time, and `time.proof` is null.
    assert_eq!(matched(&ev, "time.proven").len(), 0);
    assert_eq!(matched(&ev, "time.proof == null").len(), 9);
    // Without --traces nothing is known of spans: `span` is null, so neither it nor
    // `span == false` holds.
    assert_eq!(matched(&ev, "span").len(), 0);
    assert_eq!(matched(&ev, "span == false").len(), 0);
    assert_eq!(matched(&ev, "capture == \"not-evaluated\"").len(), 9);
    // No anchors given: nothing is anchored.
    assert_eq!(matched(&ev, "anchored").len(), 0);
}

#[test]
fn proven_times_anchors_and_forks_come_from_the_verification() {
    let dir = common::fixtures().join("reference-stores");
    let keys = dir.join("keys.json");
    let store = dir.join("fork_resumed_checkpoint.ndjson");
    let ev = common::open_evidence(
        &[store.to_str().unwrap()],
        Some(keys.to_str().unwrap()),
        None,
    )
    .0;
    // `forked`: the record lies on a path with a fork point, as the link graph says.
    let forked = matched(&ev, "forked");
    let g = &ev.analysis.graph;
    let expected: BTreeSet<(String, String)> = (0..g.nodes.len() as u32)
        .filter(|&n| {
            ev.report.records[g.nodes[n as usize].record as usize]
                .chain
                .forked_at
                .is_some()
        })
        .map(|n| {
            let run = g.runs[g.nodes[n as usize].run as usize].id.clone();
            (
                run,
                g.facts(&ev.corpus, n)
                    .and_then(|f| f.id())
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(forked, expected);
    // A store of TSA tokens: `time.proof` is each record's own timestamp state.
    let tsa = dir.join("tsa_custom_authority_dsse.ndjson");
    let ev = common::open_evidence(&[tsa.to_str().unwrap()], Some(keys.to_str().unwrap()), None).0;
    let states: BTreeSet<&str> = ev
        .report
        .records
        .iter()
        .filter_map(|r| {
            r.authenticity
                .timestamp
                .map(aeplens::verify::TimestampState::name)
        })
        .collect();
    assert!(!states.is_empty());
    let with_proof = matched(&ev, "time.proof exists");
    assert_eq!(with_proof.len(), matched(&ev, "").len());
    assert_eq!(
        matched(&ev, "time.proven").len(),
        if states.contains("tsa-verified") {
            with_proof.len()
        } else {
            0
        }
    );
}

#[test]
fn the_old_explorer_terms_are_shorthand_for_their_fields() {
    use aeplens::tui::state::{compile, shorthand};
    let ev = demo();
    assert_eq!(
        shorthand("tool:sql !decision:deny is:marked").unwrap(),
        "tool contains \"sql\" and not (decision == \"deny\") and marked"
    );
    assert_eq!(
        shorthand("lease:after-expiry").unwrap(),
        "lease.verdict == \"after-expiry\""
    );
    assert_eq!(shorthand("lease:0007").unwrap(), "lease contains \"0007\"");
    assert!(shorthand("tool == \"x\"").is_none());
    assert!(shorthand("color:red").is_none());
    for (old, new) in [
        ("tool:sql", "tool contains \"sql\""),
        (
            "class:mutate-external",
            "side_effect == \"mutate-external\"",
        ),
        ("finding:F-STATE", "finding contains \"F-STATE\""),
        ("run:0044", "run contains \"0044\""),
        ("is:problem", "problem"),
    ] {
        let q = compile(old).unwrap();
        let pass = q.matches(&Ctx::new(ev.as_ref()), &Columns::default());
        let want = Query::parse(new).unwrap();
        assert_eq!(
            pass,
            want.matches(&Ctx::new(ev.as_ref()), &Columns::default()),
            "{old}"
        );
    }
    // An error points into the text typed.
    let e = compile("bogus:1").unwrap_err();
    assert_eq!(e.column(), 6, "{e}");
}

#[test]
fn problem_is_what_the_explorer_steps_through() {
    use aeplens::tui::data::flag;
    let sets: [&[&str]; 3] = [
        &["assets/demo/evidence"],
        &["tests/fixtures/reference-stores/tampered_dsse_envelopes.ndjson"],
        &["tests/fixtures/reference-stores/reapproval_after_denial.ndjson"],
    ];
    for paths in sets {
        let (keys, leases) = if paths[0].starts_with("assets") {
            ("assets/demo/keys.json", Some("assets/demo/leases.ndjson"))
        } else {
            ("tests/fixtures/reference-stores/keys.json", None)
        };
        let s = common::explorer(paths, Some(keys), leases);
        let d = s.data.as_ref().unwrap();
        let ctx = Ctx::of(
            &d.corpus,
            &d.analysis,
            d.report.as_deref(),
            &d.findings,
            None,
        );
        let pass = Query::parse("problem")
            .unwrap()
            .matches(&ctx, &Columns::default());
        let flags: Vec<bool> = d.flags.iter().map(|f| f & flag::PROBLEM != 0).collect();
        assert_eq!(pass, flags, "{paths:?}");
        assert!(pass.iter().any(|p| *p), "{paths:?}");
    }
}

/// `aeplens query` on the demo.
fn query(args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["query"];
    all.extend_from_slice(args);
    all.extend_from_slice(&common::DEMO);
    all.push("--no-index");
    common::aeplens(&all)
}

#[test]
fn query_exits_like_grep_and_writes_its_schema() {
    let (code, out, _) = query(&["decision == \"deny\"", "--format", "json"]);
    assert_eq!(code, 0, "{out}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string("schema/query.schema.json").unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&doc), "{out}");
    assert_eq!(doc["counts"]["matched"], 2);
    assert_eq!(doc["counts"]["actions"], 9);
    assert_eq!(doc["expression"], "decision == \"deny\"");
    for m in doc["matches"].as_array().unwrap() {
        assert_eq!(m["decision"], "deny");
        assert!(m["record"]["authenticity"].is_string() && m["chain_head"].is_string());
    }
    let (code, out, _) = query(&["tool == \"nothing-like-this\"", "--format", "ndjson"]);
    assert_eq!((code, out.as_str()), (1, ""));
    let (code, out, err) = query(&["tol == \"x\""]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.contains("column 1") && err.contains("did you mean \"tool\"?"),
        "{err}"
    );
    assert!(err.contains("\n  ^^^ "), "{err}");
    let (code, out, _) = query(&["finding exists", "--format", "ndjson"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 4, "{out}");
    // Marks need a review: said when none is given.
    let (code, _, err) = query(&["marked"]);
    assert_eq!(code, 1);
    assert!(err.contains("no --review given"), "{err}");
}

#[test]
fn where_narrows_findings_chains_reports_and_exports() {
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(&common::DEMO);
        all.push("--no-index");
        common::aeplens(&all)
    };
    let (code, out, _) = run(&[
        "findings",
        "--format",
        "json",
        "--where",
        "tool == \"write_file\"",
    ]);
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let ids: BTreeSet<&str> = (doc["findings"].as_array().unwrap().iter())
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        BTreeSet::from(["F-STATE-GAP", "F-LEASE-OUTSIDE", "V14"])
    );
    let (code, out, _) = run(&[
        "chains",
        "--format",
        "text",
        "--where",
        "tool == \"kubectl_rollout_undo\"",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("run-deploy-0044") && !out.contains("run-deploy-0042"),
        "{out}"
    );
    let (code, out, _) = run(&["report", "--no-review", "--where", "decision == \"deny\""]);
    assert_eq!(code, 0);
    assert!(
        out.contains("only the actions the filter decision == \"deny\" matches: 2 of 9 actions shown; 5 findings on other actions left out (4 high"),
        "{out}"
    );
    assert!(out.contains("No findings on the 2 actions shown"), "{out}");
    assert!(
        out.contains("--where 'decision == \"deny\"'"),
        "the Reproduce line carries the filter"
    );
    let (code, out, _) = run(&[
        "export",
        "--format",
        "dot",
        "--where",
        "run == \"run-deploy-0044\"",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("run-deploy-0044") && !out.contains("run-deploy-0042"),
        "{out}"
    );
    let (code, _, err) = run(&["export", "--format", "dot", "--where", "tool == \"none\""]);
    assert_eq!(code, 3);
    assert!(err.contains("--where matched no action"), "{err}");
    let (code, _, err) = run(&["findings", "--where", "tool <"]);
    assert_eq!(code, 2);
    assert!(err.contains("bad expression"), "{err}");
}

#[test]
fn docs_name_every_field_with_its_type() {
    let doc = std::fs::read_to_string("docs/query.md").unwrap();
    for f in FIELDS {
        let row = format!("| `{}` | {} |", f.name, f.ty.name());
        assert!(doc.contains(&row), "docs/query.md has no row {row}");
    }
    let (_, help, _) = common::aeplens(&["query", "--help"]);
    for f in FIELDS {
        assert!(help.contains(f.name), "query --help lacks {}", f.name);
    }
}

/// The review the questions' `marks` read: two marks on the demo's actions.
#[cfg(feature = "tables")]
fn demo_review(dir: &std::path::Path, ev: &Evidence) -> std::path::PathBuf {
    use aeplens::review::file::{EvidenceSet, Review};
    use aeplens::review::marks::{Mark, Target, Verdict};
    let mut review = Review::new(EvidenceSet::of(&ev.corpus), Vec::new());
    for (id, verdict) in [
        ("act-003", Verdict::RootCause),
        ("act-007", Verdict::Suspicious),
    ] {
        let n = ev
            .analysis
            .graph
            .find(&ev.corpus, "run-deploy-0042", id)
            .unwrap();
        let target = Target::action(&ev.corpus, &ev.analysis, n).unwrap();
        review.marks.push(Mark::new(target, verdict));
    }
    let path = dir.join("review.json");
    review.write(&path).unwrap();
    path
}

#[cfg(feature = "tables")]
#[test]
fn every_reviewer_question_answers_as_its_sql() {
    let corpus: Value = common::read_json(std::path::Path::new(
        "tests/fixtures/queries/questions.json",
    ));
    let questions = corpus["questions"].as_array().unwrap();
    assert!(questions.len() >= 30, "only {} questions", questions.len());
    let ok = std::process::Command::new("python3")
        .args(["-c", "import duckdb"])
        .status()
        .is_ok_and(|s| s.success());
    if !common::present(ok, "DuckDB (pip install duckdb)") {
        return;
    }
    let dir = common::run_dir("queries");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let review = demo_review(&dir, &demo());
    for (store, args) in corpus["stores"].as_object().unwrap() {
        let args: Vec<&str> = args
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let out = dir.join(store);
        let mut export = vec![
            "export",
            "--format",
            "parquet",
            "--no-index",
            "-o",
            out.to_str().unwrap(),
        ];
        export.extend(&args);
        let (code, _, err) = common::aeplens(&export);
        assert_eq!(code, 0, "{err}");
        let mine: Vec<&Value> = questions.iter().filter(|q| q["store"] == *store).collect();
        let sqls: Vec<&str> = mine.iter().map(|q| q["sql"].as_str().unwrap()).collect();
        let marks = if store == "demo" {
            review.to_str().unwrap()
        } else {
            ""
        };
        let answers = duckdb(&out, marks, &sqls);
        for (q, sql_rows) in mine.iter().zip(answers.as_array().unwrap()) {
            let expr = q["expr"].as_str().unwrap();
            let mut query = vec!["query", expr, "--format", "json", "--no-index"];
            if store == "demo" {
                query.extend(["--review", review.to_str().unwrap()]);
            }
            query.extend(&args);
            let (code, out, err) = common::aeplens(&query);
            assert!(code == 0 || code == 1, "{expr}: {err}");
            let doc: Value = serde_json::from_str(&out).unwrap();
            let ours: BTreeSet<(String, String, String)> =
                (doc["matches"].as_array().unwrap().iter())
                    .map(|m| {
                        let s = |k: &str| m[k].as_str().unwrap().to_string();
                        (s("run_id"), s("action_id"), s("chain_head"))
                    })
                    .collect();
            let theirs: BTreeSet<(String, String, String)> = (sql_rows.as_array().unwrap().iter())
                .map(|r| {
                    let s = |i: usize| r[i].as_str().unwrap().to_string();
                    (s(0), s(1), s(2))
                })
                .collect();
            assert_eq!(ours, theirs, "{}: {expr} vs {}", q["question"], q["sql"]);
            assert_eq!(
                ours.len(),
                doc["matches"].as_array().unwrap().len(),
                "one row per action identity: {expr}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each WHERE clause of `sqls` over the tables under `out` (and the marks of the review
/// at `marks`, when given) in DuckDB: the (run_id, action_id, chain_head) it selects.
#[cfg(feature = "tables")]
fn duckdb(out: &std::path::Path, marks: &str, sqls: &[&str]) -> Value {
    const SCRIPT: &str = r#"
import json, sys
import duckdb
out, marks, sqls = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
con = duckdb.connect()
for t in ["inputs", "records", "actions", "findings", "edges", "leases", "spans"]:
    con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{out}/{t}/*/*.parquet', hive_partitioning = true, union_by_name = true)")
if marks:
    con.execute(f"""CREATE VIEW marks AS SELECT m.target.run_id AS run_id, m.target.action_id AS action_id,
        m.target.record_sha256 AS record_sha256, m.verdict AS verdict
        FROM (SELECT unnest(marks) AS m FROM read_json_auto('{marks}'))""")
else:
    con.execute("CREATE VIEW marks AS SELECT NULL::VARCHAR AS run_id, NULL::VARCHAR AS action_id, NULL::VARCHAR AS record_sha256, NULL::VARCHAR AS verdict WHERE false")
res = []
for sql in sqls:
    rows = con.execute(f"SELECT a.run_id, a.action_id, a.chain_head FROM actions a WHERE {sql}").fetchall()
    res.append([list(r) for r in rows])
print(json.dumps(res))
"#;
    let sqls = serde_json::to_string(sqls).unwrap();
    common::python_json(
        std::path::Path::new("python3"),
        SCRIPT,
        &[out.to_str().unwrap(), marks, &sqls],
    )
}

/// A closed field refuses a value outside its list: every value the verifier and the
/// analysis give it on real evidence must be in that list, or a true question would be
/// refused.
#[test]
fn every_value_a_closed_field_takes_is_in_its_list() {
    let dir = common::fixtures().join("reference-stores");
    let keys = dir.join("keys.json");
    let mut checked = 0;
    for (paths, keys, leases) in [
        (
            vec!["assets/demo/evidence".to_string()],
            "assets/demo/keys.json".to_string(),
            Some("assets/demo/leases.ndjson"),
        ),
        (
            common::evidence_files(&dir, None)
                .into_iter()
                .map(|(p, _)| p.display().to_string())
                .collect(),
            keys.display().to_string(),
            Some("tests/fixtures/reference-stores/reapproval_after_denial.leases.ndjson"),
        ),
    ] {
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let ev = common::open_evidence(&paths, Some(&keys), leases).0;
        let ctx = Ctx::new(ev.as_ref());
        let columns = Columns::default();
        for (i, f) in FIELDS.iter().enumerate() {
            if f.values.is_empty() || f.ty == aeplens::query::Type::Severity {
                continue;
            }
            for v in columns.values(i, &ctx) {
                assert!(
                    f.values.contains(&v),
                    "{} takes {v:?}, outside {:?}",
                    f.name,
                    f.values
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 20, "only {checked} values seen");
}
