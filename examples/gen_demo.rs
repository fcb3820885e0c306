//! Writes the bundled demo incident to `assets/demo/` (deterministic: regenerating gives
//! the same bytes):
//!
//! ```text
//! cargo run --example gen_demo
//! ```
//! A deploy agent over two runs: reads, a database write denied for argument drift and
//! re-approved, a one-shot approval, writes under a bounded lease, state digests, and a
//! record edited after signing in the middle of the chain.

use aeplens::model::json::Json;
use aeplens::verify::sign::{link_to, sign_legacy, signing_key, to_line};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::fmt::Write as _;

const KEY_ID: &str = "demo-deploy-key-1";
const T0: u64 = 1_780_740_120_000; // 2026-06-06 10:02:00 UTC

fn d(label: &str) -> String {
    format!(
        "sha256:{}",
        aeplens::canon::hex(&Sha256::digest(label.as_bytes()))
    )
}

fn decision(cap: &str, resource: &str, decision: &str, mode: &str) -> serde_json::Value {
    json!({ "capability": cap, "subject": "agent:deploy-bot", "resource": resource,
            "decision": decision, "reason_code": if decision == "deny" { "DENY_DRIFT" } else { "ALLOW" },
            "approval_mode": mode })
}

fn action(id: &str, tool: &str, t: u64, class: &str, dec: serde_json::Value) -> serde_json::Value {
    json!({ "action_id": id, "tool_name": tool, "state_changing": class != "read", "timestamp_ms": T0 + t,
            "side_effect_class": class, "recording_mode": "full", "evidence_refs": [],
            "arguments_digest": d(&format!("args:{id}")), "capability_decision": dec })
}

fn main() {
    let seed: [u8; 32] = Sha256::digest(b"aeplens-demo-key").into();
    let key = signing_key(&seed);
    let mut a: Vec<serde_json::Value> = vec![
        action(
            "act-001",
            "read_file",
            0,
            "read",
            decision(
                "fs.read",
                "repo://orders-svc/deploy.yaml",
                "allow",
                "policy-allow-with-receipt",
            ),
        ),
        action(
            "act-002",
            "sql_exec",
            4_000,
            "mutate-external",
            decision(
                "db.write",
                "db://prod-orders/orders",
                "deny",
                "re-approval-on-drift",
            ),
        ),
        action(
            "act-003",
            "sql_exec",
            61_000,
            "mutate-external",
            decision(
                "db.write",
                "db://prod-orders/orders",
                "allow",
                "one-shot-payload",
            ),
        ),
        action(
            "act-004",
            "write_file",
            65_000,
            "mutate-local",
            decision("fs.write", "sandbox://deploy/out", "allow", "bounded-lease"),
        ),
        action(
            "act-005",
            "write_file",
            390_000,
            "mutate-local",
            decision("fs.write", "sandbox://deploy/out", "allow", "bounded-lease"),
        ),
    ];
    a[1]["capability_decision"]["deny_reason_class"] = json!("argument");
    a[1]["argument_drift"] = json!({ "detected": true, "approved_args_digest": d("args:approved"),
        "observed_args_digest": d("args:act-002"), "resolution": "denied" });
    a[1]["outcome"] = json!("denied");
    a[2]["parent_action_id"] = json!("act-002");
    a[2]["approval_context_hash"] = json!(d("approval:act-003"));
    a[2]["argument_drift"] = json!({ "detected": false, "approved_args_digest": d("args:act-003"),
        "observed_args_digest": d("args:act-003"), "resolution": "matched" });
    a[2]["outcome"] = json!("success");
    a[2]["exit_code"] = json!(0);
    for (i, x) in a.iter_mut().enumerate().skip(3) {
        x["scope_lease_id"] = json!("lease-0007");
        x["state_digest_kind"] = json!("memory-bag");
        x["state_digest_coverage"] =
            json!({ "namespace": "deploy-cache", "durable_vs_scratch": "mixed" });
        x["pre_state_digest"] = json!(d(&format!("pre:{i}")));
        x["post_state_digest"] = json!(d(&format!("post:{i}")));
        x["outcome"] = json!("success");
    }
    let mut out = String::new();
    let mut previous: Option<Json> = None;
    // Run 1: one emitter, actions accumulate across three emits.
    for (n, upto) in [(0, 2), (1, 3), (2, 5)] {
        let actions: Vec<_> = a[..upto].to_vec();
        let record = json!({ "schema_version": "aep/v0.3", "run_id": "run-deploy-0042", "user_id": "user:alice",
            "created_at_ms": T0 + 400_000 + n * 1000, "policy_bundle_digest": d("policy:v12"),
            "input_refs": [], "output_refs": [], "capability_decisions": [], "verifier_results": [],
            "actions": actions, "run_side_effect_class_max": "mutate-external" });
        let mut record = Json::from_serde(&record);
        link_to(&mut record, previous.as_ref());
        sign_legacy(&mut record, KEY_ID, &key);
        let mut line = to_line(&record);
        if n == 1 {
            // Edited after signing: the signature breaks, and so does the next link.
            line = line.replace("\"tool_name\":\"read_file\"", "\"tool_name\":\"read_fil3\"");
        }
        writeln!(out, "{line}").unwrap();
        previous = Some(record);
    }
    // Run 2: a second emitter starts its own chain.
    let run2 = json!({ "schema_version": "aep/v0.3", "run_id": "run-deploy-0043", "user_id": "user:alice",
        "created_at_ms": T0 + 900_000, "input_refs": [], "output_refs": [], "capability_decisions": [],
        "verifier_results": [], "actions": [action("act-001", "http_get", 880_000, "network-egress",
            decision("net.get", "https://status.example.com", "allow", "policy-allow-with-receipt"))],
        "run_side_effect_class_max": "network-egress" });
    let mut run2 = Json::from_serde(&run2);
    link_to(&mut run2, None);
    sign_legacy(&mut run2, KEY_ID, &key);
    writeln!(out, "{}", to_line(&run2)).unwrap();

    // An output directory may be given (tests regenerate into a temporary one).
    let dir = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo"));
    std::fs::create_dir_all(dir.join("evidence")).unwrap();
    std::fs::write(dir.join("evidence/incident.ndjson"), out).unwrap();
    let keys = format!(
        "{{\n  \"{KEY_ID}\": \"{}\"\n}}\n",
        aeplens::canon::hex(key.verifying_key().as_bytes())
    );
    std::fs::write(dir.join("keys.json"), keys).unwrap();
    eprintln!("wrote {}", dir.display());
}
