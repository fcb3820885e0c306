//! `check` and the commands verify evidence as it streams in, a chunk at a time, letting
//! go of each verified record's tree (read again from its file when a finding needs it);
//! the explorer and the library's `Evidence::open` verify a corpus loaded whole. All must
//! say exactly the same thing — every verdict, finding, chain and error — on every
//! fixture, and whatever the chunk size.

use crate::common;

use aeplens::analysis::evidence::{Evidence, complete_in_groups};
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::cli::check::json_report;
use aeplens::load::{Corpus, evidence_files, load_paths};
use aeplens::verify::{Keyring, Options, Profile, Trees, verify_paths_in_chunks};
use common::{fixture_keys, fixtures};
use std::fmt::Write as _;

/// The JSON report of `paths` loaded whole, and streamed in `chunk`-byte reads (the
/// records' trees held, and let go: then also how many are not in memory at the end).
fn both(
    paths: &[String],
    chunk: usize,
    keys: &Keyring,
    leases: &SuppliedLeases,
) -> ([String; 2], usize) {
    let options = Options::default();
    let whole = Evidence::open(Corpus::new(load_paths(paths)), keys, &options, leases);
    let whole = json_report(&whole.report, &whole.findings, Profile::Forensic);
    let [(held, _), (let_go, on_disk)] = [Trees::Held, Trees::OnDisk].map(|trees| {
        let (inputs, report, _) =
            verify_paths_in_chunks(paths, chunk, keys, &options, None, trees, &mut |_, _| {});
        let ev = Evidence::verified(Corpus::new(inputs), report, leases, Vec::new());
        let reread: Vec<_> = ev
            .corpus
            .records()
            .filter_map(|r| r.reread_error())
            .collect();
        assert!(reread.is_empty(), "{paths:?}: {reread:?}");
        let on_disk = ev.corpus.records().filter(|r| !r.is_held()).count();
        let json = json_report(&ev.report, &ev.findings, Profile::Forensic);
        (json, on_disk)
    });
    assert!(
        held == let_go,
        "{paths:?} in {chunk}-byte reads: trees held and let go differ"
    );
    ([whole, held], on_disk)
}

/// The fixtures' lease files as `--leases` gives them (their own load errors do not
/// matter here: both sides compared get the same leases).
fn fixture_leases() -> SuppliedLeases {
    let mut leases = SuppliedLeases::default();
    for file in [
        "reference-stores/reapproval_after_denial.leases.ndjson",
        "rfc-final/leases.ndjson",
        "../../assets/demo/leases.ndjson",
    ] {
        let _ = leases.add_file(&fixtures().join(file));
    }
    leases
}

#[test]
fn streamed_and_whole_verdicts_are_identical_on_every_fixture() {
    let (keys, leases) = (fixture_keys(), fixture_leases());
    let root = fixtures().display().to_string();
    let files = evidence_files(std::slice::from_ref(&root));
    assert!(files.len() > 100, "fixtures missing: {}", files.len());
    // Each file alone (whether a record is alone in its file changes its verdict) in
    // reads of a few bytes, then every fixture at once (chains across files) in reads of
    // a few kilobytes and of the command's 8 MiB.
    for file in &files {
        let paths = [file.display().to_string()];
        let ([whole, streamed], _) = both(&paths, 97, &keys, &leases);
        assert!(whole == streamed, "{} in 97-byte reads differs", paths[0]);
    }
    for chunk in [4096, aeplens::load::stream::CHUNK] {
        let paths = [root.clone(), "assets/demo/evidence".to_string()];
        let ([whole, streamed], on_disk) = both(&paths, chunk, &keys, &leases);
        assert!(
            whole == streamed,
            "every fixture in {chunk}-byte reads differs"
        );
        assert!(on_disk > 0, "no record let go");
    }
}

/// More records than one batch of the streamed report, some of them broken lines: the
/// report is still byte for byte what loading whole gives, in input order.
#[test]
fn a_store_of_many_small_records_streams_in_order() {
    let dir = common::run_dir("streaming");
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::new();
    for i in 0..2500 {
        if i % 700 == 3 {
            text.push_str("{\"run_id\": broken\n");
        } else {
            let run = i % 7;
            let _ = writeln!(
                text,
                "{{\"schema_version\":\"aep/v0.3\",\"run_id\":\"run-{run}\",\"actions\":[{{\"action_id\":\"a{i}\",\"tool_name\":\"t\",\"side_effect_class\":\"read\",\"capability_decision\":{{\"decision\":\"allow\"}}}}]}}"
            );
        }
    }
    let store = dir.join("many.ndjson");
    std::fs::write(&store, text).unwrap();
    let paths = vec![store.display().to_string()];
    let keys = Keyring::default();
    for chunk in [1000, 65536] {
        let ([whole, streamed], on_disk) = both(&paths, chunk, &keys, &SuppliedLeases::default());
        assert!(whole == streamed, "{chunk}-byte reads differ");
        // No finding names an action, so no record is read again.
        assert_eq!(on_disk, 2500 - 4, "every record let go");
        assert_eq!(whole.matches("\"canonical_sha256\"").count(), 2500 - 4);
        assert!(
            whole.contains("\"line\": 704"),
            "the broken line is reported"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A store edited after its records were verified and let go: the record a finding needs
/// no longer reads as it was verified, so the finding is left out and that is said as a
/// load error of the store — nothing is concluded from bytes that were not verified. Its
/// tool changed, or only the order of its members (the same canonical form: the line is
/// bound to its bytes, not to what they mean).
#[test]
fn a_record_edited_after_it_was_verified_is_an_error_not_a_finding() {
    let edits = [
        ("\"a2\",\"tool_name\":\"rm\"", "\"a2\",\"tool_name\":\"mv\""),
        (
            "\"action_id\":\"a2\",\"tool_name\":\"rm\"",
            "\"tool_name\":\"rm\",\"action_id\":\"a2\"",
        ),
    ];
    for (from, to) in edits {
        an_edited_record_is_an_error_not_a_finding(from, to);
    }
}

fn an_edited_record_is_an_error_not_a_finding(from: &str, to: &str) {
    let dir = common::run_dir("reread");
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("edited.ndjson");
    // `state_changing` stored as a string: the finding quotes the stored JSON, so its
    // record is read again (stored as a boolean, the finding is made from the verified
    // facts instead: `a_finding_made_from_the_facts_quotes_the_bytes_verified`).
    let record = |action: &str| {
        format!(
            "{{\"schema_version\":\"aep/v0.3\",\"run_id\":\"r\",\"actions\":[{{\"action_id\":\"{action}\",\"tool_name\":\"rm\",\"state_changing\":\"yes\"}}]}}\n"
        )
    };
    let text = [record("a1"), record("a2")].concat();
    std::fs::write(&store, &text).unwrap();
    let leases = SuppliedLeases::default();
    let (inputs, report) = verified_on_disk(&store);
    assert!(inputs[0].records.iter().all(|r| !r.is_held()));
    // The second record changes (same length) before the findings are made.
    assert!(text.contains(from) && from.len() == to.len());
    std::fs::write(&store, text.replacen(from, to, 1)).unwrap();
    let ev = Evidence::verified(Corpus::new(inputs), report, &leases, Vec::new());
    let unapproved: Vec<_> = ev
        .findings
        .iter()
        .filter(|f| f.id == "F-UNAPPROVED-MUTATION")
        .flat_map(|f| f.action_ids.clone())
        .collect();
    assert_eq!(
        unapproved,
        ["a1"],
        "{to}: only the unchanged record's finding"
    );
    let errors: Vec<String> = ev
        .corpus
        .errors()
        .map(aeplens::load::LoadError::render)
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(ev.reread_failures(), 1, "the commands exit 2 on it");
    assert!(
        errors[0].contains(":2") && errors[0].contains("changed after it was verified"),
        "{errors:?}"
    );
    let json = json_report(&ev.report, &ev.findings, Profile::Forensic);
    assert!(
        json.contains("changed after it was verified"),
        "the report says so"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// F-UNAPPROVED-MUTATION made from the facts (its members stored plainly) needs no record
/// read again: a file edited after it was verified changes nothing in it — it quotes the
/// bytes that were verified, never the edited ones.
#[test]
fn a_finding_made_from_the_facts_quotes_the_bytes_verified() {
    let dir = common::run_dir("from-facts");
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("edited.ndjson");
    let text = "{\"schema_version\":\"aep/v0.3\",\"run_id\":\"r\",\"actions\":[{\"action_id\":\"a1\",\"tool_name\":\"rm\",\"state_changing\":true}]}\n";
    std::fs::write(&store, text).unwrap();
    let (inputs, report) = verified_on_disk(&store);
    std::fs::write(&store, text.replace("\"rm\"", "\"mv\"")).unwrap();
    let ev = Evidence::verified(
        Corpus::new(inputs),
        report,
        &SuppliedLeases::default(),
        Vec::new(),
    );
    let found = (ev.findings.iter())
        .find(|f| f.id == "F-UNAPPROVED-MUTATION")
        .expect("made from the facts");
    let evidence = serde_json::to_value(&found.evidence).unwrap();
    assert_eq!(evidence["tool_name"], "rm", "{evidence}");
    assert_eq!(ev.reread_failures(), 0, "no record was read again");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `store` verified as the commands read it, each record let go once verified.
fn verified_on_disk(
    store: &std::path::Path,
) -> (Vec<aeplens::load::Input>, aeplens::verify::Report) {
    let paths = vec![store.display().to_string()];
    let (keys, options) = (Keyring::default(), Options::default());
    let (inputs, report, _) = verify_paths_in_chunks(
        &paths,
        1 << 20,
        &keys,
        &options,
        None,
        Trees::OnDisk,
        &mut |_, _| {},
    );
    (inputs, report)
}

/// The report and findings of `paths` with the analysis over everything at once, and
/// over batches of about `budget` records (`complete_in_groups`).
fn whole_and_in_groups(
    paths: &[String],
    budget: usize,
    keys: &Keyring,
    leases: &SuppliedLeases,
) -> [String; 2] {
    let options = Options::default();
    let verified =
        |trees| verify_paths_in_chunks(paths, 4096, keys, &options, None, trees, &mut |_, _| {});
    let (inputs, report, _) = verified(Trees::OnDisk);
    let whole = Evidence::verified(Corpus::new(inputs), report, leases, Vec::new());
    let whole = json_report(&whole.report, &whole.findings, Profile::Forensic);
    // As `check --no-index` loads: a record keeps only its ids until its batch reads its
    // facts again — every record when there are more than `budget`, else none.
    let (inputs, report, _) = verified(Trees::OnlyIds { after: budget });
    let mut corpus = Corpus::new(inputs);
    let keeping_facts = if corpus.len() > budget { 0 } else { budget };
    let only_ids = |corpus: &Corpus| {
        (corpus.records().skip(keeping_facts)).all(|r| r.keeps_only_ids() || r.span.is_none())
    };
    assert!(
        only_ids(&corpus),
        "{paths:?}: a record of a store keeps its facts"
    );
    // Grouping reads the ids alone: no record reads all its facts again for it.
    let hashes = report.records.iter().map(|r| r.canonical_sha256);
    aeplens::analysis::groups::independent(&corpus, hashes);
    assert!(
        only_ids(&corpus),
        "{paths:?}: grouping read a record's facts again"
    );
    let (report, findings) = complete_in_groups(&mut corpus, report, leases, budget, None);
    // Once analysed, no record of a store keeps its facts or ids: each batch read them
    // again, and let go of them.
    assert!(
        corpus
            .records()
            .all(|r| !r.keeps_facts() || r.span.is_none()),
        "{paths:?}: a record of a store keeps its facts after the analysis"
    );
    let reread: Vec<_> = corpus.records().filter_map(|r| r.reread_error()).collect();
    assert!(reread.is_empty(), "{paths:?}: {reread:?}");
    [whole, json_report(&report, &findings, Profile::Forensic)]
}

#[test]
fn the_analysis_in_groups_finds_what_the_whole_analysis_finds_on_every_fixture() {
    let (keys, leases) = (fixture_keys(), fixture_leases());
    let root = fixtures().display().to_string();
    let files = evidence_files(std::slice::from_ref(&root));
    for file in &files {
        let paths = [file.display().to_string()];
        let [whole, grouped] = whole_and_in_groups(&paths, 1, &keys, &leases);
        assert!(
            whole == grouped,
            "{} in groups of one differs: {}",
            paths[0],
            first_difference(&whole, &grouped)
        );
    }
    // Every fixture at once (links, leases and parents across files), in the smallest
    // batches and in a few larger ones.
    let paths = [root, "assets/demo/evidence".to_string()];
    for budget in [1, 13, 200] {
        let [whole, grouped] = whole_and_in_groups(&paths, budget, &keys, &leases);
        assert!(
            whole == grouped,
            "every fixture in batches of {budget} differs"
        );
    }
}

/// The first line where two texts differ, both ways.
fn first_difference(a: &str, b: &str) -> String {
    let at = a.lines().zip(b.lines()).position(|(x, y)| x != y);
    match at {
        Some(n) => format!(
            "line {}: {:?} / {:?}",
            n + 1,
            a.lines().nth(n),
            b.lines().nth(n)
        ),
        None => format!("{} lines / {} lines", a.lines().count(), b.lines().count()),
    }
}

/// What the analysis reads across runs — a lease's uses, a parent in another run, copies
/// compared within a record chain that passes through another run — is found the same
/// when every run is a batch of its own.
#[test]
fn the_analysis_in_groups_keeps_what_ties_runs_together() {
    use aeplens::model::json::Json;
    use aeplens::verify::sign::{link_to, to_line};
    use serde_json::json;
    let action = |id: &str, extra: serde_json::Value| {
        let mut a = json!({
            "action_id": id, "tool_name": "t", "state_changing": true,
            "timestamp_ms": 1_780_000_000_000u64, "side_effect_class": "mutate-external",
            "capability_decision": {"capability": "c", "subject": "s", "resource": "r",
                "decision": "allow", "approval_mode": "policy-allow-with-receipt"},
        });
        for (k, v) in extra.as_object().unwrap() {
            a[k] = v.clone();
        }
        a
    };
    let lease = |started: u64| {
        json!({"scope_lease_id": "L", "bounded_lease_evidence": {"lease_id": "L",
            "lease_granted_at_ms": 1000, "lease_expires_at_ms": 5000, "max_invocations": 1,
            "execution_started_at_ms": started}})
    };
    let denied_drifted = json!({
        "capability_decision": {"capability": "c", "subject": "s", "resource": "r",
            "decision": "deny", "approval_mode": "re-approval-on-drift"},
        "approval_context_hash": "h1",
        "argument_drift": {"detected": true, "approved_args_digest": "a",
            "observed_args_digest": "b", "resolution": "denied"}});
    let record = |run: &str, actions: Vec<serde_json::Value>| {
        Json::from_serde(&json!({"schema_version": "aep/v0.3", "run_id": run,
            "created_at_ms": 1_780_000_000_000u64, "actions": actions}))
    };
    let linked = |mut records: Vec<Json>| {
        for i in 0..records.len() {
            let (before, rest) = records.split_at_mut(i);
            link_to(&mut rest[0], before.last());
        }
        records
    };
    let dir = common::run_dir("groups");
    std::fs::create_dir_all(&dir).unwrap();
    // Each store has runs `a` and `b` tied by one thing only; with every group a batch of
    // its own, the finding it gives is still there.
    let stores = [
        // A lease's two uses, one in each run: the second is over its budget of one.
        (
            "lease",
            vec![
                record("a", vec![action("use-1", lease(1500))]),
                record("b", vec![action("use-2", lease(1600))]),
            ],
            ("F-LEASE-OUTSIDE", "over-budget"),
        ),
        // A denied drifted parent in run a, its child in run b re-running the payload.
        (
            "parent",
            vec![
                record("a", vec![action("p", denied_drifted)]),
                record(
                    "b",
                    vec![action(
                        "c",
                        json!({"parent_action_id": "p", "approval_context_hash": "h1",
                            "arguments_digest": "b"}),
                    )],
                ),
            ],
            (
                "F-REAPPROVAL-SAME-PAYLOAD",
                "re-runs the drifted payload of denied p",
            ),
        ),
        // Run a's copy of `x` rewritten in a record chained to the first through run b's.
        (
            "chain",
            linked(vec![
                record("a", vec![action("x", json!({"tool_name": "t"}))]),
                record("b", vec![action("y", json!({}))]),
                record("a", vec![action("x", json!({"tool_name": "u"}))]),
            ]),
            ("F-ACTION-REWRITTEN", "differs from its copy"),
        ),
    ];
    for (name, records, (id, what)) in stores {
        let store = dir.join(format!("{name}.ndjson"));
        let lines: Vec<String> = records.iter().map(to_line).collect();
        std::fs::write(&store, lines.join("\n") + "\n").unwrap();
        let paths = [store.display().to_string()];
        let leases = SuppliedLeases::default();
        let [whole, grouped] = whole_and_in_groups(&paths, 1, &Keyring::default(), &leases);
        assert!(
            whole.contains(id) && whole.contains(what),
            "{name}: {id} ({what}) not found: {whole}"
        );
        assert!(
            whole == grouped,
            "{name}: {}",
            first_difference(&whole, &grouped)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
