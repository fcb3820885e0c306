//! `check` and the commands verify evidence as it streams in, a chunk at a time, letting
//! go of each verified record's tree (read again from its file when a finding needs it);
//! the explorer and the library's `Evidence::open` verify a corpus loaded whole. All must
//! say exactly the same thing — every verdict, finding, chain and error — on every
//! fixture, and whatever the chunk size.

mod common;

use aeplens::analysis::evidence::Evidence;
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

#[test]
fn streamed_and_whole_verdicts_are_identical_on_every_fixture() {
    let keys = fixture_keys();
    // Lease files as `--leases` gives them (their own load errors do not matter here:
    // both sides get the same leases).
    let mut leases = SuppliedLeases::default();
    for file in [
        "reference-stores/reapproval_after_denial.leases.ndjson",
        "rfc-final/leases.ndjson",
        "../../assets/demo/leases.ndjson",
    ] {
        let _ = leases.add_file(&fixtures().join(file));
    }
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
/// load error of the store — nothing is concluded from bytes that were not verified.
#[test]
fn a_record_edited_after_it_was_verified_is_an_error_not_a_finding() {
    let dir = common::run_dir("reread");
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("edited.ndjson");
    let record = |action: &str| {
        format!(
            "{{\"schema_version\":\"aep/v0.3\",\"run_id\":\"r\",\"actions\":[{{\"action_id\":\"{action}\",\"tool_name\":\"rm\",\"state_changing\":true}}]}}\n"
        )
    };
    let text = [record("a1"), record("a2")].concat();
    std::fs::write(&store, &text).unwrap();
    let paths = vec![store.display().to_string()];
    let (keys, options) = (Keyring::default(), Options::default());
    let leases = SuppliedLeases::default();
    let (inputs, report, _) = verify_paths_in_chunks(
        &paths,
        1 << 20,
        &keys,
        &options,
        None,
        Trees::OnDisk,
        &mut |_, _| {},
    );
    assert!(inputs[0].records.iter().all(|r| !r.is_held()));
    // The second record's tool changes (same length) before the findings are made.
    std::fs::write(
        &store,
        text.replacen(
            "\"a2\",\"tool_name\":\"rm\"",
            "\"a2\",\"tool_name\":\"mv\"",
            1,
        ),
    )
    .unwrap();
    let ev = Evidence::verified(Corpus::new(inputs), report, &leases, Vec::new());
    let unapproved: Vec<_> = ev
        .findings
        .iter()
        .filter(|f| f.id == "F-UNAPPROVED-MUTATION")
        .flat_map(|f| f.action_ids.clone())
        .collect();
    assert_eq!(unapproved, ["a1"], "only the unchanged record's finding");
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
