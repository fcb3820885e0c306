//! `check` and the commands verify evidence as it streams in, a chunk at a time; the
//! explorer and the library's `Evidence::open` verify a corpus loaded whole. Both must
//! say exactly the same thing — every verdict, finding, chain and error — on every
//! fixture, and whatever the chunk size.

mod common;

use aeplens::analysis::evidence::Evidence;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::cli::check::json_report;
use aeplens::load::{Corpus, evidence_files, load_paths};
use aeplens::verify::{Keyring, Options, Profile, verify_paths_in_chunks};
use common::{fixture_keys, fixtures};
use std::fmt::Write as _;

/// The JSON report of `paths` loaded whole, and streamed in `chunk`-byte reads.
fn both(paths: &[String], chunk: usize, keys: &Keyring, leases: &SuppliedLeases) -> [String; 2] {
    let options = Options::default();
    let whole = Evidence::open(Corpus::new(load_paths(paths)), keys, &options, leases);
    let (inputs, report, _) =
        verify_paths_in_chunks(paths, chunk, keys, &options, None, &mut |_, _| {});
    let streamed = Evidence::verified(Corpus::new(inputs), report, leases, Vec::new());
    [whole, streamed].map(|ev| json_report(&ev.report, &ev.findings, Profile::Forensic))
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
        let [whole, streamed] = both(&paths, 97, &keys, &leases);
        assert!(whole == streamed, "{} in 97-byte reads differs", paths[0]);
    }
    for chunk in [4096, aeplens::load::stream::CHUNK] {
        let paths = [root.clone(), "assets/demo/evidence".to_string()];
        let [whole, streamed] = both(&paths, chunk, &keys, &leases);
        assert!(
            whole == streamed,
            "every fixture in {chunk}-byte reads differs"
        );
    }
}

/// More records than one batch of the streamed report, some of them broken lines: the
/// report is still byte for byte what loading whole gives, in input order.
#[test]
fn a_store_of_many_small_records_streams_in_order() {
    let dir = std::env::temp_dir().join(format!("aeplens-streaming-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::new();
    for i in 0..2500 {
        if i % 700 == 3 {
            text.push_str("{\"run_id\": broken\n");
        } else {
            let run = i % 7;
            let _ = writeln!(
                text,
                "{{\"schema_version\":\"aep/v0.3\",\"run_id\":\"run-{run}\",\"actions\":[{{\"action_id\":\"a{i}\",\"tool_name\":\"t\"}}]}}"
            );
        }
    }
    let store = dir.join("many.ndjson");
    std::fs::write(&store, text).unwrap();
    let paths = vec![store.display().to_string()];
    let keys = Keyring::default();
    for chunk in [1000, 65536] {
        let [whole, streamed] = both(&paths, chunk, &keys, &SuppliedLeases::default());
        assert!(whole == streamed, "{chunk}-byte reads differ");
        assert_eq!(whole.matches("\"canonical_sha256\"").count(), 2500 - 4);
        assert!(
            whole.contains("\"line\": 704"),
            "the broken line is reported"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
