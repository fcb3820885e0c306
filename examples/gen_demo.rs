//! Writes the bundled demo incident to `assets/demo/` (deterministic: regenerating gives
//! the same bytes):
//!
//! ```text
//! cargo run --example gen_demo
//! ```
//! A deploy agent over three runs: a read, a database write denied for argument drift
//! and re-approved, a one-shot approval, writes under a bounded lease whose last write
//! lands after expiry (the lease file `leases.ndjson` says so), a state gap between two
//! writes, a mixed memory digest that is not comparable, a rollback denied by policy, and
//! a record edited after signing in the middle of the chain.
#![allow(
    clippy::needless_pass_by_value,
    reason = "json!-built arguments read best passed by value"
)]

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

fn set(v: &mut serde_json::Value, pairs: serde_json::Value) {
    for (k, x) in pairs.as_object().unwrap() {
        v[k] = x.clone();
    }
}

fn main() {
    let seed: [u8; 32] = Sha256::digest(b"aeplens-demo-key").into();
    let key = signing_key(&seed);
    let lease = "lease-0007";
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
                "re-approval-on-drift",
            ),
        ),
        action(
            "act-004",
            "http_post",
            64_000,
            "network-egress",
            decision(
                "net.post",
                "https://hooks.example.com/deploys",
                "allow",
                "one-shot-payload",
            ),
        ),
        action(
            "act-005",
            "write_file",
            65_000,
            "mutate-local",
            decision("fs.write", "sandbox://deploy/out", "allow", "bounded-lease"),
        ),
        action(
            "act-006",
            "write_file",
            130_000,
            "mutate-local",
            decision("fs.write", "sandbox://deploy/out", "allow", "bounded-lease"),
        ),
        action(
            "act-007",
            "write_file",
            390_000,
            "mutate-local",
            decision("fs.write", "sandbox://deploy/out", "allow", "bounded-lease"),
        ),
    ];
    // The drift denial and its re-approval (a new action carrying its own approval).
    a[1]["capability_decision"]["deny_reason_class"] = json!("argument");
    set(
        &mut a[1],
        json!({ "approval_context_hash": d("approval:act-002"), "outcome": "denied",
        "argument_drift": { "detected": true, "approved_args_digest": d("args:approved"),
            "observed_args_digest": d("args:act-002"), "resolution": "denied" } }),
    );
    let rowset = json!({ "database_id": "prod-orders", "schema": "public", "table": "orders",
        "query_hash": d("q:orders-open"), "snapshot_id": "lsn:0/1A2B3C4" });
    set(
        &mut a[2],
        json!({ "parent_action_id": "act-002", "approval_context_hash": d("approval:act-003"),
        "argument_drift": { "detected": false, "approved_args_digest": d("args:act-003"),
            "observed_args_digest": d("args:act-003"), "resolution": "matched" },
        "outcome": "success", "exit_code": 0, "result_digest": d("result:act-003"),
        "state_digest_kind": "db-rowset", "state_digest_coverage": rowset,
        "pre_state_digest": d("orders:before"), "post_state_digest": d("orders:after") }),
    );
    // A one-shot approval bound to the payload.
    set(
        &mut a[3],
        json!({ "approval_context_hash": d("approval:act-004"), "outcome": "success",
        "exit_code": 0 }),
    );
    // Writes under a bounded lease; the last lands after the lease expired.
    let sandbox = json!({ "base_image_digest": d("image:deploy-runner"), "sandbox_root": "/deploy/out",
        "include_predicates": ["**"], "exclude_predicates": [], "symlink_policy": "no-follow",
        "generated_paths_included": false });
    for (i, x) in a.iter_mut().enumerate().skip(4) {
        set(
            x,
            json!({ "scope_lease_id": lease, "outcome": "success", "causal_chain_id": "cc-render-config" }),
        );
        if i < 6 {
            set(
                x,
                json!({ "state_digest_kind": "sandbox-fs", "state_digest_coverage": sandbox }),
            );
        }
    }
    // act-006 starts from a state act-005 did not leave: something changed in between.
    set(
        &mut a[4],
        json!({ "pre_state_digest": d("out:v1"), "post_state_digest": d("out:v2") }),
    );
    set(
        &mut a[5],
        json!({ "pre_state_digest": d("out:v2-edited"), "post_state_digest": d("out:v3") }),
    );
    // A mixed durable/scratch memory digest without a partition: not comparable.
    set(
        &mut a[6],
        json!({ "state_digest_kind": "memory-bag",
        "state_digest_coverage": { "namespace": "deploy-cache", "durable_vs_scratch": "mixed" },
        "pre_state_digest": d("cache:pre"), "post_state_digest": d("cache:post") }),
    );
    let mut out = String::new();
    let mut previous: Option<Json> = None;
    // Run 1: one emitter, actions accumulate across three emits.
    for (n, upto) in [(0, 2), (1, 4), (2, 7)] {
        let actions: Vec<_> = a[..upto].to_vec();
        let max = if upto > 3 {
            "network-egress"
        } else {
            "mutate-external"
        };
        let record = json!({ "schema_version": "aep/v0.3", "run_id": "run-deploy-0042", "user_id": "user:alice",
            "created_at_ms": T0 + 400_000 + n * 1000, "policy_bundle_digest": d("policy:v12"),
            "run_context": { "agent_id": "deploy-bot", "delegation_chain": ["user:alice", "agent:deploy-bot"] },
            "input_refs": [], "output_refs": [], "capability_decisions": [], "verifier_results": [],
            "actions": actions, "run_side_effect_class_max": max });
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
    // Run 2: a second emitter checks the rollout.
    let mut check = action(
        "act-001",
        "http_get",
        880_000,
        "read",
        decision(
            "net.get",
            "https://status.example.com/orders-svc",
            "allow",
            "policy-allow-with-receipt",
        ),
    );
    set(
        &mut check,
        json!({ "outcome": "success", "exit_code": 0, "result_digest": d("status:green") }),
    );
    // Run 3: a rollback attempt denied by policy and abandoned.
    let mut rollback = action(
        "act-001",
        "kubectl_rollout_undo",
        905_000,
        "mutate-external",
        decision(
            "k8s.rollout",
            "k8s://prod/orders-svc",
            "deny",
            "policy-deny-with-evidence",
        ),
    );
    rollback["capability_decision"]["deny_reason_class"] = json!("policy-rule");
    set(&mut rollback, json!({ "outcome": "denied" }));
    for (run, t, act) in [
        ("run-deploy-0043", 900_000, check),
        ("run-deploy-0044", 910_000, rollback),
    ] {
        let class = act["side_effect_class"].clone();
        let record = json!({ "schema_version": "aep/v0.3", "run_id": run, "user_id": "user:alice",
            "created_at_ms": T0 + t, "input_refs": [], "output_refs": [], "capability_decisions": [],
            "verifier_results": [], "actions": [act], "run_side_effect_class_max": class });
        let mut record = Json::from_serde(&record);
        link_to(&mut record, None);
        sign_legacy(&mut record, KEY_ID, &key);
        writeln!(out, "{}", to_line(&record)).unwrap();
    }
    // The gateway's lease objects for lease-0007 (ISO-8601 times, as it writes them).
    let ms = |t: u64| aeplens::model::time::format_ms(t as f64);
    let leases = format!(
        "{}\n{}\n",
        json!({ "leaseId": lease, "principalHash": "4f1c2a9e8b7d6c5a", "serverId": "mcp-fs",
            "grantedTools": ["write_file"], "expiresAt": ms(T0 + 360_000), "stateChanging": true,
            "maxInvocations": 3, "invocationCount": 3 }),
        json!({ "receiptId": "9c8b7a6f5e4d3c2b", "leaseId": lease, "principalHash": "4f1c2a9e8b7d6c5a",
            "toolName": "write_file", "uiTextHash": "a1b2c3d4e5f60718", "toolDescriptorHash": "0f1e2d3c4b5a6978",
            "argsDigest": "1a2b3c4d5e6f7081", "approvedAt": ms(T0 + 60_000), "expiresAt": ms(T0 + 360_000) }),
    );

    // An output directory may be given (tests regenerate into a temporary one).
    let dir = std::env::args().nth(1).map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo"),
        std::path::PathBuf::from,
    );
    std::fs::create_dir_all(dir.join("evidence")).unwrap();
    std::fs::write(dir.join("evidence/incident.ndjson"), out).unwrap();
    std::fs::write(dir.join("leases.ndjson"), leases).unwrap();
    let keys = format!(
        "{{\n  \"{KEY_ID}\": \"{}\"\n}}\n",
        aeplens::canon::hex(key.verifying_key().as_bytes())
    );
    std::fs::write(dir.join("keys.json"), keys).unwrap();
    eprintln!("wrote {}", dir.display());
}
