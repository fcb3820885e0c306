//! A record's verdict travels with every action handed over: each envelope line, each
//! chain step and each `show` carries the verdict `check` gives the record the action is
//! shown from — its authenticity and key id, its chain status, its place — and `✓` is
//! never the glyph of a record that does not verify.

use crate::common;

use common::*;
use serde_json::Value;
use std::collections::HashMap;

/// `check`'s verdict of every record, by `file:line`.
fn checked(evidence: &[String]) -> HashMap<String, Value> {
    let (_, out, err) = aeplens(
        &[
            &["check", "--no-index", "--format", "json"],
            &refs(evidence)[..],
        ]
        .concat(),
    );
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    (doc["records"].as_array().unwrap().iter())
        .map(|r| {
            let at = format!(
                "{}:{}",
                r["source"]["path"].as_str().unwrap(),
                r["source"]["line"]
            );
            (at, r.clone())
        })
        .collect()
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Asserts a `verdict` member says what `check` says of its record.
fn agrees(verdict: &Value, records: &HashMap<String, Value>, what: &str) {
    let at = verdict["record"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: no verdict"));
    let r = &records[at];
    let auth = &r["authenticity"];
    assert_eq!(
        verdict["authenticity"],
        auth["status"]
            .as_str()
            .map_or(Value::from("not-checked"), Value::from),
        "{what} at {at}"
    );
    assert_eq!(verdict["key_id"], auth["key_id"], "{what} at {at}");
    assert_eq!(verdict["chain"], r["chain"]["status"], "{what} at {at}");
    assert_eq!(
        verdict["structural"], r["structural"]["status"],
        "{what} at {at}"
    );
    assert_eq!(
        verdict["semantic"], r["semantic"]["status"],
        "{what} at {at}"
    );
}

fn sets() -> Vec<Vec<String>> {
    let f = |p: &str| fixtures().join(p).display().to_string();
    vec![
        vec![
            "--keys".into(),
            "assets/demo/keys.json".into(),
            "assets/demo/evidence".into(),
        ],
        vec![
            "--keys".into(),
            f("reference-stores/keys.json"),
            f("reference-stores"),
        ],
        vec!["--keys".into(), f("reference/keys.json"), f("reference")],
        // No keys: nothing is verified, and nothing may say so.
        vec![f("reference-stores")],
    ]
}

#[test]
fn every_envelope_line_and_chain_step_carries_its_records_verdict() {
    for evidence in sets() {
        let records = checked(&evidence);
        let (_, out, _) = aeplens(&[&["envelope", "--no-index"], &refs(&evidence)[..]].concat());
        let mut lines = 0;
        for line in out.lines() {
            let e: Value = serde_json::from_str(line).unwrap();
            agrees(
                &e["verdict"],
                &records,
                &format!("envelope {}", e["action_id"]),
            );
            lines += 1;
        }
        assert!(lines > 5, "{evidence:?}");
        let (_, out, _) = aeplens(
            &[
                &["chains", "--no-index", "--format", "json"],
                &refs(&evidence)[..],
            ]
            .concat(),
        );
        let doc: Value = serde_json::from_str(&out).unwrap();
        for chain in doc["chains"].as_array().unwrap() {
            for step in chain["steps"].as_array().unwrap() {
                agrees(
                    &step["verdict"],
                    &records,
                    &format!("chain step {}", step["action_id"]),
                );
            }
        }
    }
}

#[test]
fn an_action_of_a_record_edited_after_signing_never_reads_verified() {
    // The demo's act-003 (re-approved after a deny) is shown from the record edited after
    // signing: show, chains and the report say so.
    let demo = ["--keys", "assets/demo/keys.json", "assets/demo/evidence"];
    let show = |format: &str| {
        let args = [
            "show",
            "act-003",
            "--run",
            "run-deploy-0042",
            "--no-index",
            "--format",
            format,
        ];
        aeplens(&[&args[..], &demo[..]].concat()).1
    };
    let doc: Value = serde_json::from_str(&show("json")).unwrap();
    assert_eq!(doc["verdict"]["authenticity"], "invalid");
    assert_eq!(
        doc["verdict"]["record"],
        "assets/demo/evidence/incident.ndjson:2"
    );
    let text = show("text");
    assert!(
        text.contains("its record: ✗ invalid (key demo-deploy-key-1)"),
        "{text}"
    );
    let (_, chains, _) =
        aeplens(&[&["chains", "--no-index", "--format", "text"], &demo[..]].concat());
    let step = chains.lines().find(|l| l.contains(" act-003 ")).unwrap();
    assert!(step.trim_start().starts_with("└─ ✗ act-003"), "{step}");
    assert!(
        step.contains("record invalid (key demo-deploy-key-1)"),
        "{step}"
    );
    // A ✓ leads a step only when its record verifies.
    for line in chains.lines().filter(|l| l.contains("· record ")) {
        assert_eq!(
            line.contains("✓ "),
            line.contains("· record valid"),
            "{line}"
        );
    }
    // Without keys nothing verifies: no ✓ anywhere.
    let (_, chains, _) = aeplens(&[
        "chains",
        "--no-index",
        "--format",
        "text",
        "assets/demo/evidence",
    ]);
    assert!(!chains.contains('✓'), "{chains}");
    assert!(
        chains.contains("not-checked (key demo-deploy-key-1: not in the keyring)"),
        "{chains}"
    );
}

#[test]
fn diff_says_which_records_stopped_verifying_and_exits_1() {
    let stores = fixtures().join("reference-stores");
    let keys = stores.join("keys.json").display().to_string();
    let at = |f: &str| stores.join(f).display().to_string();
    let run = |a: &str, b: &str| {
        aeplens(&[
            "diff",
            "--no-index",
            "--format",
            "json",
            "--keys",
            &keys,
            &at(a),
            &at(b),
        ])
    };
    // The same records with their envelopes or signatures swapped (the same canonical
    // hashes): every one of them stopped verifying.
    let (code, out, err) = run("dsse_source_chain.ndjson", "tampered_dsse_envelopes.ndjson");
    assert_eq!(code, 1, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let v = &doc["verification"];
    assert_eq!(v["worse"], true);
    assert_eq!(v["records_compared"], 4);
    let stopped = (v["changed"].as_array().unwrap().iter())
        .filter(|c| {
            c["what"]
                .as_array()
                .unwrap()
                .contains(&"stopped-verifying".into())
        })
        .count();
    assert_eq!(stopped, 4, "{v}");
    for c in doc["changed"].as_array().unwrap() {
        assert_eq!(c["records"][0]["authenticity"], "valid");
        assert_ne!(c["records"][1]["authenticity"], "valid");
    }
    // The other way round verification got better: exit 0.
    let (code, out, _) = run("tampered_dsse_envelopes.ndjson", "dsse_source_chain.ndjson");
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["verification"]["worse"], false);
    // A store against itself: nothing judged differently.
    let (code, out, _) = run("dsse_source_chain.ndjson", "dsse_source_chain.ndjson");
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["verification"]["changed"].as_array().unwrap().len(), 0);
}

#[test]
fn every_timeline_export_carries_each_actions_record_verdict() {
    let demo = [
        "--no-index",
        "--keys",
        "assets/demo/keys.json",
        "assets/demo/evidence",
    ];
    let records = checked(
        &demo[1..]
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
    );
    let valid = |at: &str| records[at]["authenticity"]["status"] == "valid";
    let (_, out, _) = aeplens(&[&["export", "--format", "timesketch"], &demo[..]].concat());
    let mut events = 0;
    for line in out.lines() {
        let e: Value = serde_json::from_str(line).unwrap();
        let at = e["source"].as_str().unwrap();
        assert_eq!(e["record.authenticity"] == "valid", valid(at), "{e}");
        assert!(e["chain.head"].is_string(), "{e}");
        events += 1;
    }
    assert!(events > 5);
    let (_, out, _) = aeplens(&[&["export", "--format", "otlp-json"], &demo[..]].concat());
    let doc: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap();
    let tool_spans: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"].as_str().unwrap().starts_with("execute_tool"))
        .collect();
    assert!(!tool_spans.is_empty());
    for span in tool_spans {
        let attr = |k: &str| {
            (span["attributes"].as_array().unwrap().iter())
                .find(|a| a["key"] == k)
                .map(|a| a["value"]["stringValue"].clone())
        };
        let at = attr("aep.source").unwrap();
        let auth = attr("aep.record.authenticity").unwrap();
        assert_eq!(auth == "valid", valid(at.as_str().unwrap()), "{span}");
    }
}
