//! Capture completeness (`--traces`, analysis-rules §9): the agent's OpenTelemetry tool-call
//! spans, written by the official OpenTelemetry Python SDK (`tests/otel/make_traces.py`,
//! vendored under `tests/fixtures/otel/`), joined to the evidence end to end through the
//! real binary.

use crate::common;

use common::aeplens;
use serde_json::{Value, json};
use std::path::Path;

const KEYS: &str = "tests/fixtures/otel/demo_keys.json";
const DEMO: &str = "tests/fixtures/otel/demo_incident.ndjson";
const SUBAGENTS: &str = "tests/fixtures/reference-stores/subagents_default_action_ids.ndjson";

fn otel(name: &str) -> String {
    format!("tests/fixtures/otel/{name}")
}

/// `check --format json` on `evidence` with `traces`, as a value, and the exit code.
fn check(evidence: &str, traces: &[&str], extra: &[&str]) -> (i32, Value, String) {
    let keys = if evidence == SUBAGENTS {
        "tests/fixtures/reference-stores/keys.json"
    } else {
        KEYS
    };
    let mut args = vec!["check", "--format", "json", "--keys", keys];
    for t in traces {
        args.extend(["--traces", t]);
    }
    args.extend(extra);
    args.push(evidence);
    let (code, out, err) = aeplens(&args);
    let doc = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    (code, doc, err)
}

/// The capture findings of a check document.
fn capture_findings(doc: &Value) -> Vec<Value> {
    let ids = [
        "F-CAPTURE-GAP",
        "F-UNOBSERVED-ACTION",
        "F-TELEMETRY-MISMATCH",
    ];
    (doc["findings"].as_array().unwrap().iter())
        .filter(|f| ids.contains(&f["id"].as_str().unwrap()))
        .cloned()
        .collect()
}

/// The official SDK, run again, writes exactly the vendored traces and the demo's.
#[test]
fn the_official_sdk_writes_the_vendored_traces() {
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/consumers-venv/bin/python");
    if !py.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing: scripts/test makes it",
            py.display()
        );
        eprintln!("skipped: no {} (scripts/test makes it)", py.display());
        return;
    }
    let out = common::run_dir("otel");
    let status = std::process::Command::new(&py)
        .args(["tests/otel/make_traces.py", out.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 7, "{names:?}");
    for name in &names {
        let made = std::fs::read(out.join(name)).unwrap();
        assert_eq!(
            made,
            std::fs::read(otel(name)).unwrap(),
            "{name} differs from the SDK's"
        );
    }
    let demo = std::fs::read("assets/demo/traces.jsonl").unwrap();
    assert_eq!(demo, std::fs::read(out.join("demo.jsonl")).unwrap());
}

/// The demo's telemetry: every action joined (by call id, or by run, tool and time where
/// the instrumentation left the id out), the 1.5 s clock offset measured, and the one tool
/// call the evidence never recorded a high F-CAPTURE-GAP naming the span.
#[test]
fn the_demo_telemetry_shows_the_call_the_evidence_missed() {
    let (_, doc, _) = check(DEMO, &[&otel("demo.jsonl")], &["--no-index"]);
    let t = &doc["telemetry"];
    assert_eq!(t["clock_offset_ms"], 1500.0);
    assert_eq!(
        t["joined"],
        json!({"span-id": 0, "call-id": 7, "run-tool-time": 2})
    );
    let run = &t["runs"][0];
    assert_eq!(run["run_id"], "run-deploy-0042");
    assert_eq!(run["status"], "gaps");
    assert_eq!(
        (
            run["spans_without_action"].as_u64(),
            run["actions_without_span"].as_u64()
        ),
        (Some(1), Some(0))
    );
    for r in doc["records"].as_array().unwrap() {
        let capture = &r["capture"];
        assert_eq!(capture["evaluated"], true, "{r}");
        let expected = if r["run_id"] == "run-deploy-0042" {
            "gaps"
        } else {
            "complete"
        };
        assert_eq!(capture["status"], expected);
        assert_eq!(capture["witness"], "opentelemetry-traces");
    }
    let found = capture_findings(&doc);
    assert_eq!(found.len(), 1, "{found:#?}");
    let gap = &found[0];
    assert_eq!(gap["id"], "F-CAPTURE-GAP");
    assert_eq!(gap["severity"], "high");
    let span = &gap["evidence"]["span"];
    assert_eq!(span["tool"], "shell_exec");
    assert_eq!(span["span_id"].as_str().unwrap().len(), 16);
    assert_eq!(span["trace_id"].as_str().unwrap().len(), 32);
    let message = gap["message"].as_str().unwrap();
    assert!(
        message.contains("10:08:21.500Z by its clock, 2026-06-06T10:08:20.000Z by the evidence's"),
        "{message}"
    );
    assert_eq!(gap["locations"][0]["path"], otel("demo.jsonl"));
    insta::assert_json_snapshot!(
        "capture_demo_check",
        json!({
            "telemetry": t,
            "capture_findings": found,
        })
    );
}

/// Without --traces nothing is claimed: the capture axis is not evaluated.
#[test]
fn without_telemetry_capture_is_not_evaluated() {
    let (_, doc, _) = check(DEMO, &[], &["--no-index"]);
    assert!(doc.get("telemetry").is_none());
    for r in doc["records"].as_array().unwrap() {
        assert_eq!(r["capture"], json!({"evaluated": false}));
    }
}

/// Each case of the SDK's traces gives its finding, with both sides named.
#[test]
fn a_dropped_span_a_mismatch_and_a_foreign_run() {
    let (_, doc, _) = check(DEMO, &[&otel("dropped.jsonl")], &["--no-index"]);
    let found = capture_findings(&doc);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["id"], "F-UNOBSERVED-ACTION");
    assert_eq!(found[0]["action_ids"], json!(["act-006"]));
    assert_eq!(found[0]["severity"], "medium");

    let (_, doc, _) = check(DEMO, &[&otel("mismatch.jsonl")], &["--no-index"]);
    let found = capture_findings(&doc);
    let ids: Vec<_> = found
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap(),
                f["action_ids"][0].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [
            ("F-TELEMETRY-MISMATCH", "act-003"),
            ("F-TELEMETRY-MISMATCH", "act-004")
        ]
    );
    let m = found[1]["message"].as_str().unwrap();
    assert!(
        m.contains("the span's tool is http_get, the action's http_post"),
        "{m}"
    );
    assert!(
        m.contains("gen_ai.tool.call.id = action id"),
        "the rule that joined them: {m}"
    );
    assert_eq!(
        found[1]["locations"].as_array().unwrap().len(),
        2,
        "the action and the span"
    );
    let m = found[0]["message"].as_str().unwrap();
    assert!(
        m.contains("the span's status is ERROR, the action's outcome success"),
        "{m}"
    );

    let (_, doc, err) = check(DEMO, &[&otel("foreign.jsonl")], &["--no-index"]);
    assert!(capture_findings(&doc).is_empty());
    assert_eq!(
        err.matches("run-deploy-0999").count(),
        1,
        "said once: {err}"
    );
    assert!(err.contains("not in the evidence: not judged"), "{err}");
    assert_eq!(
        doc["telemetry"]["ignored_runs"],
        json!([{"run_id": "run-deploy-0999", "tool_spans": 1}])
    );
}

/// Three emitters in one run, each with the default action ids: each span joined to its
/// own emitter's action (nearest in time, each used once), none mismatched; an extra call
/// fails `check`.
#[test]
fn emitters_sharing_a_run_and_its_default_ids_each_get_their_span() {
    let (code, doc, _) = check(SUBAGENTS, &[&otel("subagents.jsonl")], &["--no-index"]);
    assert_eq!(code, 0, "complete capture of a valid store");
    assert!(
        capture_findings(&doc).is_empty(),
        "{:#?}",
        capture_findings(&doc)
    );
    assert_eq!(doc["telemetry"]["runs"][0]["status"], "complete");
    assert_eq!(doc["telemetry"]["joined"]["call-id"], 6);

    let (code, doc, _) = check(SUBAGENTS, &[&otel("subagents_gap.jsonl")], &["--no-index"]);
    assert_eq!(code, 1, "F-CAPTURE-GAP fails the check");
    let found = capture_findings(&doc);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["evidence"]["span"]["tool"], "delete_document");
}

/// The same calls, each span naming its agent, from a clock 80 s ahead: nearest in time,
/// each would join another emitter's action with the same default id (six false
/// F-TELEMETRY-MISMATCH); the span's own emitter (its `gen_ai.agent.id`, the record's
/// `run_context.agent_id`) comes first, so every span joins its own action and the skew
/// is measured.
#[test]
fn under_a_large_skew_each_span_joins_its_own_emitter() {
    let (code, doc, _) = check(
        SUBAGENTS,
        &[&otel("subagents_skewed.jsonl")],
        &["--no-index"],
    );
    assert_eq!(code, 0, "{:#?}", capture_findings(&doc));
    assert!(
        capture_findings(&doc).is_empty(),
        "{:#?}",
        capture_findings(&doc)
    );
    assert_eq!(doc["telemetry"]["joined"]["call-id"], 6);
    assert_eq!(doc["telemetry"]["clock_offset_ms"], 80000.0);
    assert_eq!(doc["telemetry"]["runs"][0]["status"], "complete");
}

/// The run's own span is its window (analysis-rules §9 amended): with the run's first tool
/// span dropped, its `invoke_agent` span still covers act-001, which is judged like any other
/// action — F-UNOBSERVED-ACTION, the run `gaps` — where a window built from the tool spans
/// alone began after it and read the run `complete`.
#[test]
fn the_run_s_own_span_is_its_window() {
    let (_, doc, _) = check(DEMO, &[&otel("dropped_first.jsonl")], &["--no-index"]);
    let run = &doc["telemetry"]["runs"][0];
    assert_eq!(run["run_id"], "run-deploy-0042");
    assert_eq!(run["status"], "gaps", "{run}");
    assert_eq!(run["actions_without_span"], 1, "{run}");
    assert_eq!(run["not_judged"], 0, "{run}");
    let found = capture_findings(&doc);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["id"], "F-UNOBSERVED-ACTION");
    assert_eq!(found[0]["action_ids"], json!(["act-001"]));
    // The same telemetry with every span: complete.
    let (_, doc, _) = check(DEMO, &[&otel("complete.jsonl")], &["--no-index"]);
    assert_eq!(doc["telemetry"]["runs"][0]["status"], "complete");
}

/// At-least-once delivery: every span the SDK wrote, exported twice (the same trace and
/// span ids again, in a second file and within one), is one tool call each — complete
/// capture stays complete and passes, the demo's one real gap stays one.
#[test]
fn a_span_exported_twice_is_one_span() {
    let dir = common::run_dir("capture-twice");
    std::fs::create_dir_all(&dir).unwrap();
    for (evidence, traces, gaps) in [(SUBAGENTS, "subagents.jsonl", 0), (DEMO, "demo.jsonl", 1)] {
        let text = std::fs::read_to_string(otel(traces)).unwrap();
        let twice = dir.join(traces);
        std::fs::write(&twice, format!("{text}{text}")).unwrap();
        let (code, once_doc, _) = check(evidence, &[&otel(traces)], &["--no-index"]);
        let (code_twice, doc, err) = check(
            evidence,
            &[twice.to_str().unwrap(), &otel(traces)],
            &["--no-index"],
        );
        assert_eq!(code_twice, code, "{traces}: {err}");
        assert_eq!(
            capture_findings(&doc).len(),
            gaps,
            "{traces}: {:#?}",
            capture_findings(&doc)
        );
        assert_eq!(
            doc["telemetry"]["runs"], once_doc["telemetry"]["runs"],
            "{traces}"
        );
        assert_eq!(
            doc["telemetry"]["joined"], once_doc["telemetry"]["joined"],
            "{traces}"
        );
        assert!(err.contains("exported twice"), "{traces}: said: {err}");
    }
}

/// aeplens's own OTLP export, read back as telemetry, is complete: no capture finding.
#[test]
fn the_otlp_export_read_back_is_complete() {
    let (code, spans, err) = aeplens(&["export", "--format", "otlp-json", "--keys", KEYS, DEMO]);
    assert_eq!(code, 0, "{err}");
    let file = common::run_dir("otel-export");
    std::fs::create_dir_all(&file).unwrap();
    let file = file.join("export.jsonl");
    std::fs::write(&file, spans).unwrap();
    let (_, doc, _) = check(DEMO, &[file.to_str().unwrap()], &["--no-index"]);
    assert!(
        capture_findings(&doc).is_empty(),
        "{:#?}",
        capture_findings(&doc)
    );
    for run in doc["telemetry"]["runs"].as_array().unwrap() {
        assert_eq!(run["status"], "complete", "{run}");
    }
    assert_eq!(doc["telemetry"]["joined"]["call-id"], 9);
}

/// A bad document is an error naming file, line and column; the documents after it load.
#[test]
fn a_bad_trace_line_is_named_and_the_rest_loads() {
    let dir = common::run_dir("otel-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(otel("demo.jsonl")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(1, "{\"resourceSpans\": [{\"scopeSpans\": 7}]}");
    let bad = dir.join("bad.jsonl");
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let before = std::fs::read(&bad).unwrap();
    let (_, doc, err) = check(DEMO, &[bad.to_str().unwrap()], &["--no-index"]);
    assert!(err.contains("bad.jsonl:2:"), "{err}");
    assert!(
        err.contains("not an OTLP JSON TracesData document"),
        "{err}"
    );
    assert_eq!(
        doc["telemetry"]["tool_spans"], 10,
        "every other span loaded"
    );
    assert_eq!(
        std::fs::read(&bad).unwrap(),
        before,
        "a trace file is never written to"
    );
    // `--strict` makes a telemetry load error fatal as it does an evidence one; a missing
    // file is one.
    assert_eq!(doc["telemetry"]["load_errors"], 1);
    let (code, _, _) = check(DEMO, &[bad.to_str().unwrap()], &["--no-index", "--strict"]);
    assert_eq!(code, 2);
    let (code, doc, err) = check(DEMO, &["no/such/traces.jsonl"], &["--no-index", "--strict"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no/such/traces.jsonl: cannot read telemetry file"),
        "{err}"
    );
    assert_eq!(doc["telemetry"]["load_errors"], 1);
}

/// The evidence index never answers with telemetry it was not given, nor without
/// telemetry it was given: `findings` and `check` with and without --traces, in turns,
/// on one index, equal the same commands with no index.
#[test]
fn the_index_answers_neither_with_nor_without_telemetry_wrongly() {
    let dir = common::run_dir("otel-index");
    let index = dir.to_str().unwrap();
    let findings = |traces: bool, indexed: bool| {
        let mut args = vec!["findings", "--format", "json", "--keys", KEYS];
        if traces {
            args.extend(["--traces", "tests/fixtures/otel/demo.jsonl"]);
        }
        if indexed {
            args.extend(["--index-dir", index]);
        } else {
            args.push("--no-index");
        }
        args.push(DEMO);
        let (code, out, err) = aeplens(&args);
        assert!(code < 2, "{err}");
        out
    };
    let plain = findings(false, false);
    let traced = findings(true, false);
    assert_ne!(plain, traced);
    for _ in 0..2 {
        assert_eq!(findings(false, true), plain, "without --traces");
        assert_eq!(findings(true, true), traced, "with --traces");
    }
    let (_, with_index, _) = check(DEMO, &[&otel("demo.jsonl")], &["--index-dir", index]);
    let (_, without, _) = check(DEMO, &[&otel("demo.jsonl")], &["--no-index"]);
    assert_eq!(with_index, without);
    let (_, after, _) = check(DEMO, &[], &["--index-dir", index]);
    assert!(after.get("telemetry").is_none());
    assert!(capture_findings(&after).is_empty());
}
