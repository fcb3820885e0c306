//! `aeplens export`: the demo's action graph pinned in both formats, rendered by Graphviz,
//! hostile labels inert, and evidence files never overwritten.

use crate::common;

use common::aeplens;

use std::process::Command;

const DEMO: [&str; 4] = [
    "--keys",
    "assets/demo/keys.json",
    "--leases",
    "assets/demo/leases.ndjson",
];

fn export(format: &str, extra: &[&str], path: &str) -> String {
    let mut args = vec!["export", "--format", format];
    args.extend_from_slice(extra);
    args.push(path);
    let (code, out, err) = aeplens(&args);
    assert_eq!(code, 0, "{err}");
    out
}

#[test]
fn demo_graph_in_both_formats() {
    let mut demo = DEMO.to_vec();
    let dot = export("dot", &demo, "assets/demo/evidence");
    insta::assert_snapshot!("demo_dot", dot);
    let mermaid = export("mermaid", &demo, "assets/demo/evidence");
    insta::assert_snapshot!("demo_mermaid", mermaid);
    // The deny→re-approval of the incident is the one bold edge.
    assert_eq!(
        mermaid.matches("== re-approved ==>").count(),
        1,
        "{mermaid}"
    );
    // --run keeps one cluster.
    demo.extend(["--run", "run-deploy-0043"]);
    let one = export("mermaid", &demo, "assets/demo/evidence");
    assert_eq!(one.matches("subgraph").count(), 1, "{one}");
    let (code, _, err) = aeplens(&[
        "export",
        "--format",
        "dot",
        "--run",
        "nope",
        "assets/demo/evidence",
    ]);
    assert_eq!(code, 3, "{err}");
}

/// Graphviz renders what `export` writes (scripts/test installs it).
#[test]
fn graphviz_renders_the_dot() {
    if Command::new("dot").arg("-V").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "Graphviz (dot) is missing in CI"
        );
        eprintln!("skipped: Graphviz not installed (scripts/test installs it)");
        return;
    }
    for path in ["assets/demo/evidence", "tests/fixtures/rfc-final/evidence"] {
        let dot = export("dot", &[], path);
        let mut child = Command::new("dot")
            .arg("-Tsvg")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(dot.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let svg = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(svg.contains("<svg"), "{path}");
    }
}

#[test]
fn hostile_labels_stay_labels_and_evidence_is_never_overwritten() {
    let dir = common::run_dir("export");
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("evil.ndjson");
    let record = serde_json::json!({
        "schema_version": "aep/v0.3",
        "run_id": "run\"]; evil[\"x",
        "actions": [{
            "action_id": "a\"]\n<script>alert(1)</script> \u{1b}[2J",
            "tool_name": "t\\\"}; digraph x {",
            "timestamp_ms": 1,
        }],
    });
    std::fs::write(&store, format!("{record}\n")).unwrap();
    let path = store.to_str().unwrap();
    let mermaid = export("mermaid", &[], path);
    assert!(
        !mermaid.contains("<script>") && !mermaid.contains('\u{1b}'),
        "{mermaid}"
    );
    assert!(!mermaid.contains("evil[\""), "{mermaid}");
    let dot = export("dot", &[], path);
    assert_eq!(
        dot.lines()
            .filter(|l| l.trim_start().starts_with("digraph"))
            .count(),
        1,
        "{dot}"
    );
    assert!(!dot.contains('\u{1b}'), "{dot}");
    if Command::new("dot").arg("-V").output().is_ok() {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{} export --format dot {path} | dot -Tsvg >/dev/null",
                env!("CARGO_BIN_EXE_aeplens")
            ))
            .status()
            .unwrap();
        assert!(out.success(), "Graphviz rejects the escaped labels");
    }
    let before = std::fs::read(&store).unwrap();
    let (code, _, err) = aeplens(&["export", "--format", "dot", "-o", path, path]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("never writes evidence"), "{err}");
    assert_eq!(std::fs::read(&store).unwrap(), before);
    let out = dir.join("graph.dot");
    let (code, _, err) = aeplens(&[
        "export",
        "--format",
        "dot",
        "-o",
        out.to_str().unwrap(),
        path,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .starts_with("// aeplens export")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The timeline formats: pinned on the demo, and each shaped as its consumer needs it.
#[test]
fn timeline_formats_for_timesketch_perfetto_and_otlp() {
    let demo = ["--leases", "assets/demo/leases.ndjson"];
    let jsonl = export("timesketch", &demo, "assets/demo/evidence");
    insta::assert_snapshot!("demo_timesketch", jsonl);
    let events: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 9, "every timed action of the demo");
    for e in &events {
        for field in ["message", "datetime", "timestamp_desc"] {
            assert!(e[field].is_string(), "Timesketch needs {field}: {e}");
        }
    }
    let trace: serde_json::Value =
        serde_json::from_str(&export("chrome-trace", &demo, "assets/demo/evidence")).unwrap();
    insta::assert_json_snapshot!("demo_chrome_trace", trace);
    let list = trace["traceEvents"].as_array().unwrap();
    let phases = |ph: &str| list.iter().filter(|e| e["ph"] == ph).count();
    assert_eq!(phases("s"), 1, "one deny→re-approval flow");
    assert_eq!(phases("f"), 1);
    assert!(
        list.iter()
            .any(|e| e["name"] == "lease lease-0007" && e["dur"].as_f64() == Some(300_000_000.0))
    );
    // One TracesData line per run.
    let otlp: Vec<serde_json::Value> = export("otlp-json", &demo, "assets/demo/evidence")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(otlp.len(), 3, "a line per run");
    insta::assert_json_snapshot!("demo_otlp", otlp);
    let spans: Vec<&serde_json::Value> = (otlp.iter())
        .flat_map(|t| {
            t["resourceSpans"][0]["scopeSpans"][0]["spans"]
                .as_array()
                .unwrap()
        })
        .collect();
    let ids: std::collections::HashSet<&str> = spans
        .iter()
        .map(|s| s["spanId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), spans.len(), "span ids are unique");
    for s in &spans {
        assert_eq!(s["traceId"].as_str().unwrap().len(), 32);
        assert_eq!(s["spanId"].as_str().unwrap().len(), 16);
        if let Some(p) = s["parentSpanId"].as_str() {
            assert!(ids.contains(p), "parent span {p} exists");
        }
    }
    let tool_spans = spans
        .iter()
        .filter(|s| s["name"].as_str().unwrap().starts_with("execute_tool"))
        .count();
    assert_eq!(tool_spans, 9);
}
