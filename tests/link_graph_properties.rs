//! Property tests for the link graph (verification.md §e.2): random stores of signed
//! records from several emitters — interleaved, split into files, with retried
//! (duplicated) and lost (dropped) lines — give back exactly each emitter's chain, with a
//! gap named wherever a lost record leaves earlier records of its emitter loaded.

use aeplens::canon::{CHAIN_EXCLUDED, Variant, canonical_bytes_without, sha256_hex};
use aeplens::load::parse_input;
use aeplens::load::parser::parse;
use aeplens::verify::chain::ChainStatus;
use aeplens::verify::{AuthStatus, Keyring, Options, verify_inputs};
use base64::Engine;
use ed25519_dalek::{Signer, SigningKey};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// One emitter's chain: the NDJSON line of each record, signed (S1) and linked.
fn emitter_chain(key: &SigningKey, emitter: usize, len: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut prev: Option<String> = None;
    let mut actions = Vec::new();
    for j in 0..len {
        actions.push(serde_json::json!({
            "action_id": format!("e{emitter}-a{j}"),
            "tool_name": "write_file",
            "timestamp_ms": 1_000_000 + 1000 * j as u64,
        }));
        let mut record = serde_json::json!({
            "schema_version": "aep/v0.3",
            "run_id": format!("run-{emitter}"),
            "created_at_ms": 1_000_000 + 1000 * j as u64,
            "actions": actions,
            "prev_record_hash": prev,
        });
        let json = parse(&record.to_string()).unwrap();
        let bytes = canonical_bytes_without(&json, CHAIN_EXCLUDED, Variant::C1);
        let sig = base64::engine::general_purpose::STANDARD.encode(key.sign(&bytes).to_bytes());
        record["signature"] = serde_json::json!({ "alg": "ed25519", "key_id": "prop", "sig": sig });
        prev = Some(sha256_hex(&bytes));
        lines.push(record.to_string());
    }
    lines
}

/// A store to build: per emitter a chain length; the interleaving, the lines dropped,
/// the lines written twice, and where the store is cut into files.
#[derive(Debug, Clone)]
struct Plan {
    lengths: Vec<usize>,
    order_seed: Vec<usize>,
    dropped: Vec<bool>,
    repeated: Vec<bool>,
    cuts: Vec<usize>,
}

fn plan() -> impl Strategy<Value = Plan> {
    prop::collection::vec(1usize..7, 1..5).prop_flat_map(|lengths| {
        let total: usize = lengths.iter().sum();
        (
            Just(lengths),
            prop::collection::vec(0usize..1000, total),
            prop::collection::vec(prop::bool::weighted(0.15), total),
            prop::collection::vec(prop::bool::weighted(0.15), total),
            prop::collection::vec(0usize..=total, 0..3),
        )
            .prop_map(|(lengths, order_seed, dropped, repeated, cuts)| Plan {
                lengths,
                order_seed,
                dropped,
                repeated,
                cuts,
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn paths_reproduce_each_emitters_chain(plan in plan()) {
        let key = SigningKey::from_bytes(&[7u8; 32]);
        let mut keys = Keyring::default();
        keys.add("prop", &aeplens::canon::hex(key.verifying_key().as_bytes())).unwrap();
        let chains: Vec<Vec<String>> = plan
            .lengths
            .iter()
            .enumerate()
            .map(|(e, &len)| emitter_chain(&key, e, len))
            .collect();
        // Interleave: every record keeps its emitter's order (a random merge).
        let mut next = vec![0usize; chains.len()];
        let mut order: Vec<(usize, usize)> = Vec::new();
        for seed in &plan.order_seed {
            let open: Vec<usize> = (0..chains.len()).filter(|&e| next[e] < chains[e].len()).collect();
            let e = open[seed % open.len()];
            order.push((e, next[e]));
            next[e] += 1;
        }
        // Lines as stored: lost appends dropped, retried ones written twice.
        let mut stored: Vec<(usize, usize)> = Vec::new();
        for (k, &(e, j)) in order.iter().enumerate() {
            if plan.dropped[k] {
                continue;
            }
            stored.push((e, j));
            if plan.repeated[k] {
                stored.push((e, j));
            }
        }
        let mut cuts: Vec<usize> = plan.cuts.iter().map(|&c| c.min(stored.len())).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut bounds = vec![0];
        bounds.extend(cuts);
        bounds.push(stored.len());
        let mut inputs = Vec::new();
        let mut at: BTreeMap<(String, usize), (usize, usize)> = BTreeMap::new();
        for (f, w) in bounds.windows(2).enumerate() {
            let part = &stored[w[0]..w[1]];
            if part.is_empty() {
                continue;
            }
            let path = format!("day-{f}.ndjson");
            let mut text = String::new();
            for (i, &(e, j)) in part.iter().enumerate() {
                text.push_str(&chains[e][j]);
                text.push('\n');
                at.insert((path.clone(), i), (e, j));
            }
            inputs.push(parse_input(path.as_str().into(), text.as_bytes()));
        }
        let report = verify_inputs(&inputs, &keys, &Options::default(), None);
        prop_assert!(report.records.iter().all(|r| r.authenticity.status == Some(AuthStatus::Valid)));

        // Expected: per emitter, the maximal runs of consecutive kept records.
        let kept: BTreeSet<(usize, usize)> = stored.iter().copied().collect();
        let mut want: BTreeSet<(ChainStatus, Vec<(usize, usize)>)> = BTreeSet::new();
        let mut want_gaps: BTreeSet<(usize, usize)> = BTreeSet::new();
        for (e, chain) in chains.iter().enumerate() {
            let mut run: Vec<(usize, usize)> = Vec::new();
            for j in 0..=chain.len() {
                if j < chain.len() && kept.contains(&(e, j)) {
                    run.push((e, j));
                    continue;
                }
                if let Some(&(_, first)) = run.first() {
                    let status = match (first, run.len()) {
                        (0, 1) => ChainStatus::NotPresent,
                        (0, _) => ChainStatus::Intact,
                        _ => ChainStatus::Orphaned,
                    };
                    if first > 0 && (0..first).any(|i| kept.contains(&(e, i))) {
                        want_gaps.insert((e, first));
                    }
                    want.insert((status, std::mem::take(&mut run)));
                }
            }
        }
        let got: BTreeSet<(ChainStatus, Vec<(usize, usize)>)> = report
            .links
            .paths
            .iter()
            .map(|p| {
                let records = p.records.iter().map(|(path, index)| at[&(path.to_string(), index)]).collect();
                (p.status, records)
            })
            .collect();
        prop_assert_eq!(got, want);
        prop_assert!(!report.links.forked);
        let got_gaps: BTreeSet<(usize, usize)> = report
            .links
            .findings
            .iter()
            .filter(|(_, f)| f.id == "F-CHAIN-GAP")
            .map(|(_, f)| {
                let after = &f.evidence.value()["after"];
                at[&(after["path"].as_str().unwrap().to_string(), after["index"].as_u64().unwrap() as usize)]
            })
            .collect();
        prop_assert_eq!(got_gaps, want_gaps);
        let duplicates = report.links.findings.iter().filter(|(_, f)| f.id == "F-DUPLICATE-RECORD").count();
        prop_assert_eq!(duplicates, stored.len() - kept.len());
        prop_assert_eq!(
            report.links.passes(),
            report.links.paths.iter().all(|p| matches!(p.status, ChainStatus::Intact | ChainStatus::NotPresent))
        );
    }
}
