//! Property tests for the link graph (verification.md §e.2): random stores of signed
//! records from several emitters — interleaved, split into files, with retried
//! (duplicated) and lost (dropped) lines — give back exactly each emitter's chain, with a
//! gap named wherever a lost record leaves earlier records of its emitter loaded. And
//! action identity (e.3): emitters sharing one run and the default ids `action-0…`, some
//! replayed from a fork point, give every action once — none lost, none doubled.

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
        prop_assert!(!report.links.forked());
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

/// Signs a record (S1) with `key` named `key_id`; its line and its chain hash.
fn signed(mut record: serde_json::Value, key: &SigningKey, key_id: &str) -> (String, String) {
    let json = parse(&record.to_string()).unwrap();
    let bytes = canonical_bytes_without(&json, CHAIN_EXCLUDED, Variant::C1);
    let sig = base64::engine::general_purpose::STANDARD.encode(key.sign(&bytes).to_bytes());
    record["signature"] = serde_json::json!({ "alg": "ed25519", "key_id": key_id, "sig": sig });
    (record.to_string(), sha256_hex(&bytes))
}

/// One emitter of the shared run: `len` cumulative snapshots on its trunk, each adding
/// `action-<j>`; with `fork = Some((k, m))`, a replay from trunk record `k` adds `m`
/// records whose new actions reuse the trunk's later ids with other content. Its lines
/// (trunk then branch, each in emit order) and the tool name of every distinct action.
fn shared_run_emitter(
    e: usize,
    len: usize,
    fork: Option<(usize, usize)>,
) -> (Vec<Vec<String>>, Vec<String>) {
    let key = SigningKey::from_bytes(&[e as u8 + 1; 32]);
    let key_id = format!("key-{e}");
    let action = |branch: &str, j: usize| {
        serde_json::json!({
            "action_id": format!("action-{j}"),
            "tool_name": format!("tool-e{e}-{branch}-{j}"),
            "timestamp_ms": 1_000_000 + 1000 * j as u64,
        })
    };
    let record = |actions: &[serde_json::Value], prev: &Option<String>, t: usize| {
        serde_json::json!({
            "schema_version": "aep/v0.3",
            "run_id": "run-shared",
            "agent_id": format!("agent-{e}"),
            "created_at_ms": t,
            "actions": actions,
            "prev_record_hash": prev,
        })
    };
    let (mut trunk, mut hashes, mut actions, mut prev) = (Vec::new(), Vec::new(), Vec::new(), None);
    let mut tools: Vec<String> = Vec::new();
    for j in 0..len {
        actions.push(action("trunk", j));
        tools.push(format!("tool-e{e}-trunk-{j}"));
        let (line, hash) = signed(record(&actions, &prev, 1_000_000 + 1000 * j), &key, &key_id);
        trunk.push(line);
        hashes.push(hash.clone());
        prev = Some(hash);
    }
    let mut branch = Vec::new();
    if let Some((k, m)) = fork {
        let mut actions: Vec<serde_json::Value> = actions[..=k].to_vec();
        let mut prev = Some(hashes[k].clone());
        for j in k + 1..=k + m {
            actions.push(action("replay", j));
            tools.push(format!("tool-e{e}-replay-{j}"));
            let (line, hash) = signed(record(&actions, &prev, 2_000_000 + 1000 * j), &key, &key_id);
            branch.push(line);
            prev = Some(hash);
        }
    }
    (vec![trunk, branch], tools)
}

/// Emitters of one run: each a trunk length and maybe a fork (point, branch length); how
/// their lines interleave, which are written twice, and where the store is cut.
#[derive(Debug, Clone)]
struct SharedRun {
    emitters: Vec<(usize, Option<(usize, usize)>)>,
    order_seed: Vec<usize>,
    repeated: Vec<bool>,
    cuts: Vec<usize>,
}

fn shared_run() -> impl Strategy<Value = SharedRun> {
    let emitter =
        (1usize..6).prop_flat_map(|len| (Just(len), prop::option::of((0..len, 1usize..4))));
    prop::collection::vec(emitter, 1..5).prop_flat_map(|emitters| {
        let total: usize = emitters
            .iter()
            .map(|(l, f)| l + f.map_or(0, |(_, m)| m))
            .sum();
        (
            Just(emitters),
            prop::collection::vec(0usize..1000, total),
            prop::collection::vec(prop::bool::weighted(0.15), total),
            prop::collection::vec(0usize..=total, 0..3),
        )
            .prop_map(|(emitters, order_seed, repeated, cuts)| SharedRun {
                emitters,
                order_seed,
                repeated,
                cuts,
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn every_action_of_every_emitter_and_branch_appears_once(plan in shared_run()) {
        let mut keys = Keyring::default();
        let mut sequences: Vec<Vec<String>> = Vec::new();
        let mut want: Vec<String> = Vec::new();
        for (e, &(len, fork)) in plan.emitters.iter().enumerate() {
            let key = SigningKey::from_bytes(&[e as u8 + 1; 32]);
            keys.add(&format!("key-{e}"), &aeplens::canon::hex(key.verifying_key().as_bytes())).unwrap();
            let (lines, tools) = shared_run_emitter(e, len, fork);
            sequences.extend(lines);
            want.extend(tools);
        }
        // A random merge keeping each sequence's order; some lines written twice.
        let mut next = vec![0usize; sequences.len()];
        let mut stored: Vec<&str> = Vec::new();
        for (k, seed) in plan.order_seed.iter().enumerate() {
            let open: Vec<usize> = (0..sequences.len()).filter(|&s| next[s] < sequences[s].len()).collect();
            let s = open[seed % open.len()];
            stored.push(&sequences[s][next[s]]);
            if plan.repeated[k] {
                stored.push(&sequences[s][next[s]]);
            }
            next[s] += 1;
        }
        let mut bounds: Vec<usize> = plan.cuts.iter().map(|&c| c.min(stored.len())).collect();
        bounds.extend([0, stored.len()]);
        bounds.sort_unstable();
        bounds.dedup();
        let inputs: Vec<_> = bounds
            .windows(2)
            .enumerate()
            .map(|(f, w)| {
                let text: String = stored[w[0]..w[1]].iter().flat_map(|l| [*l, "\n"]).collect();
                parse_input(format!("part-{f}.ndjson").as_str().into(), text.as_bytes())
            })
            .collect();
        let report = verify_inputs(&inputs, &keys, &Options::default(), None);
        prop_assert!(report.records.iter().all(|r| r.authenticity.status == Some(AuthStatus::Valid)));
        let corpus = aeplens::load::Corpus::new(inputs);
        let analysis = aeplens::analysis::Analysis::build(&corpus, &aeplens::analysis::lease::SuppliedLeases::default());
        let g = &analysis.graph;
        let mut got: Vec<String> = (0..g.nodes.len() as u32)
            .map(|n| g.facts(&corpus, n).and_then(|f| f.tool()).unwrap_or("").to_string())
            .collect();
        got.sort();
        want.sort();
        prop_assert_eq!(got, want);
        // No snapshot of one branch is read as a rewrite of the other's.
        prop_assert!(analysis.rewritten(&corpus).is_empty());
    }
}
