//! Generates a signed, hash-chained NDJSON evidence store for benchmarks.
//!
//! ```text
//! cargo run --release --example gen_store -- OUT.ndjson [RECORDS] [--emitter-order]
//! cargo run --release --example gen_store -- OUT.ndjson [RECORDS] --shape incident
//! cargo run --release --example gen_store -- OUT.ndjson [RECORDS] --shape reference
//! ```
//! `--shape incident`: the shape real incident evidence has (`support/incident.rs`): short
//! emitter chains of cumulative snapshots, several emitters a run, about one finding a
//! record, some retried appends.
//!
//! `--shape reference`: the reference emitter's own shape (`support/reference.rs`), matched
//! statistic by statistic to the reference-emitter stores by `tests/scale/reference_shape.rs`;
//! the statistics of the store written are printed.
//!
//! Writes OUT.ndjson (RECORDS records, default 20000: 3–10 actions each, about 7 % DSSE,
//! chains of up to 12 records per emitter) and OUT.keys.json with the test key.
//! Output is deterministic: the same arguments give the same bytes.
//!
//! By default each line is the record's canonical JSON (members sorted), which flatters a
//! verifier that copies canonical bytes. `--emitter-order` writes members in the order the
//! reference TypeScript emitter writes them (`schema_version`, `run_id`, …, `actions`,
//! `verifier_results`, `created_at_ms`, `prev_record_hash`, …, `signature`; in an action
//! `action_id`, `tool_name`, `state_changing`, …), as real stores are: no line is then
//! already canonical.

#[path = "support/generated.rs"]
mod generated;
#[path = "support/incident.rs"]
mod incident;
#[path = "support/reference.rs"]
mod reference;
#[path = "support/shape.rs"]
mod shape;

use aeplens::model::json::Json;
use aeplens::verify::sign::{link_to, sign_dsse, sign_legacy, signing_key, to_line};
use generated::Rng;
use sha2::{Digest, Sha256};
use std::io::Write;

const KEY_ID: &str = "bench-key-1";

fn main() {
    let all: Vec<String> = std::env::args().skip(1).collect();
    let emitter_order = all.iter().any(|a| a == "--emitter-order");
    let shape = (all.windows(2))
        .find(|w| w[0] == "--shape")
        .map(|w| w[1].clone());
    let mut args = (all.iter())
        .filter(|a| a.as_str() != "--emitter-order" && a.as_str() != "--shape")
        .filter(|a| Some(*a) != shape.as_ref());
    let out = args.next().cloned().unwrap_or_else(|| {
        eprintln!(
            "usage: gen_store OUT.ndjson [RECORDS] [--emitter-order] [--shape incident|reference]"
        );
        std::process::exit(2);
    });
    let count: usize = args
        .next()
        .map_or(20_000, |n| n.parse().expect("RECORDS is a number"));
    let keys_path = format!("{}.keys.json", out.trim_end_matches(".ndjson"));
    if let Some(shape) = shape {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&out).expect("create output"));
        let keys = match shape.as_str() {
            "incident" => {
                incident::generate(count, &mut file).expect("write");
                incident::keys_json()
            }
            "reference" => {
                reference::generate(count, &mut file).expect("write");
                reference::keys_json()
            }
            other => {
                eprintln!("gen_store: no shape {other:?} (incident, reference)");
                std::process::exit(2);
            }
        };
        file.flush().expect("flush");
        std::fs::write(&keys_path, keys).expect("write keys");
        eprintln!("wrote {count} {shape}-shaped records to {out} and the keys to {keys_path}");
        if shape == "reference" {
            let text = std::fs::read_to_string(&out).expect("read back");
            eprintln!("{:#?}", shape::of(&text));
        }
        return;
    }
    let seed: [u8; 32] = Sha256::digest(b"aeplens-bench-key").into();
    let key = signing_key(&seed);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let tools = [
        "read_file",
        "write_file",
        "exec_command",
        "http_get",
        "sql_query",
        "git_push",
    ];
    let classes = ["read", "mutate-local", "mutate-external", "network-egress"];
    let mut file = std::io::BufWriter::new(std::fs::File::create(&out).expect("create output"));
    let mut previous: Option<Json> = None;
    let mut t = 1_780_000_000_000u64;
    for i in 0..count {
        let chain_pos = i % 12;
        let run_id = format!("run-bench-{:05}", i / 12);
        let n_actions = 3 + rng.below(8) as usize;
        let mut actions = Vec::new();
        let mut max_rank = 0;
        for a in 0..n_actions {
            t += 1 + rng.below(5000);
            let class_rank = rng.below(4) as usize;
            max_rank = max_rank.max(class_rank);
            let tool = tools[rng.below(tools.len() as u64) as usize];
            let deny = rng.below(20) == 0;
            // Drawn in the same order as ever, so the default store keeps its bytes.
            let (arguments_digest, result_digest) = (rng.digest(), rng.digest());
            let resource = format!("res://bench/{}", rng.below(50));
            // Members in the reference emitter's order (kept by --emitter-order).
            actions.push(serde_json::json!({
                "action_id": format!("act-{i}-{a}"),
                "tool_name": tool,
                "state_changing": class_rank != 0,
                "result_digest": result_digest,
                "evidence_refs": [],
                "timestamp_ms": t,
                "recording_mode": "validation",
                "side_effect_class": classes[class_rank],
                "arguments_digest": arguments_digest,
                "outcome": if deny { "denied" } else { "success" },
                "capability_decision": {
                    "capability": tool,
                    "subject": "agent:deploy-bot",
                    "resource": resource,
                    "decision": if deny { "deny" } else { "allow" },
                    "reason_code": if deny { "DENY_POLICY" } else { "ALLOW_POLICY" },
                    "approval_mode": if deny { "policy-deny-with-evidence" } else { "policy-allow-with-receipt" },
                },
            }));
        }
        let record = serde_json::json!({
            "schema_version": "aep/v0.5",
            "run_id": run_id,
            "user_id": "user:reviewer-7",
            "policy_bundle_digest": rng.digest(),
            "tool_manifest_digest": rng.digest(),
            "input_refs": [{ "uri": format!("task:bench/{i}"), "digest": rng.digest(), "taint_labels": [] }],
            "output_refs": [],
            "capability_decisions": [],
            "actions": actions,
            "verifier_results": [],
            "created_at_ms": t,
            "run_side_effect_class_max": classes[max_rank],
        });
        let mut record = Json::from_serde(&record);
        link_to(
            &mut record,
            if chain_pos == 0 {
                None
            } else {
                previous.as_ref()
            },
        );
        if rng.below(100) < 7 {
            sign_dsse(&mut record, KEY_ID, &key);
        } else {
            sign_legacy(&mut record, KEY_ID, &key);
        }
        let line = if emitter_order {
            serde_json::to_string(&record).expect("a record serialises")
        } else {
            to_line(&record)
        };
        writeln!(file, "{line}").expect("write");
        previous = Some(record);
    }
    file.flush().expect("flush");
    let keys = format!(
        "{{\"{KEY_ID}\": \"{}\"}}\n",
        aeplens::canon::hex(key.verifying_key().as_bytes())
    );
    std::fs::write(&keys_path, keys).expect("write keys");
    eprintln!("wrote {count} records to {out} and the key to {keys_path}");
}
