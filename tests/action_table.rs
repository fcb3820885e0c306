//! `show` from the evidence index: each action's views, kept for an opening
//! (`analysis::action_table`), must be exactly what opening the evidence gives — every
//! view, in JSON and as text — and be used only while every file is byte for byte what
//! they were made from and what is kept is sound.

mod common;

use aeplens::analysis::action_table::{self, KeptAction, Table};
use aeplens::analysis::evidence::Evidence;
use aeplens::analysis::lease::SuppliedLeases;
use aeplens::cli::report::show_text;
use aeplens::verify::index::{Config, Index};
use aeplens::verify::{Keyring, Options, Trees};
use common::{fixture_keys, fixtures};
use std::path::{Path, PathBuf};

/// What was seen while comparing, so that no comparison passes for want of a case.
#[derive(Debug, Default)]
struct Seen {
    actions: usize,
    leases: usize,
    state_gaps: usize,
    findings: usize,
    parents: usize,
    digests: usize,
    in_many_runs: usize,
}

/// Opens `paths` (with the lease files `leases`) into a fresh index in `dir`, keeps every
/// action's views there, and compares each action's views from the index with those
/// from the opened evidence.
fn compare_every_action(paths: &[String], leases: &[PathBuf], dir: &Path, seen: &mut Seen) {
    let _ = std::fs::remove_dir_all(dir);
    let keys = fixture_keys();
    let options = Options::default();
    let mut supplied = SuppliedLeases::default();
    for file in leases {
        // Problems in it (the reference store's has some on purpose) are not ours here.
        let _problems = supplied.add_file(file);
    }
    let index = Index::new(
        dir.to_path_buf(),
        &Config::new(&keys, &options, &supplied.digests),
    );
    let ev = Evidence::load(
        paths,
        &keys,
        &options,
        &supplied,
        Some(&index),
        Trees::OnDisk,
        &mut |_| {},
    );
    assert!(Table::open(&index, paths).is_none(), "nothing kept yet");
    let opening = Index::opening_name(&ev.corpus.inputs).unwrap();
    action_table::keep(&index, &opening, ev.as_ref()).unwrap();
    let table = Table::open(&index, paths).expect("kept");
    let g = &ev.analysis.graph;
    // Each id's part is read once (a part is what one `show` reads).
    let mut parts = std::collections::HashMap::new();
    for node in 0..g.nodes.len() as u32 {
        let Some(id) = g.facts(&ev.corpus, node).and_then(|f| f.id()) else {
            continue;
        };
        let run = g.runs[g.nodes[node as usize].run as usize].id.as_str();
        let opened = ev
            .analysis
            .show(&ev.corpus, node, &ev.findings, Some(&ev.report.records))
            .unwrap();
        let found: &Vec<_> = parts.entry(id).or_insert_with(|| table.find(id).unwrap());
        let runs: Vec<&str> = found.iter().map(KeptAction::run_id).collect();
        let everywhere = g.find_all(&ev.corpus, id);
        let in_graph: Vec<&str> = (everywhere.iter())
            .map(|n| g.runs[g.nodes[*n as usize].run as usize].id.as_str())
            .collect();
        assert_eq!(
            runs, in_graph,
            "{id}: the runs it occurs in, in graph order"
        );
        let chain = g.chain_name(&ev.corpus, node);
        let kept = (found.iter())
            .find(|a| a.run_id() == run && *a.chain() == chain)
            .unwrap();
        let read = table.read(kept).unwrap();
        let report = kept.report(&read).unwrap();
        let json = |r| serde_json::to_value(r).unwrap();
        assert_eq!(json(&report), json(&opened), "{run}/{id}");
        for width in [None, Some(60)] {
            assert_eq!(show_text(&report, width), show_text(&opened, width));
        }
        seen.actions += 1;
        seen.leases += usize::from(opened.lease.is_some());
        seen.state_gaps += usize::from(!opened.state_gaps.is_empty());
        seen.findings += usize::from(!opened.findings.is_empty());
        seen.parents += usize::from(g.nodes[node as usize].parent.is_some());
        seen.digests += usize::from(!opened.digests.is_empty());
        seen.in_many_runs += usize::from(runs.len() > 1);
    }
}

/// The top-level stores of `dir` (not its documents or lease files).
fn stores_in(dir: &Path) -> Vec<String> {
    let mut stores: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ndjson"))
        .filter(|p| !p.to_string_lossy().ends_with(".leases.ndjson"))
        .map(|p| p.display().to_string())
        .collect();
    stores.sort();
    stores
}

/// Asserts that `seen` covers every kind of surroundings, in more than `actions` actions.
fn covers_every_case(seen: &Seen, actions: usize) {
    let cases = [
        seen.leases,
        seen.state_gaps,
        seen.findings,
        seen.parents,
        seen.digests,
        seen.in_many_runs,
    ];
    assert!(
        seen.actions > actions && cases.iter().all(|n| *n > 0),
        "{seen:?}"
    );
}

#[test]
fn every_action_of_the_demo_shows_from_the_index_as_from_the_opened_evidence() {
    let scratch = common::run_dir("action-table-demo");
    let demo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    let mut seen = Seen::default();
    compare_every_action(
        &[demo.join("evidence").display().to_string()],
        &[demo.join("leases.ndjson")],
        &scratch,
        &mut seen,
    );
    covers_every_case(&seen, 5);
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn every_action_of_the_reference_stores_shows_from_the_index_as_from_the_opened_evidence() {
    let scratch = common::run_dir("action-table-stores");
    let stores = fixtures().join("reference-stores");
    let mut seen = Seen::default();
    compare_every_action(
        &stores_in(&stores),
        &[stores.join("reapproval_after_denial.leases.ndjson")],
        &scratch,
        &mut seen,
    );
    assert!(seen.actions > 300 && seen.in_many_runs > 0, "{seen:?}");
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn what_is_kept_is_used_only_while_sound_and_the_files_unchanged() {
    let dir = common::run_dir("action-table-sound");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("store.ndjson");
    std::fs::copy(fixtures().join("reference/chain.ndjson"), &store).unwrap();
    let paths = vec![store.display().to_string()];
    let mut seen = Seen::default();
    let ix = dir.join("index");
    compare_every_action(&paths, &[], &ix, &mut seen);
    let keys = fixture_keys();
    let index = Index::new(ix.clone(), &Config::new(&keys, &Options::default(), &[]));
    let id = "C001";
    let table = Table::open(&index, &paths).expect("kept");
    assert!(table.read(&table.find(id).unwrap()[0]).is_some());
    let is_table = |p: &PathBuf| {
        let text = std::fs::read(p).unwrap();
        let head = text.split(|&b| b == b'\n').next().unwrap().to_vec();
        String::from_utf8(head).unwrap().contains("\"parts\":[")
    };
    let tables = || -> Vec<PathBuf> {
        (std::fs::read_dir(&ix).unwrap())
            .map(|e| e.unwrap().path())
            .filter(is_table)
            .collect()
    };
    let [file] = &tables()[..] else {
        panic!("{:?}", tables())
    };
    // A damaged table is not trusted: the part holding the records' places fails its
    // checksum, and the action cannot be read.
    let sound = std::fs::read(file).unwrap();
    let mut damaged = sound.clone();
    *damaged.last_mut().unwrap() ^= 1;
    std::fs::write(file, &damaged).unwrap();
    let table = Table::open(&index, &paths).expect("its head is sound");
    let found = table.find(id).expect("its own part is sound");
    assert!(table.read(&found[0]).is_none());
    std::fs::write(file, &sound).unwrap();
    // Another configuration has nothing kept.
    let other = Index::new(
        ix.clone(),
        &Config::new(&Keyring::default(), &Options::default(), &[]),
    );
    assert!(Table::open(&other, &paths).is_none());
    // A byte changed in place (same size): nothing is recalled.
    let mut bytes = std::fs::read(&store).unwrap();
    let at = bytes.windows(4).position(|w| w == b"C001").unwrap();
    bytes[at + 3] = b'9';
    std::fs::write(&store, &bytes).unwrap();
    assert!(Table::open(&index, &paths).is_none());
    // A store that grew: its new table takes the place of the old one (whose bytes are
    // gone), so the index does not grow with every append.
    let mut grown = std::fs::read(fixtures().join("reference/chain.ndjson")).unwrap();
    let last = grown[..grown.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap();
    grown.extend_from_within(last + 1..);
    std::fs::write(&store, &grown).unwrap();
    let leases = SuppliedLeases::default();
    let trees = Trees::OnDisk;
    let ev = Evidence::load(
        &paths,
        &keys,
        &Options::default(),
        &leases,
        Some(&index),
        trees,
        &mut |_| {},
    );
    let opening = Index::opening_name(&ev.corpus.inputs).unwrap();
    assert!(!action_table::is_kept(&index, &ev.corpus, &opening));
    action_table::keep(&index, &opening, ev.as_ref()).unwrap();
    assert!(action_table::is_kept(&index, &ev.corpus, &opening));
    assert_eq!(tables().len(), 1, "{:?}", tables());
    assert!(Table::open(&index, &paths).is_some_and(|t| t.find(id).is_some()));
    let _ = std::fs::remove_dir_all(&dir);
}
