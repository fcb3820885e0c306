//! Action identity (verification.md e.3): an action is (emitter chain, action id), never
//! (run, action id). For every file of the reference stores and the ecosystem fixtures,
//! opened alone, the number of actions aeplens projects equals the number of distinct
//! (chain, id) pairs computed here from the raw lines: records linked by their
//! `prev_record_hash` to the first record of that chain hash, an action new unless a
//! record it descends from (or an earlier one of its own) holds its id, copies of one
//! record adding nothing, and records with no link that nothing links to grouped by
//! (run, signer key id). The one input taken from aeplens besides the chain hash is where
//! the link graph puts a gap (F-CHAIN-GAP: the suffix continues its emitter's chain),
//! which `tests/verify/link_graph_properties.rs` checks on its own. The sub-agent store is named
//! too: its `spec_note` asks for six actions under two ids in one run.

use crate::common;

use aeplens::analysis::evidence::Evidence;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::load::{Corpus, load_paths};
use aeplens::verify::Options;
use common::*;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

/// The records of a file as raw JSON with their own text: one a line, or the whole
/// file (an array's elements, or one object).
fn raw_records(path: &Path) -> Vec<(Value, String)> {
    let bytes = std::fs::read(path).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim_start_matches('\u{feff}');
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return match v {
            Value::Array(items) => items
                .into_iter()
                .filter(Value::is_object)
                .map(|v| {
                    let t = v.to_string();
                    (v, t)
                })
                .collect(),
            v @ Value::Object(_) => vec![(v, text.to_string())],
            _ => Vec::new(),
        };
    }
    text.lines()
        .map(str::trim)
        .filter_map(|l| Some((serde_json::from_str::<Value>(l).ok()?, l.to_string())))
        .filter(|(v, _)| v.is_object())
        .collect()
}

/// Distinct (chain, id) pairs of `records`, plus one per action without an id; `gaps`
/// maps a record whose link resolves to nothing to the last record of its emitter
/// before it.
fn distinct_actions(records: &[(Value, String)], gaps: &HashMap<usize, usize>) -> usize {
    let hashes: Vec<String> = records
        .iter()
        .map(|(_, text)| {
            let json = aeplens::load::parser::parse(text).unwrap();
            aeplens::canon::canonical_sha256(&json).to_string()
        })
        .collect();
    let first_of = |h: &str| hashes.iter().position(|x| x == h);
    let vertex: Vec<usize> = hashes.iter().map(|h| first_of(h).unwrap()).collect();
    let link = |i: usize| records[i].0.get("prev_record_hash");
    let prev: Vec<Option<usize>> = (0..records.len())
        .map(|i| match link(i) {
            Some(Value::String(h)) => first_of(h).filter(|&p| p != i).or(gaps.get(&i).copied()),
            _ => None,
        })
        .collect();
    let has_successor: HashSet<usize> = (0..records.len())
        .filter(|&i| vertex[i] == i)
        .filter_map(|i| prev[i].map(|p| vertex[p]))
        .collect();
    let ids_of = |i: usize| -> Vec<Option<String>> {
        let actions = records[i].0.get("actions").and_then(Value::as_array);
        (actions.into_iter().flatten())
            .filter(|a| a.is_object())
            .map(|a| {
                a.get("action_id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .collect()
    };
    let text_of = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    let mut unlinked: HashMap<(String, String), HashSet<String>> = HashMap::new();
    let mut count = 0;
    for i in 0..records.len() {
        let ids = ids_of(i);
        if vertex[i] != i {
            continue; // a copy of a record already counted
        }
        let no_link = matches!(link(i), None | Some(Value::Null));
        if no_link && prev[i].is_none() && !has_successor.contains(&i) {
            let r = &records[i].0;
            let key = (
                text_of(r.get("run_id")),
                text_of(r.pointer("/signature/key_id")),
            );
            let seen = unlinked.entry(key).or_default();
            for id in ids {
                match id {
                    Some(id) => count += usize::from(seen.insert(id)),
                    None => count += 1,
                }
            }
            continue;
        }
        // The ids held by the records `i` descends from.
        let mut held: HashSet<String> = HashSet::new();
        let mut at = prev[i];
        let mut steps = 0;
        while let Some(p) = at.filter(|_| steps <= records.len()) {
            held.extend(ids_of(p).into_iter().flatten());
            at = prev[vertex[p]];
            steps += 1;
        }
        for id in ids {
            match id {
                Some(id) => count += usize::from(held.insert(id)),
                None => count += 1,
            }
        }
    }
    count
}

fn open(path: &Path) -> Evidence {
    Evidence::open(
        Corpus::new(load_paths(&[path.display().to_string()])),
        &fixture_keys(),
        &Options::default(),
        &SuppliedLeases::default(),
    )
}

/// Where the link graph puts each gap: the flat index after it → the one before.
fn gaps(ev: &Evidence) -> HashMap<usize, usize> {
    let index_of = |at: &Value| at["index"].as_u64().unwrap() as usize;
    (ev.report.links.findings.iter())
        .filter(|(_, f)| f.id == "F-CHAIN-GAP")
        .map(|(_, f)| {
            let e = f.evidence.value();
            (index_of(&e["after"]), index_of(&e["before"]))
        })
        .collect()
}

#[test]
fn every_fixture_file_projects_each_emitter_chains_actions_once() {
    let files = evidence_files(&fixtures(), None);
    let mut checked = 0;
    let mut with_actions = BTreeSet::new();
    for (path, _) in &files {
        let ev = open(path);
        let raw = raw_records(path);
        if ev.corpus.len() != raw.len() {
            // A file the loader reads otherwise (a document that is one record, a file
            // with lines the loader refuses): the count below would compare other sets.
            assert!(
                raw.is_empty() || ev.corpus.errors().count() > 0 || raw.len() == 1,
                "{}: {} records loaded, {} read here",
                path.display(),
                ev.corpus.len(),
                raw.len()
            );
            continue;
        }
        let projected = ev.analysis.envelopes(&ev.corpus).len();
        assert_eq!(ev.analysis.graph.nodes.len(), projected);
        let want = distinct_actions(&raw, &gaps(&ev));
        assert_eq!(projected, want, "{}", path.display());
        checked += 1;
        if want > 0 {
            with_actions.insert(path.display().to_string());
        }
    }
    assert!(
        checked >= 60 && with_actions.len() >= 40,
        "{checked} files, {with_actions:?}"
    );
}

#[test]
fn sub_agents_sharing_a_run_and_default_ids_are_six_actions() {
    // spec_note: three emitters (lead, researcher, writer) alternate in one run, each
    // with action-0 and action-1.
    let path = fixtures().join("reference-stores/subagents_default_action_ids.ndjson");
    let ev = open(&path);
    let g = &ev.analysis.graph;
    assert_eq!(g.nodes.len(), 6);
    for id in ["action-0", "action-1"] {
        let nodes = g.find_in_run(&ev.corpus, "run-pub-atlas", id);
        let heads: Vec<String> = (nodes.iter())
            .map(|n| g.chain_name(&ev.corpus, *n).head)
            .map(|h| h.rsplit('/').next().unwrap().to_string())
            .collect();
        assert_eq!(
            heads,
            [
                "subagents_default_action_ids.ndjson:1",
                "subagents_default_action_ids.ndjson:2",
                "subagents_default_action_ids.ndjson:3"
            ],
            "{id}"
        );
        // Nothing picks one of several silently.
        assert_eq!(g.find(&ev.corpus, "run-pub-atlas", id), None);
    }
    let tools: BTreeSet<&str> = (0..6)
        .filter_map(|n| g.facts(&ev.corpus, n)?.tool())
        .collect();
    assert_eq!(tools.len(), 6, "{tools:?}");
}

#[test]
fn a_replayed_fork_is_two_executions_and_no_rewrite() {
    // spec_note: r2 (the wire transfer) and its replay r2' both follow r1.
    for file in [
        "fork_resumed_checkpoint.ndjson",
        "fork_branches_assembled.ndjson",
    ] {
        let ev = open(&fixtures().join("reference-stores").join(file));
        let g = &ev.analysis.graph;
        let wires = g.find_in_run(&ev.corpus, "run-pub-ember", "emb-2");
        assert_eq!(wires.len(), 2, "{file}");
        for w in &wires {
            assert_eq!(g.chain_name(&ev.corpus, *w).start.name(), "fork branch");
        }
        assert!(ev.analysis.rewritten(&ev.corpus).is_empty(), "{file}");
        assert!(
            !ev.findings.iter().any(|f| f.id == "F-ACTION-REWRITTEN"),
            "{file}"
        );
        // The actions before the fork are one each.
        assert_eq!(g.find_in_run(&ev.corpus, "run-pub-ember", "emb-1").len(), 1);
    }
}

#[test]
fn show_lists_the_chains_of_an_id_and_takes_one_with_chain() {
    let path = fixtures().join("reference-stores/subagents_default_action_ids.ndjson");
    let path = path.display().to_string();
    let keys = fixtures().join("reference-stores/keys.json");
    let keys = keys.display().to_string();
    let base = [
        "show",
        "action-1",
        "--no-index",
        "--keys",
        &keys,
        "--format",
        "json",
    ];
    let (code, out, err) = aeplens(&[&base[..], &["--run", "run-pub-atlas", &path]].concat());
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("pick one with --chain"), "{err}");
    for line in 1..=3 {
        assert!(err.contains(&format!("--chain {path}:{line}")), "{err}");
    }
    let chain = "subagents_default_action_ids.ndjson:2";
    let (code, out, err) = aeplens(&[&base[..], &["--chain", chain, &path]].concat());
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["chain"]["head"], format!("{path}:2"));
    assert_eq!(doc["chain"]["signer"], "fixture-key-3");
    assert_eq!(doc["source"], format!("{path}:5"));
}

#[test]
fn diff_pairs_each_emitter_chains_action_with_its_own() {
    // The writer's second record edited: one action of one emitter changed, no other
    // emitter's action-1 paired with it, nothing added or removed.
    let store = fixtures().join("reference-stores/subagents_default_action_ids.ndjson");
    let scratch = run_dir("identity-diff");
    std::fs::create_dir_all(&scratch).unwrap();
    let text = std::fs::read_to_string(&store).unwrap();
    let edited = text.replacen(
        "\"tool_name\":\"cite_source\"",
        "\"tool_name\":\"cite_sources\"",
        1,
    );
    assert_ne!(edited, text);
    let b = scratch.join("edited.ndjson");
    std::fs::write(&b, edited).unwrap();
    let keys = fixtures().join("reference-stores/keys.json");
    let (_, out, err) = aeplens(&[
        "diff",
        "--no-index",
        "--format",
        "json",
        "--keys",
        &keys.display().to_string(),
        &store.display().to_string(),
        &b.display().to_string(),
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let counts = |member: &str| doc[member].as_array().map_or(0, Vec::len);
    assert_eq!(counts("changed"), 1, "{out}");
    assert_eq!((counts("added"), counts("removed")), (0, 0), "{out}");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Findings belong to an action identity (issue: one per (run, id) hid the replayed
/// branch's own): on a replayed fork the wire transfer of each branch has its own V11,
/// named by its chain and tool, and `show --chain` of the replayed branch lists it; the
/// explorer's "findings on this action" reads the same (`Analysis::findings_naming`).
#[test]
fn each_branch_of_a_fork_has_its_own_findings() {
    let path = fixtures().join("reference-stores/fork_resumed_checkpoint.ndjson");
    let ev = open(&path);
    let on_wires: Vec<_> = (ev.findings.iter())
        .filter(|f| f.id == "V11" && f.action_ids == ["emb-2"])
        .collect();
    let chains: Vec<_> = on_wires.iter().map(|f| f.chain.clone().unwrap()).collect();
    let shown = path.display().to_string();
    assert_eq!(chains, [format!("{shown}:3"), format!("{shown}:7")]);
    assert!(
        on_wires
            .iter()
            .all(|f| f.tool.as_deref() == Some("wire_transfer"))
    );
    let g = &ev.analysis.graph;
    for wire in g.find_in_run(&ev.corpus, "run-pub-ember", "emb-2") {
        let head = g.chain_name(&ev.corpus, wire).head;
        let own: Vec<_> = (ev.findings.iter())
            .filter(|f| g.named_by(&ev.corpus, f).contains(&wire))
            .filter(|f| f.id == "V11")
            .collect();
        assert_eq!(own.len(), 1, "{head}");
        assert_eq!(own[0].chain.as_deref(), Some(head.as_str()));
    }
    let keys = fixtures().join("reference-stores/keys.json");
    let (code, out, err) = aeplens(&[
        "show",
        "emb-2",
        "--no-index",
        "--keys",
        &keys.display().to_string(),
        "--format",
        "json",
        "--chain",
        "fork_resumed_checkpoint.ndjson:7",
        &shown,
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let ids: Vec<&str> = (doc["findings"].as_array().unwrap().iter())
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"V11"),
        "the replayed branch's own finding: {out}"
    );
}

/// Two emitters of one run each with an unapproved `action-1` of the same tool: two
/// findings, each saying which (`run / action-1 (edit_file, chain file:line)`), where one
/// keyed by (run, id) and message showed one.
#[test]
fn one_id_on_two_emitters_is_two_findings_each_naming_its_chain() {
    let record = |emitter: &str, prev: Option<String>, actions: usize| {
        let actions: Vec<Value> = (0..actions)
            .map(|i| {
                serde_json::json!({
                    "action_id": format!("action-{i}"),
                    "tool_name": if i == 1 { "edit_file".to_string() } else { format!("read_{emitter}") },
                    "state_changing": i == 1,
                    "side_effect_class": if i == 1 { "mutate-local" } else { "read" },
                    "outcome": "success",
                    "timestamp_ms": 1_780_000_000_000_u64 + i as u64,
                })
            })
            .collect();
        serde_json::json!({
            "schema_version": "aep/v0.3",
            "run_id": "run-two-emitters",
            "actions": actions,
            "created_at_ms": 1_780_000_000_000_u64,
            "prev_record_hash": prev,
            "emitter": emitter,
        })
    };
    let hash = |v: &Value| {
        let json = aeplens::load::parser::parse(&v.to_string()).unwrap();
        aeplens::canon::canonical_sha256(&json).to_string()
    };
    let (lead0, sub0) = (record("lead", None, 1), record("sub", None, 1));
    let lead1 = record("lead", Some(hash(&lead0)), 2);
    let sub1 = record("sub", Some(hash(&sub0)), 2);
    let scratch = run_dir("identity-findings");
    std::fs::create_dir_all(&scratch).unwrap();
    let store = scratch.join("two.ndjson");
    let lines: Vec<String> = [&lead0, &sub0, &lead1, &sub1]
        .iter()
        .map(ToString::to_string)
        .collect();
    std::fs::write(&store, lines.join("\n") + "\n").unwrap();
    let store = store.display().to_string();
    let (_, out, err) = aeplens(&["findings", "--no-index", "--format", "json", &store]);
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let unapproved: Vec<&Value> = (doc["findings"].as_array().unwrap().iter())
        .filter(|f| f["id"] == "F-UNAPPROVED-MUTATION")
        .collect();
    let chains: Vec<&str> = unapproved
        .iter()
        .map(|f| f["chain"].as_str().unwrap())
        .collect();
    assert_eq!(
        chains,
        [format!("{store}:1"), format!("{store}:2")],
        "{out}"
    );
    assert_eq!(unapproved[0]["message"], unapproved[1]["message"]);
    assert_ne!(unapproved[0]["fingerprint"], unapproved[1]["fingerprint"]);
    let (_, text, _) = aeplens(&["findings", "--no-index", "--format", "text", &store]);
    for line in 1..=2 {
        let said = format!("run-two-emitters / action-1 (edit_file, chain {store}:{line})");
        assert!(text.contains(&said), "{said}: {text}");
    }
    assert!(text.contains("2 findings: 2 high"), "{text}");
}
