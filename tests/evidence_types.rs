//! The sibling AEP evidence types (aep-fields §16) are recognised by their required
//! members, named in `check`, checked against their own protocol schema (`schema/aep/`,
//! the copies under `tests/fixtures/ecosystem/aep-evidence-types/` are the originals) and
//! never read as a broken AEP record or a run with no actions; memory ops form a chain
//! per cell.

mod common;

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
