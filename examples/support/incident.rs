//! Incident-shaped evidence, as the unmodified reference emitter writes it for a fleet of
//! agents with sub-agents: runs of one to three emitters (each its own key and chain, all
//! using the default action ids `action-0`, `action-1`, …), short chains of cumulative
//! snapshots (3 to 6 records, each repeating its emitter's actions so far and adding one or
//! two), 3–7 actions a record, and about one finding a record: state-changing actions with
//! no capability decision, and actions executed although their decision was deny. About
//! one record in a hundred is written twice (a retried append). Signed (S1, a tenth DSSE),
//! deterministic. Shared by `gen_store --shape incident` and the consumer tests (`#[path]`
//! module).

use aeplens::model::json::Json;
use aeplens::verify::sign::link_to;
use std::io::Write;

pub use crate::generated::Rng;

/// The emitters' keys: `incident-key-1` … `incident-key-3`.
pub fn keys() -> Vec<(String, ed25519_dalek::SigningKey)> {
    crate::generated::emitter_keys("incident")
}

/// The keyring file for [`keys`].
pub fn keys_json() -> String {
    crate::generated::keyring_json(&keys())
}

/// Writes `records` records (a retried append counts as one) to `out`.
pub fn generate(records: usize, out: &mut impl Write) -> std::io::Result<()> {
    let keys = keys();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let tools = [
        ("read_file", "read"),
        ("write_file", "mutate-local"),
        ("exec_command", "mutate-local"),
        ("http_post", "network-egress"),
        ("sql_exec", "mutate-external"),
        ("git_push", "mutate-external"),
    ];
    let mut written = 0usize;
    let mut t = 1_780_000_000_000u64;
    let mut run = 0usize;
    while written < records {
        let run_id = format!("run-incident-{run:05}");
        run += 1;
        let emitters = 1 + rng.below(3) as usize;
        for (key_id, key) in keys.iter().take(emitters) {
            let chain_len = 3 + rng.below(4) as usize;
            let mut actions: Vec<serde_json::Value> = Vec::new();
            let mut previous: Option<Json> = None;
            for _ in 0..chain_len {
                if written >= records {
                    break;
                }
                // A snapshot adds one or two actions, so that it holds 3–7 in all.
                let add = if actions.len() < 2 {
                    3 - actions.len()
                } else {
                    1 + rng.below(2) as usize
                };
                for _ in 0..add.min(7usize.saturating_sub(actions.len()).max(1)) {
                    t += 1 + rng.below(4000);
                    let (tool, class) = tools[rng.below(tools.len() as u64) as usize];
                    let roll = rng.below(100);
                    let mutates = class != "read";
                    let mut action = serde_json::json!({
                        "action_id": format!("action-{}", actions.len()),
                        "tool_name": tool,
                        "state_changing": mutates,
                        "evidence_refs": [],
                        "timestamp_ms": t,
                        "recording_mode": "validation",
                        "side_effect_class": class,
                        "arguments_digest": rng.digest(),
                        "outcome": "success",
                    });
                    if mutates && roll < 80 {
                        // No decision at all: F-UNAPPROVED-MUTATION.
                    } else {
                        let deny = (80..95).contains(&roll);
                        action["capability_decision"] = serde_json::json!({
                            "capability": tool,
                            "subject": format!("agent:{key_id}"),
                            "resource": format!("res://incident/{}", rng.below(40)),
                            "decision": if deny { "deny" } else { "allow" },
                            "reason_code": if deny { "DENY_POLICY" } else { "ALLOW_POLICY" },
                            "approval_mode": if deny { "policy-deny-with-evidence" } else { "policy-allow-with-receipt" },
                        });
                        // A deny that executed anyway (F-EXEC-AFTER-DENY) in two thirds of them.
                        if deny && roll < 85 {
                            action["outcome"] = "denied".into();
                        }
                    }
                    actions.push(action);
                }
                let record = serde_json::json!({
                    "schema_version": "aep/v0.5",
                    "run_id": run_id,
                    "user_id": "user:oncall",
                    "policy_bundle_digest": rng.digest(),
                    "input_refs": [],
                    "output_refs": [],
                    "capability_decisions": [],
                    "actions": actions,
                    "verifier_results": [],
                    "created_at_ms": t,
                });
                let mut record = Json::from_serde(&record);
                link_to(&mut record, previous.as_ref());
                let dsse = rng.below(10) == 0;
                crate::generated::sign_and_append(out, &mut record, (key_id, key), dsse, &mut rng)?;
                written += 1;
                previous = Some(record);
            }
        }
    }
    Ok(())
}
