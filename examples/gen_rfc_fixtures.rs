//! Writes our own corpus of the RFC-final shapes to `tests/fixtures/rfc-final/`
//! (`evidence/`, the lease file `leases.ndjson` and the public test key `keys.json`)
//! (deterministic: regenerating gives the same bytes; a test checks it):
//!
//! ```text
//! cargo run --example gen_rfc_fixtures
//! ```
//! No public emitter writes approval_grant/approval_decision, bounded_lease_evidence, the
//! three-state argument_drift or the per-kind coverage shapes, so these records are
//! signed with a test key through aeplens's own canonicalisation and chained. Together
//! they fire every badge state, every lease verdict and every finding.
#![allow(
    clippy::needless_pass_by_value,
    reason = "json!-built arguments read best passed by value"
)]

use aeplens::model::json::Json;
use aeplens::verify::sign::{link_to, sign_dsse, sign_legacy, signing_key, to_line};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;

const KEY_ID: &str = "rfc-fixture-key-1";
const T0: u64 = 1_785_000_000_000; // 2026-07-25T17:20:00Z

fn d(label: &str) -> String {
    format!(
        "sha256:{}",
        aeplens::canon::hex(&Sha256::digest(label.as_bytes()))
    )
}

/// An RFC-final capability decision.
fn grant(cap: &str, res: &str, decision: &str, grant: &str, outcome: &str) -> Value {
    json!({ "capability": cap, "subject": "agent:payments-bot", "resource": res, "decision": decision,
            "reason_code": format!("{}_{}", decision.to_uppercase(), grant.to_uppercase().replace('-', "_")),
            "approval_grant": grant, "approval_decision": outcome })
}

fn action(id: &str, tool: &str, t: u64, class: &str) -> Value {
    json!({ "action_id": id, "tool_name": tool, "state_changing": class != "read",
            "timestamp_ms": T0 + t, "side_effect_class": class, "recording_mode": "full",
            "evidence_refs": [], "arguments_digest": d(&format!("args:{id}")) })
}

fn set(v: &mut Value, pairs: Value) {
    for (k, x) in pairs.as_object().unwrap() {
        v[k] = x.clone();
    }
}

fn record(run: &str, t: u64, actions: &[Value], decisions: Value) -> Value {
    let max = actions
        .iter()
        .map(|a| aeplens::model::side_effect_rank(a["side_effect_class"].as_str()))
        .max()
        .map(|r| aeplens::model::SIDE_EFFECT_ORDER[r]);
    let mut r = json!({ "schema_version": "aep/v0.3", "run_id": run, "user_id": "user:ops-oncall",
        "created_at_ms": T0 + t, "policy_bundle_digest": "payments-policy@2026.07.1",
        "run_context": { "agent_id": "payments-bot", "delegation_chain": ["user:ops-oncall", "agent:payments-bot"] },
        "input_refs": [], "output_refs": [], "capability_decisions": decisions,
        "verifier_results": [], "actions": actions });
    if let Some(max) = max {
        r["run_side_effect_class_max"] = json!(max);
    }
    r
}

/// Denied→re-approved chains, drift, shadowed decisions and a rewritten snapshot.
fn payments_run(key: &ed25519_dalek::SigningKey, out: &mut String) {
    let mut a = vec![
        action("P01-read-invoice", "read_invoice", 0, "read"),
        action(
            "P02-refund-denied",
            "issue_refund",
            2_000,
            "mutate-external",
        ),
        action(
            "P03-refund-reapproved",
            "issue_refund",
            95_000,
            "mutate-external",
        ),
        action(
            "P04-payout-denied",
            "send_payout",
            120_000,
            "network-egress",
        ),
        action(
            "P05-payout-same-payload",
            "send_payout",
            150_000,
            "network-egress",
        ),
        action(
            "P06-fx-drift-executed",
            "convert_currency",
            170_000,
            "mutate-external",
        ),
        action(
            "P07-void-after-deny",
            "void_invoice",
            180_000,
            "mutate-external",
        ),
        action(
            "P08-ledger-unapproved",
            "post_ledger",
            190_000,
            "mutate-external",
        ),
        action("P09-plugin-unknown", "vendor_plugin", 200_000, "unknown"),
    ];
    set(
        &mut a[0],
        json!({ "capability_decision": grant("invoice.read", "ledger://invoices/INV-77", "allow", "none", "allow"),
                "outcome": "success", "exit_code": 0, "result_digest": d("result:P01") }),
    );
    let (h1, h2) = (d("approval:P02"), d("approval:P03"));
    set(
        &mut a[1],
        json!({ "capability_decision": grant("payments.refund", "stripe://acct_9/refunds", "deny", "one-shot-payload", "drift-requires-reapproval"),
                "approval_context_hash": h1, "outcome": "denied", "causal_chain_id": "cc-refund-77",
                "argument_drift": { "result": "drifted", "approved_arg_digest": d("args:refund-120"),
                    "observed_arg_digest": d("args:refund-1200"), "args_equality_version": "1.0.0",
                    "approval_or_lease_id": h1, "drift_reason": "amount changed from 120.00 to 1200.00" },
                "parent_action_id": "P01-read-invoice" }),
    );
    a[1]["capability_decision"]["deny_reason_class"] = json!("argument");
    set(
        &mut a[2],
        json!({ "capability_decision": grant("payments.refund", "stripe://acct_9/refunds", "allow", "one-shot-payload", "allow"),
                "approval_context_hash": h2, "parent_action_id": "P02-refund-denied", "causal_chain_id": "cc-refund-77",
                "argument_drift": { "result": "matched", "approved_arg_digest": d("args:refund-1200"),
                    "observed_arg_digest": d("args:refund-1200"), "args_equality_version": "1.0.0", "approval_or_lease_id": h2 },
                "outcome": "success", "exit_code": 0, "result_digest": d("result:P03") }),
    );
    let h4 = d("approval:P04");
    set(
        &mut a[3],
        json!({ "capability_decision": grant("payments.payout", "bank://acct/88", "deny", "one-shot-payload", "drift-requires-reapproval"),
                "approval_context_hash": h4, "outcome": "denied",
                "argument_drift": { "result": "drifted", "approved_arg_digest": d("args:payout-a"),
                    "observed_arg_digest": d("args:payout-b"), "args_equality_version": "1.0.0",
                    "approval_or_lease_id": h4, "drift_reason": "beneficiary changed" } }),
    );
    a[3]["capability_decision"]["deny_reason_class"] = json!("argument");
    set(
        &mut a[4],
        json!({ "capability_decision": grant("payments.payout", "bank://acct/88", "allow", "one-shot-payload", "allow"),
                "approval_context_hash": h4, "parent_action_id": "P04-payout-denied",
                "argument_drift": { "result": "matched", "approved_arg_digest": d("args:payout-b"),
                    "observed_arg_digest": d("args:payout-b"), "args_equality_version": "1.0.0", "approval_or_lease_id": h4 },
                "outcome": "success", "exit_code": 0 }),
    );
    let h6 = d("approval:P06");
    set(
        &mut a[5],
        json!({ "capability_decision": grant("fx.convert", "fx://desk/eur-usd", "allow", "one-shot-payload", "allow"),
                "approval_context_hash": h6, "outcome": "success", "exit_code": 0,
                "argument_drift": { "result": "drifted", "approved_arg_digest": d("args:fx-1"),
                    "observed_arg_digest": d("args:fx-2"), "args_equality_version": "1.0.0",
                    "approval_or_lease_id": h6, "drift_reason": "rate source changed" } }),
    );
    set(
        &mut a[6],
        json!({ "capability_decision": grant("invoice.void", "ledger://invoices/INV-77", "deny", "none", "deny"),
                "outcome": "success", "exit_code": 0, "result_digest": d("result:P07") }),
    );
    a[6]["capability_decision"]["deny_reason_class"] = json!("policy-rule");
    set(&mut a[7], json!({ "outcome": "success", "exit_code": 0 }));
    set(
        &mut a[8],
        json!({ "capability_decision": grant("plugin.call", "vendor://plugin/x", "allow", "none", "allow"), "outcome": "success" }),
    );
    // The record-level list keeps the first decision per triple: the deny shadows P03's allow.
    let list = json!([
        a[1]["capability_decision"].clone(),
        a[0]["capability_decision"].clone()
    ]);
    let mut previous: Option<Json> = None;
    for (n, upto) in [(0u64, 3), (1, 6), (2, 9)] {
        let mut actions = a[..upto].to_vec();
        if n == 2 {
            // The third snapshot rewrites an earlier action: the emitter changed history.
            actions[0]["outcome"] = json!("failure");
        }
        let r = record(
            "run-rfc-payments-7",
            200_000 + n * 1_000,
            &actions,
            list.clone(),
        );
        let mut r = Json::from_serde(&r);
        link_to(&mut r, previous.as_ref());
        sign_legacy(&mut r, KEY_ID, key);
        writeln!(out, "{}", to_line(&r)).unwrap();
        previous = Some(r);
    }
}

/// Every comparability badge, and a state gap between two actions.
fn state_run(key: &ed25519_dalek::SigningKey, out: &mut String) {
    let cases: Vec<(&str, Value)> = vec![
        (
            "git-tree",
            json!({ "tree_sha": "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "tree_root": "/", "path_predicate": "src/**", "excludes": ["vendor/**"] }),
        ),
        ("git-tree", json!({ "paths": ["/src"], "depth": 3 })),
        (
            "db-rowset",
            json!({ "database_id": "payments-eu-1", "schema": "ledger", "table": "refunds", "query_hash": d("q:refunds"), "snapshot_id": "lsn:0/16B6C50", "isolation_level": "repeatable-read", "row_count": 12 }),
        ),
        (
            "db-rowset",
            json!({ "database_id": "payments-eu-1", "schema": "ledger", "table": "payouts", "query_hash": d("q:payouts") }),
        ),
        (
            "db-rowset",
            json!({ "database_id": "postgres://admin:hunter2@10.0.0.5/payments", "schema": "ledger", "table": "refunds" }),
        ),
        (
            "sandbox-fs",
            json!({ "base_image_digest": d("image:builder"), "sandbox_root": "/work", "include_predicates": ["**"], "exclude_predicates": [], "symlink_policy": "no-follow", "generated_paths_included": false }),
        ),
        (
            "sandbox-fs",
            json!({ "base_image_digest": d("image:builder"), "sandbox_root": "/work" }),
        ),
        (
            "browser-dom",
            json!({ "origin": "https://dash.example.com", "route_path": "/orders/{id}/lines", "frame_path": "/", "selector_root": "#main", "selector_kind": "css", "capture_phase": "stable-quiescent", "attribute_order": "sorted-asc", "whitespace_policy": "collapse" }),
        ),
        (
            "browser-dom",
            json!({ "origin": "https://dash.example.com", "route_path": "/orders/123456/lines", "frame_path": "/", "capture_phase": "post-hydration", "attribute_order": "as-is", "whitespace_policy": "preserve" }),
        ),
        (
            "memory-bag",
            json!({ "namespace": "agent/durable", "durable_vs_scratch": "durable-only", "generation_number": 41, "redaction_profile": "none" }),
        ),
        (
            "memory-bag",
            json!({ "namespace": "agent/durable-unversioned", "durable_vs_scratch": "durable-only" }),
        ),
        (
            "memory-bag",
            json!({ "namespace": "agent/working", "durable_vs_scratch": "scratch-only", "generation_number": 2 }),
        ),
        (
            "kv-snapshot",
            json!({ "namespace": "flags", "durable_vs_scratch": "mixed", "generation_number": 9 }),
        ),
        (
            "kv-snapshot",
            json!({ "namespace": "flags", "durable_vs_scratch": "mixed", "mixed_partition": { "durable_keys": ["flags:*"], "scratch_keys": ["tmp:*"], "audit_equality_basis": "durable-only" } }),
        ),
        (
            "kv-snapshot",
            json!({ "namespace": "flags", "durable_vs_scratch": "mixed", "mixed_partition": { "durable_keys": ["flags:*"], "scratch_keys": ["tmp:*"], "audit_equality_basis": "none" } }),
        ),
        (
            "other",
            json!({ "other_kind": "com.example.timestream", "coverage_schema_version": "1.2.0", "description": "latency table" }),
        ),
        (
            "other",
            json!({ "other_kind": "timestream", "description": "no namespace, no version" }),
        ),
        ("quantum-foam", json!({ "anything": true })),
    ];
    let mut actions = Vec::new();
    for (i, (kind, cov)) in cases.into_iter().enumerate() {
        let id = format!("S{:02}-{kind}", i + 1);
        let mut a = action(
            &id,
            &format!("snapshot_{}", kind.replace('-', "_")),
            1_000 * i as u64,
            "read",
        );
        set(
            &mut a,
            json!({ "capability_decision": grant("state.observe", "state://payments", "allow", "none", "allow"),
                    "state_digest_kind": kind, "state_digest_coverage": cov,
                    "pre_state_digest": d(&format!("pre:{id}")), "post_state_digest": d(&format!("post:{id}")),
                    "outcome": "success" }),
        );
        actions.push(a);
    }
    // A digest without a coverage descriptor (V3) …
    let mut bare = action("S19-no-coverage", "snapshot_bare", 19_000, "read");
    set(
        &mut bare,
        json!({ "capability_decision": grant("state.observe", "state://payments", "allow", "none", "allow"),
                "pre_state_digest": d("pre:S19"), "outcome": "success" }),
    );
    actions.push(bare);
    // … and two writes over one durable namespace: the second starts from a state the
    // first did not leave (F-STATE-GAP).
    let cov = json!({ "namespace": "orders/cache", "durable_vs_scratch": "durable-only", "generation_number": 7 });
    for (i, (pre, post)) in [("gap:a", "gap:b"), ("gap:c", "gap:d")].iter().enumerate() {
        let id = format!("S{}-cache-write", 20 + i);
        let mut a = action(&id, "cache_put", 20_000 + 5_000 * i as u64, "mutate-local");
        set(
            &mut a,
            json!({ "capability_decision": grant("cache.put", "cache://orders", "allow", "none", "allow"),
                    "state_digest_kind": "memory-bag", "state_digest_coverage": cov,
                    "pre_state_digest": d(pre), "post_state_digest": d(post), "outcome": "success" }),
        );
        actions.push(a);
    }
    let r = record("run-rfc-state-2", 60_000, &actions, json!([]));
    let mut r = Json::from_serde(&r);
    link_to(&mut r, None);
    sign_dsse(&mut r, KEY_ID, key);
    writeln!(out, "{}", to_line(&r)).unwrap();
}

/// Every lease verdict, from recorded, supplied and inferred windows.
fn lease_run(key: &ed25519_dalek::SigningKey, out: &mut String) {
    let granted = T0 + 300_000;
    let expires = granted + 300_000;
    let ev = |lease: &str, exec: u64, ordinal: u64, extra: Value| {
        let mut e = json!({ "lease_id": lease, "lease_granted_at_ms": granted, "lease_expires_at_ms": expires,
            "lease_duration_ms": expires - granted, "execution_started_at_ms": exec,
            "invocation_ordinal": ordinal, "max_invocations": 3 });
        set(&mut e, extra);
        e
    };
    let cases: Vec<(&str, u64, &str, Value)> = vec![
        (
            "K01-inside",
            granted + 10_000,
            "allow",
            ev("lease-rec-1", granted + 10_000, 1, json!({})),
        ),
        (
            "K02-before-grant",
            granted - 5_000,
            "allow",
            ev("lease-rec-1", granted - 5_000, 2, json!({})),
        ),
        (
            "K03-after-expiry",
            expires + 12_000,
            "allow",
            ev("lease-rec-1", expires + 12_000, 3, json!({})),
        ),
        (
            "K04-over-budget",
            granted + 20_000,
            "allow",
            ev("lease-rec-1", granted + 20_000, 4, json!({})),
        ),
        (
            "K05-revoked",
            granted + 40_000,
            "revoked",
            ev(
                "lease-rec-1",
                granted + 40_000,
                2,
                json!({ "revoked_at_ms": granted + 30_000, "revocation_event_id": "rev-19" }),
            ),
        ),
        (
            "K06-label-expired",
            granted + 50_000,
            "expired",
            ev("lease-rec-1", granted + 50_000, 3, json!({})),
        ),
    ];
    let mut actions = Vec::new();
    for (id, t, outcome, evidence) in cases {
        let mut a = action(id, "put_object", t - T0, "mutate-external");
        set(
            &mut a,
            json!({ "capability_decision": grant("blob.put", "s3://payments-archive", "allow", "bounded-lease", outcome),
                    "scope_lease_id": "lease-rec-1", "bounded_lease_evidence": evidence,
                    "argument_drift": { "result": "not-checked", "approval_or_lease_id": "lease-rec-1" },
                    "outcome": "success" }),
        );
        actions.push(a);
    }
    // Supplied (lease file) and inferred windows: the JS shape, a lease id and nothing else.
    for (id, t, lease) in [
        ("K07-supplied-inside", 400_000, "5f2c9a7e1b3d4c6a"),
        ("K08-supplied-after-expiry", 800_000, "5f2c9a7e1b3d4c6a"),
        ("K09-inferred-1", 410_000, "lease-unknown-9"),
        ("K10-inferred-2", 420_000, "lease-unknown-9"),
    ] {
        let mut a = action(id, "put_object", t, "mutate-external");
        set(
            &mut a,
            json!({ "capability_decision": { "capability": "blob.put", "subject": "agent:payments-bot",
                    "resource": "s3://payments-archive", "decision": "allow", "approval_mode": "bounded-lease" },
                    "scope_lease_id": lease, "outcome": "success" }),
        );
        actions.push(a);
    }
    let r = record("run-rfc-leases-3", 900_000, &actions, json!([]));
    let mut r = Json::from_serde(&r);
    link_to(&mut r, None);
    sign_legacy(&mut r, KEY_ID, key);
    writeln!(out, "{}", to_line(&r)).unwrap();
}

/// The gateway's lease objects for `K07`/`K08`: a ScopeLease and its ApprovalReceipt.
fn lease_file() -> String {
    let ms = |t: u64| aeplens::model::time::format_ms(t as f64);
    let lease = json!({ "leaseId": "5f2c9a7e1b3d4c6a", "principalHash": "9a1f00c2d3e4b5a6", "serverId": "mcp-s3",
        "grantedTools": ["put_object"], "expiresAt": ms(T0 + 600_000), "stateChanging": true,
        "maxInvocations": 5, "invocationCount": 2 });
    let receipt = json!({ "receiptId": "0c1d2e3f4a5b6c7d", "leaseId": "5f2c9a7e1b3d4c6a", "principalHash": "9a1f00c2d3e4b5a6",
        "toolName": "put_object", "uiTextHash": "aa11bb22cc33dd44", "toolDescriptorHash": "ee55ff6600771188",
        "argsDigest": "1122334455667788", "approvedAt": ms(T0 + 360_000), "expiresAt": ms(T0 + 420_000) });
    format!("{lease}\n{receipt}\n")
}

/// Hygiene findings need bytes no serializer writes: unsigned lines, crafted by hand.
fn hygiene() -> String {
    let base = |run: &str, action: &str| {
        format!(
            r#"{{"schema_version":"aep/v0.3","run_id":"{run}","created_at_ms":{},"actions":[{action}]}}"#,
            T0 + 990_000
        )
    };
    let mut s = String::new();
    let act = |id: &str, extra: &str| {
        format!(
            r#"{{"action_id":"{id}","tool_name":"t","state_changing":false,"timestamp_ms":{},"side_effect_class":"read"{extra}}}"#,
            T0 + 990_000
        )
    };
    s += &base(
        "run-rfc-hygiene-dup",
        &act("H01-dup", r#","outcome":"success","outcome":"failure""#),
    );
    s.push('\n');
    s += &base(
        "run-rfc-hygiene-num",
        &act("H02-num", r#","exit_code":12345678901234567890123"#),
    );
    s.push('\n');
    s += &base(
        "run-rfc-hygiene-esc",
        &act(
            "H03-esc",
            r#","outcome":"ok\u001b]52;c;ZXZpbA==\u0007\u001b[2J""#,
        ),
    );
    s.push('\n');
    s
}

fn main() {
    let seed: [u8; 32] = Sha256::digest(b"aeplens-rfc-fixture-key").into();
    let key = signing_key(&seed);
    let mut store = String::new();
    payments_run(&key, &mut store);
    state_run(&key, &mut store);
    lease_run(&key, &mut store);
    // An output directory may be given (tests regenerate into a temporary one).
    let dir = std::env::args().nth(1).map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rfc-final"),
        std::path::PathBuf::from,
    );
    std::fs::create_dir_all(dir.join("evidence")).unwrap();
    std::fs::write(dir.join("evidence/store.ndjson"), store).unwrap();
    std::fs::write(dir.join("evidence/hygiene.ndjson"), hygiene()).unwrap();
    std::fs::write(dir.join("leases.ndjson"), lease_file()).unwrap();
    let keys = format!(
        "{{\n  \"{KEY_ID}\": \"{}\"\n}}\n",
        aeplens::canon::hex(key.verifying_key().as_bytes())
    );
    std::fs::write(dir.join("keys.json"), keys).unwrap();
    eprintln!("wrote {}", dir.display());
}
