//! Every file of `tests/fixtures/reference-stores/` (whole stores written by the reference
//! emitter) gets the spec's verdict: authenticity per record, the e.1 file-order status,
//! the chain paths of the link graph, and the named findings. Where aeplens differs from
//! the reference verifier (`expected.json` → `reference_*`, `chain`), the table below says
//! so and why (the file's `spec_note`).

use crate::common;

use aeplens::analysis::evidence::Evidence;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::load::{Corpus, load_paths};
use aeplens::model::finding::{Finding, Severity};
use aeplens::verify::chain::ChainStatus;
use aeplens::verify::{AuthStatus, Keyring, Options, TimestampState};
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;

fn stores() -> std::path::PathBuf {
    fixtures().join("reference-stores")
}

fn open(names: &[&str], keys: &Keyring) -> Evidence {
    let paths: Vec<String> = names
        .iter()
        .map(|n| stores().join(n).display().to_string())
        .collect();
    Evidence::open(
        Corpus::new(load_paths(&paths)),
        keys,
        &Options::default(),
        &SuppliedLeases::default(),
    )
}

/// `file#index` as `expected.json` names records.
fn name(path: &str, index: usize) -> String {
    let rel = path
        .split_once("reference-stores/")
        .map_or(path, |(_, rel)| rel);
    format!("{rel}#{index}")
}

/// Where the spec's authenticity verdict differs from the reference's, and why.
const AUTH_DIFFERS: &[(&str, &[Option<AuthStatus>], &str)] = {
    use AuthStatus::*;
    const V: Option<AuthStatus> = Some(Valid);
    const I: Option<AuthStatus> = Some(Invalid);
    const B: Option<AuthStatus> = Some(BindingMismatch);
    &[
        (
            "tsa_local_default_v03.ndjson",
            &[V, V, V, V],
            "b.1/G3: S1 excludes the timestamp_proof added after signing",
        ),
        (
            "tsa_log_entries.ndjson",
            &[V, V, V, V],
            "b.1/G3: the v0.3 records verify once timestamp_proof is excluded",
        ),
        (
            "tampered_tsa_v03.ndjson",
            &[V, V, V, V],
            "b.1: only the unsigned timestamp_proof was edited",
        ),
        (
            "tampered_null_absent.ndjson",
            &[B, I, I, I, I],
            "D10/G1: #0's outer record no longer equals the predicate",
        ),
        (
            "tampered_dsse_envelopes.ndjson",
            &[I, B, I, I, I, B],
            "D2/G6 (#2, #3 carry two signatures), D10+D11/G1+G2 (#1), D11/G2 (#5)",
        ),
        (
            "signer_sig_spellings.ndjson",
            &[V, I, I, I, V, I],
            "b.4: whitespace in sig is rejected (#1, #2, #5), hex S1 rejected (#3)",
        ),
        (
            "key_not_in_keyring.ndjson",
            &[None, None, None],
            "unknown key: not evaluated (unverifiable), never a bad signature",
        ),
    ]
};

/// A path: its status and its records' indices in link order.
type Path = (ChainStatus, &'static [usize]);

/// The link-graph paths the spec notes name, per file alone.
const PATHS: &[(&str, &[Path])] = {
    use ChainStatus::*;
    &[
        (
            "three_emitters_one_store.ndjson",
            &[
                (Intact, &[0, 5, 6]),
                (Intact, &[1, 3, 8]),
                (Intact, &[2, 4, 7]),
            ],
        ),
        (
            "subagents_default_action_ids.ndjson",
            &[(Intact, &[0, 3]), (Intact, &[1, 4]), (Intact, &[2, 5])],
        ),
        ("rotated/2026-09-15.ndjson", &[(Orphaned, &[0, 1])]),
        ("rotated/2026-09-16.ndjson", &[(Orphaned, &[0, 1, 2])]),
        (
            "retried_append_middle.ndjson",
            &[(Intact, &[0, 1, 2, 4, 5])],
        ),
        ("retried_append_genesis.ndjson", &[(Intact, &[0, 2, 3, 4])]),
        (
            "fork_parallel_emit.ndjson",
            &[(Intact, &[0, 1, 2]), (Intact, &[0, 1, 3, 4])],
        ),
        (
            "fork_resumed_checkpoint.ndjson",
            &[(Intact, &[0, 1, 2, 3]), (Intact, &[0, 1, 6])],
        ),
        (
            "fork_branches_assembled.ndjson",
            &[(Intact, &[0, 1, 2]), (Intact, &[0, 1, 3])],
        ),
        (
            "tsa_log_entries.ndjson",
            &[(Intact, &[0, 1, 2]), (NotPresent, &[3])],
        ),
        (
            "new_emitter_new_key_same_run.ndjson",
            &[(Intact, &[0, 1, 2]), (Intact, &[3, 4])],
        ),
        (
            "unicode_ids_and_values.ndjson",
            &[(Intact, &[0, 1]), (Intact, &[2, 3]), (NotPresent, &[4])],
        ),
        (
            "tampered_tsa_v03.ndjson",
            &[(Intact, &[0, 1]), (Orphaned, &[2]), (Orphaned, &[3])],
        ),
        (
            "tampered_tsa_dsse.ndjson",
            &[(Intact, &[0, 1]), (Orphaned, &[2]), (Orphaned, &[3])],
        ),
        (
            "append_lost_io_error.ndjson",
            &[(NotPresent, &[0]), (Orphaned, &[1, 2, 3, 4])],
        ),
        (
            "key_not_in_keyring.ndjson",
            &[(Intact, &[0, 1]), (NotPresent, &[2])],
        ),
        ("bulk_250_actions_dsse.ndjson", &[(NotPresent, &[0])]),
        // #3 is the genesis; #4 and #5 are later copies of #1 and #2's H.
        ("tampered_dsse_envelopes.ndjson", &[(Intact, &[3, 0, 1, 2])]),
    ]
};

/// Timestamp verdicts per record (d.3/d.4), where a file carries proofs.
const TIMESTAMPS: &[(&str, &[Option<TimestampState>])] = {
    use TimestampState::*;
    const C: Option<TimestampState> = Some(LocalConsistent);
    const X: Option<TimestampState> = Some(LocalInconsistent);
    const O: Option<TimestampState> = Some(Opaque);
    &[
        ("tsa_local_default_v03.ndjson", &[C, C, C, C]),
        // The authority name does not decide the recipe.
        ("tsa_custom_authority_dsse.ndjson", &[C, C, C, C]),
        // A logIndex is not the local recipe.
        ("tsa_log_entries.ndjson", &[O, O, O, O]),
        ("proof_passed_in_options.ndjson", &[O, O, O]),
        // #2 renamed but still recomputes; #1 and #3 edited: never opaque.
        ("tampered_tsa_v03.ndjson", &[C, X, C, X]),
        // #1 proof removed; #2 copied from #0 (its authority is consistent on #0);
        // #3 back-dated with the proof recomputed: undetectable.
        ("tampered_tsa_dsse.ndjson", &[C, None, X, C]),
    ]
};

fn findings_of<'a>(ev: &'a Evidence, id: &str) -> Vec<&'a Finding> {
    ev.findings.iter().filter(|f| f.id == id).collect()
}

/// The `file#index` names of a list of `{path, index}` in a finding's evidence.
fn records_named(v: &Value, key: &str) -> BTreeSet<String> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            name(
                r["path"].as_str().unwrap(),
                r["index"].as_u64().unwrap() as usize,
            )
        })
        .collect()
}

#[test]
fn every_store_gets_the_spec_verdict() {
    let expected = read_json(&stores().join("expected.json"));
    let keys = keyring(&stores().join("keys.json"));
    let files = expected["files"].as_object().unwrap();
    let mut checked_records = 0;
    for (file, want) in files {
        if want["kind"] == "sidecar" || want["records"].as_array().is_none() {
            continue;
        }
        let ev = open(&[file], &keys);
        let report = &ev.report;
        let records = want["records"].as_array().unwrap();
        assert_eq!(report.records.len(), records.len(), "{file}: records");

        // Authenticity: the reference's verdict unless the table says the spec differs.
        let differs = AUTH_DIFFERS.iter().find(|(f, _, _)| f == file);
        for (i, (got, rec)) in report.records.iter().zip(records).enumerate() {
            let at = format!("{file} #{i}");
            assert_eq!(
                got.canonical_sha256.to_string(),
                rec["canonical_sha256"],
                "{at}: H"
            );
            let status = got.authenticity.status;
            match differs {
                Some((_, spec, why)) => {
                    assert_eq!(status, spec[i], "{at} ({why}): {:?}", got.authenticity);
                }
                None if rec["reference_signature_valid"] == true => {
                    assert_eq!(
                        status,
                        Some(AuthStatus::Valid),
                        "{at}: {:?}",
                        got.authenticity
                    );
                }
                None => assert!(
                    matches!(
                        status,
                        Some(AuthStatus::Invalid | AuthStatus::BindingMismatch)
                    ),
                    "{at}: {:?}",
                    got.authenticity
                ),
            }
            checked_records += 1;
        }

        // File order: the exact e.1 status (what the reference's chain check reads as
        // valid/broken, without its blind spots G4/G5).
        let chain = &report.chains[0];
        let e1 = &want["spec_e1_file_order"];
        assert_eq!(
            chain.status.map(ChainStatus::name),
            e1["status"].as_str(),
            "{file}: file order"
        );
        assert_eq!(
            chain.broken_at.map(|b| b as u64),
            e1["broken_at"].as_u64(),
            "{file}: broken_at"
        );
        if want["chain"]["valid"] == false {
            assert_eq!(chain.status, Some(ChainStatus::Broken), "{file}");
        }

        // The link graph over this file agrees with the reference's facts.
        let graph = &want["link_graph"];
        if graph["scope"] == "file" {
            let heads: BTreeSet<String> = report
                .links
                .paths
                .iter()
                .filter(|p| p.continues.is_none())
                .filter_map(|p| p.records.first())
                .map(|r| name(&r.path, r.index))
                .collect();
            // A later copy of a duplicated record is not a vertex of its own.
            let copies: BTreeSet<&str> = graph["duplicates"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|d| d["lines"].as_array().unwrap()[1..].iter())
                .map(|l| l.as_str().unwrap())
                .collect();
            let want_heads: BTreeSet<String> = graph["heads"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h["record"].as_str().unwrap())
                .filter(|h| !copies.contains(h))
                .map(str::to_string)
                .collect();
            assert_eq!(heads, want_heads, "{file}: heads");
        }
        let forks = findings_of(&ev, "F-CHAIN-FORK");
        assert_eq!(
            forks.len(),
            graph["forks"].as_array().unwrap().len(),
            "{file}: forks"
        );
        for (fork, want_fork) in forks.iter().zip(graph["forks"].as_array().unwrap()) {
            assert_eq!(fork.severity, Severity::High);
            let branches = records_named(&fork.evidence.value(), "branches");
            let want: BTreeSet<String> = want_fork["successors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect();
            assert_eq!(branches, want, "{file}: fork branches");
        }
        let dups = findings_of(&ev, "F-DUPLICATE-RECORD");
        let want_dups = graph["duplicates"].as_array().unwrap();
        assert_eq!(dups.len(), want_dups.len(), "{file}: duplicates");
        for (dup, want_dup) in dups.iter().zip(want_dups) {
            let lines = want_dup["lines"].as_array().unwrap();
            let copy = format!("{}#{}", file, dup.evidence.value()["copy"]["index"]);
            assert_eq!(copy, lines[1].as_str().unwrap(), "{file}: duplicate copy");
            // Byte-identical lines are a retried append (info); the envelope file's
            // copies differ in their signature parts (high).
            let high = *file == "tampered_dsse_envelopes.ndjson";
            let want_sev = if high { Severity::High } else { Severity::Info };
            assert_eq!(dup.severity, want_sev, "{file}: duplicate severity");
        }
        let gaps = findings_of(&ev, "F-CHAIN-GAP");
        let dangling = graph["dangling"].as_array().unwrap();
        assert_eq!(gaps.len(), dangling.len(), "{file}: gaps");
        for (gap, want_after) in gaps.iter().zip(dangling) {
            let after = format!("{}#{}", file, gap.evidence.value()["after"]["index"]);
            assert_eq!(after, want_after.as_str().unwrap(), "{file}: gap");
        }

        if let Some((_, paths)) = PATHS.iter().find(|(f, _)| f == file) {
            let got: Vec<(ChainStatus, Vec<usize>)> = report
                .links
                .paths
                .iter()
                .map(|p| (p.status, p.records.iter().map(|(_, index)| index).collect()))
                .collect();
            let want: Vec<(ChainStatus, Vec<usize>)> =
                paths.iter().map(|(s, r)| (*s, r.to_vec())).collect();
            assert_eq!(got, want, "{file}: chain paths");
        } else if report.links.paths.len() == 1 {
            // One emitter, one path through every distinct record.
            let p = &report.links.paths[0];
            let n = report
                .records
                .iter()
                .map(|r| &r.canonical_sha256)
                .collect::<BTreeSet<_>>()
                .len();
            let status = if n == 1 {
                ChainStatus::NotPresent
            } else {
                ChainStatus::Intact
            };
            assert_eq!((p.status, p.records.len()), (status, n), "{file}: path");
        }

        if let Some((_, states)) = TIMESTAMPS.iter().find(|(f, _)| f == file) {
            let got: Vec<_> = report
                .records
                .iter()
                .map(|r| r.authenticity.timestamp)
                .collect();
            assert_eq!(got, states.to_vec(), "{file}: timestamps");
        }
        assert!(
            findings_of(&ev, "F-ED25519-LENIENT-ONLY").is_empty(),
            "{file}: a genuine signature must not read as lenient-only"
        );
    }
    assert_eq!(checked_records, 147);
}

#[test]
fn chain_verdict_follows_the_graph() {
    let keys = keyring(&stores().join("keys.json"));
    let passes = |names: &[&str]| open(names, &keys).report.links.passes();
    // Interleaved emitters: file order broken, every path intact.
    assert!(passes(&["three_emitters_one_store.ndjson"]));
    assert!(passes(&["subagents_default_action_ids.ndjson"]));
    assert!(passes(&["retried_append_middle.ndjson"]));
    // A fork is never a passing chain, though each branch links correctly.
    assert!(!passes(&["fork_parallel_emit.ndjson"]));
    assert!(!passes(&["fork_resumed_checkpoint.ndjson"]));
    // A lost append: an intact prefix and an orphaned suffix.
    assert!(!passes(&["append_lost_io_error.ndjson"]));
    // One H from two different records (signature parts differ).
    assert!(!passes(&["tampered_dsse_envelopes.ndjson"]));
    // A day file alone is orphaned; the rotated set is one chain.
    assert!(!passes(&["rotated/2026-09-15.ndjson"]));
    assert!(passes(&["rotated"]));
}

#[test]
fn a_rotated_chain_is_one_path_across_its_files() {
    let keys = keyring(&stores().join("keys.json"));
    let ev = open(&["rotated"], &keys);
    let paths = &ev.report.links.paths;
    assert_eq!(paths.len(), 1);
    assert_eq!(paths[0].status, ChainStatus::Intact);
    assert_eq!(paths[0].records.len(), 8);
    let files: Vec<&str> = paths[0].records.files().collect();
    assert_eq!(files.len(), 3);
    assert!(files[0].ends_with("2026-09-14.ndjson"));
    assert!(files[2].ends_with("2026-09-16.ndjson"));
    // The second file's first record is linked, not orphaned, with day 1 loaded.
    assert!(
        ev.report
            .records
            .iter()
            .all(|r| r.chain.status == Some(ChainStatus::Intact))
    );
    // File order per file still says what each file alone says.
    let orders: Vec<_> = ev.report.chains.iter().map(|c| c.status).collect();
    assert_eq!(
        orders,
        [
            Some(ChainStatus::Intact),
            Some(ChainStatus::Orphaned),
            Some(ChainStatus::Orphaned)
        ]
    );
    assert!(findings_of(&ev, "F-CHAIN-GAP").is_empty());

    // Day 2 missing: day 3's first link resolves to nothing while day 1 is loaded.
    let ev = open(
        &["rotated/2026-09-14.ndjson", "rotated/2026-09-16.ndjson"],
        &keys,
    );
    let gaps = findings_of(&ev, "F-CHAIN-GAP");
    assert_eq!(gaps.len(), 1);
    assert!(
        gaps[0].evidence.value()["before"]["path"]
            .as_str()
            .unwrap()
            .ends_with("2026-09-14.ndjson")
    );
    assert_eq!(gaps[0].evidence.value()["before"]["index"], 2);
    assert!(
        gaps[0].evidence.value()["after"]["path"]
            .as_str()
            .unwrap()
            .ends_with("2026-09-16.ndjson")
    );
    assert_eq!(gaps[0].evidence.value()["after"]["index"], 0);
    // Day 2 alone: orphaned, but no gap (nothing earlier of its emitter is loaded).
    let ev = open(&["rotated/2026-09-15.ndjson"], &keys);
    assert!(findings_of(&ev, "F-CHAIN-GAP").is_empty());
}

#[test]
fn spellings_timestamps_and_ids_are_named() {
    let keys = keyring(&stores().join("keys.json"));
    let ev = open(&["signer_sig_spellings.ndjson"], &keys);
    let spelling: Vec<(usize, String)> = ev
        .report
        .records
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            r.findings
                .iter()
                .filter(|f| f.id == "F-SIG-ENCODING")
                .map(move |f| {
                    (
                        i,
                        f.evidence.value()["spelling"].as_str().unwrap().to_string(),
                    )
                })
        })
        .collect();
    let whitespace = "verifies once whitespace is removed".to_string();
    assert_eq!(
        spelling,
        [
            (1, whitespace.clone()),
            (2, whitespace.clone()),
            (3, "S1 signature written in hex".to_string()),
            (5, whitespace)
        ]
    );
    assert!(
        findings_of(&ev, "F-SIG-ENCODING")
            .iter()
            .all(|f| f.severity == Severity::Info)
    );
    // #0 and #4 are valid with a note on the spelling.
    for i in [0, 4] {
        let a = &ev.report.records[i].authenticity;
        assert!(
            a.notes
                .iter()
                .any(|n| n.contains("URL-safe") || n.contains("padding")),
            "{a:?}"
        );
    }

    let ev = open(&["proof_passed_in_options.ndjson"], &keys);
    for r in &ev.report.records {
        assert!(
            r.authenticity
                .notes
                .iter()
                .any(|n| n.contains("timestamp_proof is signed")),
            "{:?}",
            r.authenticity
        );
    }
    let ev = open(&["tsa_local_default_v03.ndjson"], &keys);
    for r in &ev.report.records {
        assert!(
            r.authenticity
                .notes
                .iter()
                .any(|n| n.contains("not covered")),
            "{:?}",
            r.authenticity
        );
    }

    let ev = open(&["unicode_ids_and_values.ndjson"], &keys);
    let confusable = findings_of(&ev, "F-CONFUSABLE-ID");
    let text: Vec<&str> = confusable.iter().map(|f| f.message.as_str()).collect();
    assert!(
        text.iter()
            .any(|m| m.contains("not in Unicode NFC") && m.contains("step-n\\u{303}")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|m| m.contains("op-\\u{3bf}") && m.contains("\"op-o\"")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|m| m.contains("step-\\u{f1}") && m.contains("step-n\\u{303}")),
        "{text:?}"
    );
    assert!(!findings_of(&ev, "F-TERMINAL-CONTROL").is_empty());

    // With the key supplied, the unknown-key records verify.
    let mut with_four = keyring(&stores().join("keys.json"));
    with_four
        .add(
            "fixture-key-4",
            "7c92f26072ba7a692e70c0b1236a505bce2487a76ca7edcaf4014b8cb5a4841c",
        )
        .unwrap();
    let ev = open(&["key_not_in_keyring.ndjson"], &with_four);
    assert!(
        ev.report
            .records
            .iter()
            .all(|r| r.authenticity.status == Some(AuthStatus::Valid))
    );
}

#[test]
fn a_torn_last_line_is_reported_and_the_rest_verified() {
    let keys = keyring(&stores().join("keys.json"));
    let ev = open(&["crash_partial_last_line.ndjson"], &keys);
    let errors = &ev.report.inputs[0].errors;
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].line, Some(5));
    assert_eq!(ev.report.records.len(), 4);
    assert!(
        ev.report
            .records
            .iter()
            .all(|r| r.authenticity.status == Some(AuthStatus::Valid))
    );
    assert!(ev.report.links.passes());
}

#[test]
fn analysis_findings_the_notes_name() {
    let keys = keyring(&stores().join("keys.json"));
    let ev = open(&["caller_reused_objects.ndjson"], &keys);
    assert!(
        findings_of(&ev, "F-ACTION-REWRITTEN")
            .iter()
            .any(|f| f.action_ids.iter().any(|a| a == "al-0"))
    );
    let ev = open(&["reapproval_after_denial.ndjson"], &keys);
    assert!(!findings_of(&ev, "F-DECISION-SHADOWED").is_empty());
}
