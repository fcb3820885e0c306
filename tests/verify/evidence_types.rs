//! The sibling AEP evidence types (aep-fields §16) are recognised by their required
//! members, named in `check`, checked against their own protocol schema (`schema/aep/`,
//! the copies under `tests/fixtures/ecosystem/aep-evidence-types/` are the originals) and
//! never read as a broken AEP record or a run with no actions; memory ops form a chain
//! per cell.

use crate::common;

use common::*;
use serde_json::{Value, json};

/// `check --format json` of one JSON document written to a scratch file.
fn check_one(name: &str, doc: &Value) -> Value {
    let dir = run_dir("evidence-types");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, doc.to_string()).unwrap();
    let (_, out, err) = aeplens(&[
        "check",
        "--no-index",
        "--format",
        "json",
        &path.display().to_string(),
    ]);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{name}: {e}: {err}"))
}

/// A valid example of every sibling kind, and what to remove to make it invalid.
fn examples() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "checkpoint",
            json!({"checkpoint_id": "cp-1", "state_digest": "sha256:ab", "created_at": "2026-09-17T08:00:00Z", "parent_run_id": "run-1"}),
            "state_digest",
        ),
        (
            "checkpoint-evidence",
            json!({"schema_version": "aep/v0.1", "created_at_ms": 1, "checkpoint_id": "cp-1", "parent_run_id": "run-1", "state_digest": "sha256:ab"}),
            "parent_run_id",
        ),
        (
            "fork",
            json!({"fork_id": "f-1", "source_checkpoint_id": "cp-1", "fork_reason": "retry", "created_at": "2026-09-17T08:00:00Z"}),
            "fork_reason",
        ),
        (
            "memory-evidence",
            json!({"mem_ref": "kv:a", "op": "write", "digest": "sha256:01", "prior_digest": null, "timestamp_ms": 1}),
            "digest",
        ),
        (
            "replay-evidence",
            read_json(
                &fixtures()
                    .join("ecosystem/wasmagent-protocol-tests/valid/replay-evidence/example.json"),
            ),
            "output_digest",
        ),
        (
            "canonical-event",
            json!({"schema_version": "canonical-event/v0.1", "event_id": "e-1", "event_type": "action", "timestamp_ms": 1}),
            "timestamp_ms",
        ),
        (
            "seed",
            read_json(&fixtures().join("ecosystem/aep-evidence-types/seed-valid-example.json")),
            "created_at_ms",
        ),
    ]
}

#[test]
fn every_sibling_kind_is_named_and_checked_against_its_own_schema() {
    for (kind, valid, required) in examples() {
        let r = &check_one(kind, &valid)["records"][0];
        assert_eq!(r["kind"], kind, "{r}");
        assert_eq!(r["structural"]["status"], "pass", "{kind}: {r}");
        // V1–V18 are invariants of records: not evaluated, no status.
        assert_eq!(r["semantic"]["evaluated"], false, "{kind}");
        assert!(r["semantic"].get("status").is_none(), "{kind}");
        let mut invalid = valid.clone();
        invalid.as_object_mut().unwrap().remove(required);
        let r = &check_one(&format!("{kind}-invalid"), &invalid)["records"][0];
        assert_eq!(r["kind"], kind, "{kind} without {required}: {r}");
        assert_eq!(
            r["structural"]["status"], "fail",
            "{kind} without {required}"
        );
        let message = r["structural"]["violations"][0]["message"]
            .as_str()
            .unwrap();
        assert!(
            message.contains(kind) && message.contains(required),
            "{message}"
        );
    }
    // An AEP record is still one.
    let record = read_json(
        &fixtures().join("ecosystem/wasmagent-protocol-tests/valid/aep-record/example.json"),
    );
    assert_eq!(
        check_one("record", &record)["records"][0]["kind"],
        "aep-record"
    );
}

#[test]
fn a_replay_attestation_is_not_a_run_without_actions() {
    // It has a record's run_id, schema_version and created_at_ms, and no actions.
    let path =
        fixtures().join("ecosystem/wasmagent-protocol-tests/valid/replay-evidence/example.json");
    let (_, text, _) = aeplens(&[
        "check",
        "--no-index",
        "--format",
        "text",
        &path.display().to_string(),
    ]);
    let row = text.lines().nth(1).unwrap();
    assert!(row.contains("[replay-evidence]"), "{text}");
    assert!(!row.contains("run-abc123"), "{text}");
}

#[test]
fn memory_ops_form_a_chain_per_cell() {
    let at = |f: &str| {
        fixtures()
            .join("evidence-types")
            .join(f)
            .display()
            .to_string()
    };
    let findings = |f: &str| -> Vec<Value> {
        let (_, out, _) = aeplens(&["findings", "--no-index", "--format", "json", &at(f)]);
        let doc: Value = serde_json::from_str(&out).unwrap();
        doc["findings"].as_array().unwrap().clone()
    };
    assert!(
        findings("memory_cell_intact.ndjson")
            .iter()
            .all(|f| f["id"] != "F-MEMORY-CHAIN-BROKEN")
    );
    let broken: Vec<Value> = findings("memory_cell_broken.ndjson")
        .into_iter()
        .filter(|f| f["id"] == "F-MEMORY-CHAIN-BROKEN")
        .collect();
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert_eq!(broken[0]["severity"], "high");
    assert_eq!(broken[0]["evidence"]["mem_ref"], "kv:session/42");
    assert_eq!(broken[0]["locations"][0]["line"], 3);
}

#[test]
fn a_signed_sibling_is_verified_over_its_own_bytes() {
    use aeplens::canon::{CHAIN_EXCLUDED, Variant, canonical_bytes_without};
    use base64::Engine;
    use ed25519_dalek::{Signer, SigningKey};
    // A signed checkpoint (S1: Ed25519 over its C1 bytes without `signature`).
    let key = SigningKey::from_bytes(&[9u8; 32]);
    let mut doc = json!({
        "schema_version": "aep/v0.1",
        "created_at_ms": 1_789_632_000_000_u64,
        "checkpoint_id": "cp-7",
        "parent_run_id": "run-7",
        "state_digest": "sha256:77",
    });
    let json = aeplens::load::parser::parse(&doc.to_string()).unwrap();
    let bytes = canonical_bytes_without(&json, CHAIN_EXCLUDED, Variant::C1);
    let sig = base64::engine::general_purpose::STANDARD.encode(key.sign(&bytes).to_bytes());
    doc["signature"] = json!({"alg": "ed25519", "key_id": "cp-key", "sig": sig});
    let dir = run_dir("evidence-types-signed");
    std::fs::create_dir_all(&dir).unwrap();
    let public = aeplens::canon::hex(key.verifying_key().as_bytes());
    let check = |name: &str, doc: &Value| -> Value {
        let path = dir.join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        let key = format!("cp-key={public}");
        let args = ["check", "--no-index", "--format", "json", "--key", &key];
        let (_, out, _) = aeplens(&[&args[..], &[path.to_str().unwrap()]].concat());
        serde_json::from_str::<Value>(&out).unwrap()["records"][0].clone()
    };
    let r = check("signed.json", &doc);
    assert_eq!(r["kind"], "checkpoint-evidence");
    assert_eq!(r["authenticity"]["status"], "valid", "{r}");
    // Edited after signing: the signature no longer holds.
    let mut edited = doc.clone();
    edited["state_digest"] = "sha256:78".into();
    let r = check("edited.json", &edited);
    assert_eq!(r["kind"], "checkpoint-evidence");
    assert_eq!(r["authenticity"]["status"], "invalid", "{r}");
}

/// The raw JSON objects of an NDJSON file, with their 1-based lines.
fn raw_lines(path: &std::path::Path) -> Vec<(usize, Value)> {
    (std::fs::read_to_string(path).unwrap().lines().enumerate())
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, serde_json::from_str(l).unwrap()))
        .collect()
}

#[test]
fn every_edge_between_evidence_types_is_resolved_across_inputs() {
    let run = fixtures().join("reference/v03.ndjson");
    let siblings = fixtures().join("evidence-types/devfix_siblings.ndjson");
    let (run_arg, sib_arg) = (run.display().to_string(), siblings.display().to_string());
    let (_, out, err) = aeplens(&[
        "check",
        "--no-index",
        "--format",
        "json",
        &run_arg,
        &sib_arg,
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    // What each name is held by, read here from the raw lines: (target, name) → (file, line).
    let mut held: Vec<(&str, String, String, usize)> = Vec::new();
    for (path, arg) in [(&run, &run_arg), (&siblings, &sib_arg)] {
        for (line, v) in raw_lines(path) {
            let name = |k: &str| v[k].as_str().map(str::to_string);
            let target = if v.get("actions").is_some() {
                name("run_id").map(|n| ("run", n))
            } else if v.get("mem_ref").is_some() {
                name("mem_ref").map(|n| ("memory-evidence", n))
            } else if v.get("checkpoint_id").is_some() {
                name("checkpoint_id").map(|n| ("checkpoint", n))
            } else if v.get("event_id").is_some() {
                name("event_id").map(|n| ("canonical-event", n))
            } else {
                None
            };
            if let Some((t, n)) = target {
                held.push((t, n, arg.clone(), line));
            }
        }
    }
    let expect = |to: &str, value: &str| -> (usize, Value) {
        let hits: Vec<_> = held.iter().filter(|h| h.0 == to && h.1 == value).collect();
        let first = hits
            .first()
            .map_or(Value::Null, |h| json!({"path": h.2, "line": h.3}));
        (hits.len(), first)
    };
    // Every edge the fixture's siblings and the run's actions name, from the raw lines.
    let mut wanted: Vec<(String, usize, String, String, &str)> = Vec::new();
    let edges: [(&str, &str, &str); 8] = [
        ("fork_id", "source_checkpoint_id", "checkpoint"),
        ("fork_id", "parent_run_id", "run"),
        ("checkpoint_id", "parent_run_id", "run"),
        ("checkpoint_id", "fork_of", "checkpoint"),
        ("seed", "run_id", "run"),
        ("event_id", "run_id", "run"),
        ("event_id", "parent_event_id", "canonical-event"),
        ("mem_ref", "", ""),
    ];
    for (line, v) in raw_lines(&siblings) {
        for (mark, member, to) in edges {
            if v.get(mark).is_some()
                && let Some(value) = v.get(member).and_then(Value::as_str)
            {
                wanted.push((sib_arg.clone(), line, member.into(), value.into(), to));
            }
        }
    }
    for (line, v) in raw_lines(&run) {
        for (a, action) in v["actions"].as_array().unwrap().iter().enumerate() {
            for list in ["memory_read_refs", "memory_write_refs"] {
                for r in action[list].as_array().into_iter().flatten() {
                    let member = format!("actions[{a}].{list}");
                    let value = r.as_str().unwrap().to_string();
                    wanted.push((run_arg.clone(), line, member, value, "memory-evidence"));
                }
            }
        }
    }
    assert!(wanted.len() >= 10, "{wanted:?}");
    let records = doc["records"].as_array().unwrap();
    let mut seen = 0;
    for r in records {
        let at = (
            r["source"]["path"].as_str().unwrap(),
            r["source"]["line"].as_u64().unwrap(),
        );
        for l in r["links"].as_array().into_iter().flatten() {
            let (found, first) = expect(l["to"].as_str().unwrap(), l["value"].as_str().unwrap());
            assert_eq!(l["found"], found, "{l}");
            assert_eq!(l["first"]["path"], first["path"], "{l}");
            assert_eq!(l["first"]["line"], first["line"], "{l}");
            let member = l["member"].as_str().unwrap();
            assert!(
                wanted.iter().any(|w| (w.0.as_str(), w.1 as u64) == at
                    && w.2 == member
                    && w.3 == l["value"]
                    && w.4 == l["to"]),
                "an edge not in the raw lines: {l}"
            );
            seen += 1;
        }
    }
    assert_eq!(
        seen,
        wanted.len(),
        "every edge of the raw lines is reported"
    );
    // The fork's checkpoint is found, the other fork's is not, and says so.
    let text = aeplens(&[
        "check",
        "--no-index",
        "--format",
        "text",
        &run_arg,
        &sib_arg,
    ])
    .1;
    assert!(
        text.contains(
            "source_checkpoint_id → checkpoint cp-not-loaded: not in the evidence loaded"
        ),
        "{text}"
    );
    assert!(
        text.contains("parent_run_id → run run-devfix-ledger-0417: 3 records, first"),
        "{text}"
    );
}

#[test]
fn sibling_records_are_no_run_and_are_named_in_the_report() {
    let run = fixtures()
        .join("reference/v03.ndjson")
        .display()
        .to_string();
    let sib = (fixtures().join("evidence-types/devfix_siblings.ndjson"))
        .display()
        .to_string();
    let envelopes = |paths: &[&str]| -> Vec<Value> {
        let mut args = vec!["envelope", "--no-index"];
        args.extend(paths);
        let out = aeplens(&args).1;
        out.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    // The replay attestation and the event name the run: still the run's actions alone.
    assert_eq!(envelopes(&[&run, &sib]).len(), envelopes(&[&run]).len());
    let (_, out, _) = aeplens(&["report", "--no-index", "--format", "json", &run, &sib]);
    let report: Value = serde_json::from_str(&out).unwrap();
    let kinds: Vec<&str> = report["other_evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "checkpoint",
            "fork",
            "fork",
            "replay-evidence",
            "memory-evidence",
            "memory-evidence",
            "canonical-event"
        ]
    );
    let md = aeplens(&["report", "--no-index", &run, &sib]).1;
    assert!(md.contains("## Other evidence"), "{md}");
    assert!(md.contains("| replay-evidence | ○ not-checked"), "{md}");
}
