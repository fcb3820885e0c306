//! Reference-shaped evidence: what the reference TypeScript emitter's
//! `FilesystemEvidenceStore` holds for a fleet of agents, matched statistic by statistic
//! (`support/shape.rs`, checked by `tests/scale/reference_shape.rs`) to the reference-emitter
//! stores vendored under `tests/fixtures/reference-stores/` and to the 20,000-record store
//! the same emitter wrote for the performance issue.
//!
//! Runs of one to three emitters (sub-agents carry a `run_context` and reuse the default
//! action ids `action-0`, `action-1`, …), each emitter a chain of cumulative snapshots: a
//! record repeats every earlier action of its emitter, and the record-level
//! `capability_decisions` every earlier decision, and adds one to four actions. Members in
//! the emitter's order; an emitter in fourteen writes v0.4 DSSE (the envelope and the
//! mirrored `signature`). Findings come from the evidence as the emitter writes it:
//! mutations with no decision, actions executed after a deny, drifted arguments. About
//! one record in a hundred is appended twice (a retried append). Deterministic.

use aeplens::model::json::Json;
use aeplens::verify::sign::link_to;
use std::io::Write;

use crate::generated::Rng;

/// The emitters' keys: `reference-key-1` … `reference-key-3`.
pub fn keys() -> Vec<(String, ed25519_dalek::SigningKey)> {
    crate::generated::emitter_keys("reference")
}

/// The keyring file for [`keys`].
pub fn keys_json() -> String {
    crate::generated::keyring_json(&keys())
}

/// Tools with their side-effect class and capability.
const TOOLS: [(&str, &str, &str); 9] = [
    ("read_file", "read", "fs.read"),
    ("search_docs", "read", "kb.search"),
    ("fetch_thread", "read", "mail.read"),
    ("write_file", "mutate-local", "fs.write"),
    ("exec_command", "mutate-local", "shell.exec"),
    ("publish_event", "network-egress", "bus.publish"),
    ("http_post", "network-egress", "net.post"),
    ("sql_exec", "mutate-external", "db.write"),
    ("rotate_credentials", "mutate-external", "vault.rotate"),
];

/// The classes in order, for `run_side_effect_class_max`.
const CLASSES: [&str; 4] = ["read", "mutate-local", "mutate-external", "network-egress"];

/// The class rank, for `run_side_effect_class_max`.
fn rank(class: &str) -> usize {
    CLASSES.iter().position(|c| *c == class).unwrap_or(0)
}

/// A hex SHA-256 of four draws (the emitter writes bare hex digests).
fn hex_digest(rng: &mut Rng) -> String {
    rng.digest().trim_start_matches("sha256:").to_string()
}

/// One action, as `addAction` writes it; the decision it carries, if any.
fn action(
    rng: &mut Rng,
    id: usize,
    t: u64,
    subject: &str,
) -> (serde_json::Value, Option<serde_json::Value>) {
    let (tool, class, capability) = TOOLS[rng.below(TOOLS.len() as u64) as usize];
    let mutates = class != "read";
    let roll = rng.below(100);
    let mut a = serde_json::Map::new();
    a.insert("action_id".into(), format!("action-{id}").into());
    a.insert("tool_name".into(), tool.into());
    a.insert("state_changing".into(), mutates.into());
    if mutates {
        a.insert("arguments_digest".into(), hex_digest(rng).into());
    } else {
        a.insert("result_digest".into(), hex_digest(rng).into());
    }
    a.insert("evidence_refs".into(), serde_json::json!([]));
    // Four actions in ten carry a decision (the other mutations are unapproved).
    let decision = (roll < 40).then(|| {
        let deny = roll < 12;
        let mut d = serde_json::json!({
            "capability": capability,
            "subject": subject,
            "resource": format!("res://fleet/{}", rng.below(60)),
            "decision": if deny { "deny" } else { "allow" },
            "approval_mode": if deny { "re-approval-on-drift" } else { "policy-allow-with-receipt" },
        });
        if deny {
            d["reason_code"] = "SCOPE_WIDENED".into();
            d["deny_reason_class"] = "argument".into();
        }
        if roll.is_multiple_of(4) {
            d["approval_extension"] = serde_json::json!({
                "namespace": "ops.fleet",
                "mode": "two-person",
                "evidence_digest": hex_digest(rng),
            });
        }
        d
    });
    if let Some(d) = &decision {
        a.insert("capability_decision".into(), d.clone());
    }
    a.insert("timestamp_ms".into(), t.into());
    if decision.is_some() && mutates {
        let approved = hex_digest(rng);
        a.insert(
            "causal_chain_id".into(),
            format!("cc-{}", rng.below(1 << 20)).into(),
        );
        a.insert("approval_context_hash".into(), approved.clone().into());
        a.insert("recording_mode".into(), "validation".into());
        a.insert("side_effect_class".into(), class.into());
        let drifted = roll < 5;
        a.insert(
            "argument_drift".into(),
            serde_json::json!({
                "detected": drifted,
                "approved_args_digest": approved,
                "observed_args_digest": if drifted { hex_digest(rng) } else { approved.clone() },
                "resolution": if drifted { "denied" } else { "matched" },
            }),
        );
    } else {
        a.insert("recording_mode".into(), "validation".into());
        a.insert("side_effect_class".into(), class.into());
    }
    // Executed although denied (F-EXEC-AFTER-DENY) for two denies in three.
    let outcome = match decision.as_ref().map(|d| d["decision"] == "deny") {
        Some(true) if !roll.is_multiple_of(3) => "success",
        Some(true) => "denied",
        _ => "success",
    };
    a.insert("outcome".into(), outcome.into());
    (serde_json::Value::Object(a), decision)
}

/// Writes `records` records (a retried append counts as one) to `out`.
pub fn generate(records: usize, out: &mut impl Write) -> std::io::Result<()> {
    let keys = keys();
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    let mut written = 0usize;
    let mut t = 1_789_600_000_000u64;
    let mut run = 0usize;
    let mut emitter_count = 0usize;
    while written < records {
        let run_id = format!("run-fleet-{run:05}");
        run += 1;
        let emitters = match rng.below(100) {
            0..=79 => 1,
            80..=94 => 2,
            _ => 3,
        };
        for (e, (key_id, key)) in keys.iter().take(emitters).enumerate() {
            let dsse = emitter_count % 14 == 13;
            emitter_count += 1;
            let subject = format!("agent:{key_id}");
            let chain_len = 2 + rng.below(4) as usize;
            let (mut actions, mut decisions) = (Vec::new(), Vec::new());
            let mut previous: Option<Json> = None;
            for _ in 0..chain_len {
                if written >= records {
                    break;
                }
                for _ in 0..=rng.below(4) {
                    t += 1 + rng.below(20_000);
                    let (a, d) = action(&mut rng, actions.len(), t, &subject);
                    actions.push(a);
                    decisions.extend(d);
                }
                let max = (actions.iter())
                    .map(|a| rank(a["side_effect_class"].as_str().unwrap_or("read")))
                    .max()
                    .unwrap_or(0);
                let mut record = serde_json::json!({
                    "schema_version": if dsse { "aep/v0.4" } else { "aep/v0.3" },
                    "run_id": run_id,
                    "user_id": "user:oncall",
                    "input_refs": [],
                    "output_refs": [],
                    "capability_decisions": decisions,
                    "actions": actions,
                    "verifier_results": [],
                    "created_at_ms": t + 1_000,
                });
                if e > 0 {
                    record["run_context"] = serde_json::json!({
                        "agent_id": format!("subagent-{e}"),
                        "delegation_chain": ["lead"],
                    });
                }
                let mut record = Json::from_serde(&record);
                link_to(&mut record, previous.as_ref());
                if let Json::Object(o) = &mut record {
                    o.members.push((
                        "run_side_effect_class_max".into(),
                        Json::String(CLASSES[max].into()),
                    ));
                }
                crate::generated::sign_and_append(out, &mut record, (key_id, key), dsse, &mut rng)?;
                written += 1;
                previous = Some(record);
            }
        }
    }
    Ok(())
}
