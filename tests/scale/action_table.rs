//! `show` from the evidence index: each action's views, kept for an opening
//! (`analysis::action_table`), must be exactly what opening the evidence gives — every
//! view, in JSON and as text — and be used only while every file is byte for byte what
//! they were made from and what is kept is sound.

use crate::common;

use aeplens::analysis::lease::SuppliedLeases;
use aeplens::cli::check::json_report;
use aeplens::cli::report::show_text;
use aeplens::open::action_table::{self, KeptAction, Table};
use aeplens::open::cache::{Config, Index};
use aeplens::open::kept::Keeping;
use aeplens::verify::Profile;
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
    let ev = aeplens::open::kept::whole(
        paths,
        &common::setting_of(&keys, &options, &supplied),
        Some(&index),
        Trees::OnDisk,
        &mut |_| {},
    );
    assert!(Table::open(&index, paths).is_none(), "nothing kept yet");
    let opening = Index::opening_name(&ev.corpus.inputs).unwrap();
    Keeping::keep_all(&index, &opening, ev.as_ref());
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
        let mut everywhere = g.find_all(&ev.corpus, id);
        everywhere.sort_by_key(|&n| (g.nodes[n as usize].record, g.nodes[n as usize].pos));
        let in_graph: Vec<&str> = (everywhere.iter())
            .map(|n| g.runs[g.nodes[*n as usize].run as usize].id.as_str())
            .collect();
        assert_eq!(
            runs, in_graph,
            "{id}: the runs it occurs in, by record and position"
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

/// Every file of the index in `dir`, by name.
fn index_files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    (std::fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// `check` keeps each action's views gathered batch by batch (`Checked::load`): the
/// index it writes — verdicts, the completed analysis, the actions' table — is byte for
/// byte the one written by opening the evidence whole and keeping the table from it.
#[test]
fn the_index_check_writes_in_batches_is_the_one_written_from_the_whole_analysis() {
    use aeplens::open::{Budget, Checked};
    let scratch = common::run_dir("action-table-batches");
    let demo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    let stores = fixtures().join("reference-stores");
    let mut reference = stores_in(&stores);
    reference.push(demo.join("evidence").display().to_string());
    let lease_files = [
        stores.join("reapproval_after_denial.leases.ndjson"),
        demo.join("leases.ndjson"),
    ];
    let keys = fixture_keys();
    let options = Options::default();
    let mut leases = SuppliedLeases::default();
    for file in &lease_files {
        let _problems = leases.add_file(file);
    }
    let config = Config::new(&keys, &options, &leases.digests);
    let mut tables = 0;
    // Two emitters' records interleaved in one file, each way round: the batches (whole
    // runs) come in another order than the whole graph's nodes and chains.
    std::fs::create_dir_all(&scratch).unwrap();
    let lines = |name: &str| -> Vec<String> {
        let text = std::fs::read_to_string(stores.join(name)).unwrap();
        text.lines().map(str::to_string).collect()
    };
    let (bulk, denial) = (
        lines("bulk_250_actions.ndjson"),
        lines("reapproval_after_denial.ndjson"),
    );
    let mut interleaved = Vec::new();
    for (name, (a, b)) in [("ab", (&bulk, &denial)), ("ba", (&denial, &bulk))] {
        let mut text = String::new();
        for i in 0..a.len().max(b.len()) {
            for line in [a.get(i), b.get(i)].into_iter().flatten() {
                text.push_str(line);
                text.push('\n');
            }
        }
        let file = scratch.join(format!("interleaved-{name}.ndjson"));
        std::fs::write(&file, text).unwrap();
        interleaved.push(vec![file.display().to_string()]);
    }
    // Incident-shaped: dozens of runs with chains of their own.
    let generated = scratch.join("incident.ndjson");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&generated).unwrap());
    crate::incident::generate(300, &mut file).unwrap();
    drop(file);
    interleaved.push(vec![generated.display().to_string()]);
    // Its lines shuffled (by their hash): runs interleaved, each batch's chains spread
    // among the others' in the whole graph's order.
    let text = std::fs::read_to_string(&generated).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_by_cached_key(|l| blake3::hash(l.as_bytes()).to_hex().to_string());
    let shuffled = scratch.join("incident-shuffled.ndjson");
    std::fs::write(&shuffled, lines.join("\n") + "\n").unwrap();
    interleaved.push(vec![shuffled.display().to_string()]);
    let each_store = reference.iter().map(|s| vec![s.clone()]);
    for paths in each_store.chain(interleaved).chain([reference.clone()]) {
        let (whole, batched) = (scratch.join("whole"), scratch.join("batched"));
        for dir in [&whole, &batched] {
            let _ = std::fs::remove_dir_all(dir);
        }
        let index = Index::new(whole.clone(), &config);
        let ev = aeplens::open::kept::whole(
            &paths,
            &common::setting_of(&keys, &options, &leases),
            Some(&index),
            Trees::OnDisk,
            &mut |_| {},
        );
        if let Some(opening) = Index::opening_name(&ev.corpus.inputs) {
            Keeping::keep_all(&index, &opening, ev.as_ref());
            tables += usize::from(action_table::is_kept(&index, &ev.corpus, &opening));
        }
        for (batch, facts_kept) in [(1, 0), (13, 1000)] {
            let _ = std::fs::remove_dir_all(&batched);
            let index = Index::new(batched.clone(), &config);
            let budget = Budget { batch, facts_kept };
            let check = || {
                let index = Some(&index);
                aeplens::open::kept::in_batches(
                    &paths,
                    &common::setting_of(&keys, &options, &leases),
                    index.cloned(),
                    budget,
                    None,
                    &mut |_| {},
                )
            };
            let mut checked = check();
            checked.take_to_keep().unwrap().keep(&checked);
            // Opened again, its completion comes from the index: the very report.
            let mut again = check();
            let report = |c: &Checked| json_report(&c.report, &c.findings, Profile::Forensic);
            assert!(again.reuse.reused > 0 && again.reuse.verified == 0);
            assert!(again.take_to_keep().is_none(), "completed from the index");
            assert!(report(&again) == report(&checked), "{paths:?} opened again");
            assert_eq!(checked.findings, ev.findings, "{paths:?}");
            let (a, b) = (index_files(&whole), index_files(&batched));
            assert_eq!(
                a.keys().collect::<Vec<_>>(),
                b.keys().collect::<Vec<_>>(),
                "{paths:?}"
            );
            for (name, bytes) in &a {
                // Where the bodies (after the header line) first differ, with what is around.
                let body = bytes.iter().position(|&c| c == b'\n').unwrap_or(0);
                let at = (bytes.iter().zip(&b[name]).skip(body))
                    .position(|(x, y)| x != y)
                    .map_or(bytes.len().min(b[name].len()), |p| p + body);
                let around = |t: &[u8]| {
                    let end = (at + 300).min(t.len());
                    String::from_utf8_lossy(&t[at.saturating_sub(300).min(end)..end]).into_owned()
                };
                assert!(
                    b[name] == *bytes,
                    "{} files in batches of {batch}: {name} differs at byte {at}:\n{}\n---\n{}",
                    paths.len(),
                    around(bytes),
                    around(&b[name])
                );
            }
        }
    }
    assert!(tables > 20, "{tables} tables compared");
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
    let ev = aeplens::open::kept::whole(
        &paths,
        &common::setting_of(&keys, &Options::default(), &leases),
        Some(&index),
        trees,
        &mut |_| {},
    );
    let opening = Index::opening_name(&ev.corpus.inputs).unwrap();
    assert!(!action_table::is_kept(&index, &ev.corpus, &opening));
    Keeping::keep_all(&index, &opening, ev.as_ref());
    assert!(action_table::is_kept(&index, &ev.corpus, &opening));
    assert_eq!(tables().len(), 1, "{:?}", tables());
    assert!(Table::open(&index, &paths).is_some_and(|t| t.find(id).is_some()));
    let _ = std::fs::remove_dir_all(&dir);
}
