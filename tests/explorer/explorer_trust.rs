//! The explorer claims no more than the CLI: a vacuous chain is ○ wherever it is drawn, a
//! fork is its own state (⋎, counted apart and named), and the header's counts are the
//! ones `check --format json` gives for the same evidence, on every reference store.

use crate::common;

use aeplens::tui::state::{Action, State, update};
use common::{aeplens, explorer, screen};
use serde_json::Value;

const STORES: &str = "tests/fixtures/reference-stores";

/// The explorer on one reference store, with the stores' keys.
fn store(name: &str) -> State {
    explorer(
        &[&format!("{STORES}/{name}")],
        Some(&format!("{STORES}/keys.json")),
        None,
    )
}

/// The number after `glyph` in `header` (`✓12` → 12).
fn count_after(header: &str, glyph: &str) -> usize {
    let at = header
        .find(glyph)
        .unwrap_or_else(|| panic!("{glyph} in {header}"));
    let digits: String = header[at + glyph.len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap()
}

#[test]
fn a_vacuous_chain_is_never_a_tick() {
    // One record, no link: nothing to check on the chain axis.
    let s = store("numbers_and_empty_actions.ndjson");
    for (w, h) in [(80, 24), (120, 40), (200, 60)] {
        let text = screen(&s, w, h);
        assert!(!text.contains("chain ✓ not-present"), "{w}x{h}:\n{text}");
        assert!(!text.contains("✓ not-present"), "{w}x{h}:\n{text}");
    }
    let text = screen(&s, 200, 60);
    assert!(text.contains("○ run-pub-abacus · 1 rec"), "{text}");
    let header = text.lines().next().unwrap();
    assert!(header.contains("chains ✓0 ○3"), "{header}");
}

#[test]
fn a_fork_is_its_own_state_in_the_header_the_run_and_the_record() {
    let path = format!("{STORES}/fork_parallel_emit.ndjson");
    let keys = format!("{STORES}/keys.json");
    let s = explorer(&[&path], Some(&keys), None);
    let text = screen(&s, 200, 60);
    let header = text.lines().next().unwrap();
    // Both branches are intact, yet neither is counted ✓: the fork is counted and named.
    assert_eq!(count_after(header, "✓"), 5, "records ✓: {header}");
    assert!(
        header.contains("chains ✓0 ○0 ⋎1 (fork_parallel_emit.ndjson:2)"),
        "{header}"
    );
    assert!(
        text.contains("▲ ⋎ run-pub-delta-fork · 5 rec"),
        "the run row: {text}"
    );
    // The Record tab of the selected action.
    let mut s = s;
    update(
        &mut s,
        Action::Command(aeplens::tui::keymap::Command::Tab(5)),
    );
    let text = screen(&s, 200, 60);
    assert!(
        text.contains(
            "⋎ intact, forked at tests/fixtures/reference-stores/fork_parallel_emit.ndjson:2"
        ),
        "{text}"
    );
    assert!(!text.contains("✓ intact"), "{text}");
    // `check` says the same.
    let (_, out, _) = aeplens(&[
        "check",
        "--no-index",
        "--format",
        "json",
        "--keys",
        &keys,
        &path,
    ]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["summary"]["forks"], 1);
    let forked: Vec<&Value> = doc["chain_paths"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["forked_at"]["index"] == 1)
        .collect();
    assert_eq!(forked.len(), 2, "both branches name the fork point");
}

/// The header of `paths` opened in the explorer against `check --format json`'s summary.
fn header_agrees_with_check(paths: &[&str], keys: Option<&str>, leases: Option<&str>) {
    let s = explorer(paths, keys, leases);
    let text = screen(&s, 240, 30);
    let header = text.lines().next().unwrap().to_string();
    let mut args = vec!["check", "--no-index", "--format", "json"];
    if let Some(k) = keys {
        args.extend(["--keys", k]);
    }
    if let Some(l) = leases {
        args.extend(["--leases", l]);
    }
    args.extend(paths);
    let (_, out, err) = aeplens(&args);
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let sum = &doc["summary"];
    let n = |v: &Value| v.as_u64().unwrap() as usize;
    let a = &sum["authenticity"];
    let what = format!("{paths:?}: {header}");
    assert_eq!(count_after(&header, "✓"), n(&a["valid"]), "{what}");
    let bad = n(&a["invalid"]) + n(&a["binding_mismatch"]) + n(&a["unsupported_legacy"]);
    assert_eq!(count_after(&header, "✗"), bad, "{what}");
    let f = &sum["findings"];
    let findings = &header[header.find("findings ▲").expect(&what) + "findings ".len()..];
    let counts: Vec<&str> = findings.split_whitespace().take(4).collect();
    let severities = ["high", "medium", "low", "info"];
    for ((count, glyph), severity) in counts.iter().zip(["▲", "■", "·", "i"]).zip(severities) {
        assert_eq!(
            count_after(count, glyph),
            n(&f[severity]),
            "{severity}: {what}"
        );
    }
    let chains = &header[header.find("chains ✓").expect(&what) + "chains ".len()..];
    let counts: Vec<&str> = chains.split_whitespace().take(2).collect();
    let intact_unforked = (doc["chain_paths"].as_array().unwrap().iter())
        .filter(|p| p["status"] == "intact" && p.get("forked_at").is_none())
        .count();
    assert_eq!(count_after(counts[0], "✓"), intact_unforked, "{what}");
    let vacuous = n(&sum["chain_paths"]["not-present"]);
    assert_eq!(count_after(counts[1], "○"), vacuous, "{what}");
    let forks = n(&sum["forks"]);
    if forks > 0 {
        assert_eq!(count_after(&header, "⋎"), forks, "{what}");
    } else {
        assert!(!header.contains('⋎'), "{what}");
    }
    let errors = n(&sum["load_errors"]);
    match errors {
        0 => assert!(!header.contains("load error"), "{what}"),
        1 => assert!(header.contains("⚠ 1 load error"), "{what}"),
        e => assert!(header.contains(&format!("⚠ {e} load errors")), "{what}"),
    }
}

#[test]
fn the_header_counts_what_check_counts_on_every_reference_store() {
    let keys = format!("{STORES}/keys.json");
    let mut seen = 0;
    for entry in std::fs::read_dir(STORES).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".ndjson") || name.ends_with(".leases.ndjson") {
            continue;
        }
        let leases = path.with_extension("leases.ndjson");
        let leases = leases.exists().then(|| leases.display().to_string());
        header_agrees_with_check(
            &[&path.display().to_string()],
            Some(&keys),
            leases.as_deref(),
        );
        seen += 1;
    }
    assert!(seen >= 25, "{seen} stores");
    // The rotated store (a directory) and the demo incident.
    header_agrees_with_check(&[&format!("{STORES}/rotated")], Some(&keys), None);
    let demo = "assets/demo";
    header_agrees_with_check(
        &[&format!("{demo}/evidence")],
        Some(&format!("{demo}/keys.json")),
        Some(&format!("{demo}/leases.ndjson")),
    );
}

#[test]
fn a_lease_file_problem_is_not_counted_as_a_load_error() {
    let mut s = store("crash_partial_last_line.ndjson");
    assert_eq!(s.errors.len(), 1, "the torn last line");
    let lease = "leases.ndjson:2: neither a ScopeLease nor an ApprovalReceipt: skipped";
    update(&mut s, Action::Errors(vec![lease.into()]));
    let header = screen(&s, 200, 30).lines().next().unwrap().to_string();
    assert!(
        header.contains("⚠ 1 load error ⚠ 1 lease-file problem"),
        "{header}"
    );
}

#[test]
fn a_long_name_gives_way_to_the_status_glyphs() {
    use aeplens::tui::data::glyphs;
    let rfc = "tests/fixtures/rfc-final";
    let opened = [
        explorer(&["tests/fixtures/reference/v03.ndjson"], None, None),
        explorer(
            &[&format!("{rfc}/evidence")],
            Some(&format!("{rfc}/keys.json")),
            Some(&format!("{rfc}/leases.ndjson")),
        ),
    ];
    let mut checked = 0;
    for s in &opened {
        let d = s.data.as_ref().unwrap();
        for (w, h) in [(80, 24), (120, 40)] {
            let text = screen(s, w, h);
            for row in s.timeline.rows() {
                let id = d
                    .analysis
                    .graph
                    .facts(&d.corpus, row.node)
                    .unwrap()
                    .id()
                    .unwrap();
                let marks = glyphs(if row.folded {
                    row.subtree
                } else {
                    d.flags[row.node as usize]
                });
                // Ids are told apart by their first four characters in these stores.
                let prefix: String = id.chars().take(4).collect();
                let lines: Vec<&str> = text.lines().filter(|l| l.contains(&prefix)).collect();
                if lines.is_empty() || marks.is_empty() {
                    continue; // not on screen, or nothing to show
                }
                assert!(
                    lines.iter().any(|l| l.contains(&marks)),
                    "{w}x{h}: {id} lost {marks}:\n{text}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "{checked} rows checked");
}

/// Characters of the explorer's typography, not glyphs with a meaning: borders and tree
/// lines, fold markers, arrows in text, separators, the ellipsis of a cut.
fn typography(c: char) -> bool {
    ('\u{2500}'..='\u{257f}').contains(&c) // box drawing
        || "▸▾└↖→←↑↓·…—█×".contains(c)
}

#[test]
fn every_glyph_on_every_pane_is_in_the_legend_once() {
    use aeplens::tui::keymap::Command;
    let legend = aeplens::tui::view::GLYPH_LEGEND.join("\n");
    let meaning = |g: char| legend.lines().filter(|l| l.contains(g)).count();
    let demo = "assets/demo";
    let opened = [
        explorer(
            &[&format!("{demo}/evidence")],
            Some(&format!("{demo}/keys.json")),
            Some(&format!("{demo}/leases.ndjson")),
        ),
        explorer(&["tests/fixtures/reference/v03.ndjson"], None, None),
        store("fork_parallel_emit.ndjson"),
        common::explorer_traced(
            &[&format!("{demo}/evidence")],
            Some(&format!("{demo}/keys.json")),
            Some(&format!("{demo}/leases.ndjson")),
            &[&format!("{demo}/traces.jsonl")],
        ),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for mut s in opened {
        let mut look = |s: &State| {
            for (w, h) in [(80, 24), (160, 48)] {
                for c in screen(s, w, h).chars() {
                    if !c.is_ascii() && !typography(c) {
                        seen.insert(c);
                    }
                }
            }
        };
        for list in 0..4 {
            for tab in 1..=6 {
                update(&mut s, Action::Command(Command::Tab(tab)));
                look(&s);
            }
            for _ in 0..3 {
                update(&mut s, Action::Command(Command::NextProblem));
                look(&s);
            }
            if list == 0 {
                for overlay in [Command::Compare, Command::Inputs] {
                    update(&mut s, Action::Command(overlay));
                    look(&s);
                    update(&mut s, Action::Command(Command::Cancel));
                }
            }
            update(&mut s, Action::Command(Command::NextList));
        }
    }
    assert!(seen.len() >= 10, "{seen:?}");
    let unexplained: Vec<char> = seen.into_iter().filter(|&g| meaning(g) != 1).collect();
    assert!(
        unexplained.is_empty(),
        "drawn without one line in the legend: {unexplained:?}"
    );
}

#[test]
fn homoglyph_and_non_nfc_ids_never_look_identical_in_the_tree() {
    let s = store("unicode_ids_and_values.ndjson");
    let text = screen(&s, 200, 60);
    // `step-ñ` in NFC and in NFD, `op-o` in Latin and with a Greek omicron.
    assert!(text.contains("⟨not NFC: step-n\\u{303}⟩"), "{text}");
    assert!(text.contains("op-ο⟨mixed scripts: op-\\u{3bf}⟩"), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("op-")).collect();
    assert!(
        rows.iter().any(|l| l.contains("op-o ")),
        "the Latin one stays plain: {text}"
    );
}

#[test]
fn emitters_sharing_a_run_get_a_lane_each() {
    let s = store("subagents_default_action_ids.ndjson");
    let lanes = s.timeline.lanes();
    assert_eq!(lanes.len(), 3, "three emitters, one key each");
    // Every action of the run is a row, lettered by its emitter's lane; trees grouped.
    let rows = s.timeline.rows();
    let d = s.data.as_ref().unwrap();
    let run = &d.analysis.graph.runs[d.run_of(rows[0].node)];
    assert_eq!(rows.len(), run.nodes.len());
    let letters: Vec<u16> = rows.iter().map(|r| r.lane).collect();
    assert!(letters.windows(2).all(|w| w[0] <= w[1]), "{letters:?}");
    assert!((0..3).all(|l| letters.contains(&l)), "{letters:?}");
    for (w, h) in [(120, 40), (200, 60)] {
        let text = screen(&s, w, h);
        assert!(
            text.contains(
                "3 emitter chains: A subagents_default_action_ids.ndjson:1, fixture-key-2"
            ),
            "{text}"
        );
        assert!(
            ["│A ", "│B ", "│C "].iter().all(|l| text.contains(l)),
            "{text}"
        );
    }
    // One emitter (its chain continuing past a gap): no lanes.
    let demo = "assets/demo";
    let one = explorer(
        &[&format!("{demo}/evidence")],
        Some(&format!("{demo}/keys.json")),
        None,
    );
    assert!(one.timeline.lanes().is_empty());
    assert!(!screen(&one, 120, 40).contains("emitter chains:"));
}

#[test]
fn compare_on_a_fork_branch_puts_the_twin_on_the_other_branch_beside_it() {
    use aeplens::tui::keymap::Command;
    let mut s = store("fork_branches_assembled.ndjson");
    let d = s.data.as_ref().unwrap();
    let twins = d
        .analysis
        .graph
        .find_in_run(&d.corpus, "run-pub-ember", "emb-2");
    assert_eq!(twins.len(), 2, "emb-2 executed on both branches");
    // Before the fork, one action: no twin, no rewrite either.
    let before = d
        .analysis
        .graph
        .find_in_run(&d.corpus, "run-pub-ember", "emb-1");
    assert_eq!(before.len(), 1);
    aeplens::tui::state::select(&mut s, twins[0], true);
    update(&mut s, Action::Command(Command::Compare));
    let text = screen(&s, 200, 60);
    assert!(
        text.contains("the same action on the other branch of a fork"),
        "{:?} {text}",
        s.message
    );
    assert!(
        text.contains("emb-2 (this branch, tests/fixtures/"),
        "{text}"
    );
    assert!(
        text.contains("emb-2 (the other branch, tests/fixtures/"),
        "{text}"
    );
    // The two wire transfers differ: the rows that differ are marked.
    assert!(text.contains("Δ"), "{text}");
    assert!(!text.contains("rewritten in a later snapshot"), "{text}");
}

/// Selects `id` on the chain whose first record is at `head` (`file:line`).
fn select_on(s: &mut State, run: &str, id: &str, head: &str) {
    let d = s.data.as_ref().unwrap();
    let g = &d.analysis.graph;
    let n = (g.find_in_run(&d.corpus, run, id).into_iter())
        .find(|&n| g.chain_name(&d.corpus, n).is(head))
        .unwrap_or_else(|| panic!("{id} on {head}"));
    aeplens::tui::state::select(s, n, true);
}

/// `b` on an action of a fork's branch: the fork point named, both branches side by side
/// with their records' verdicts, a row per action after the fork — the same (`=`), the
/// same id changed (`Δ`, members named), or on one branch only (`–`).
#[test]
fn the_fork_view_shows_both_branches_from_where_they_part() {
    use aeplens::tui::keymap::Command;
    use aeplens::tui::state::Overlay;
    // r0 r1 r2 r2': the wire transfer made twice, with different arguments.
    let mut s = store("fork_branches_assembled.ndjson");
    select_on(
        &mut s,
        "run-pub-ember",
        "emb-2",
        "fork_branches_assembled.ndjson:4",
    );
    update(&mut s, Action::Command(Command::Fork));
    assert!(matches!(s.overlay, Overlay::Fork(_)), "{:?}", s.message);
    let text = screen(&s, 160, 48);
    assert!(
        text.contains("forked at fork_branches_assembled.ndjson:2"),
        "{text}"
    );
    assert!(text.contains("branch from"), "{text}");
    let row = text.lines().find(|l| l.contains("Δ emb-2")).expect(&text);
    assert_eq!(row.matches("wire_transfer").count(), 2, "{row}");
    assert!(text.contains("differs: "), "{text}");
    for (w, h) in [(80, 24), (120, 40)] {
        insta::assert_snapshot!(format!("fork_assembled_{w}x{h}"), screen(&s, w, h));
    }
    // Two emitters racing: one branch runs further than the other.
    let mut s = store("fork_parallel_emit.ndjson");
    select_on(
        &mut s,
        "run-pub-delta-fork",
        "df-2",
        "fork_parallel_emit.ndjson:3",
    );
    update(&mut s, Action::Command(Command::Fork));
    let text = screen(&s, 160, 48);
    assert!(text.contains("forked at"), "{text}");
    let only: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("– not on this branch"))
        .collect();
    assert!(!only.is_empty(), "{text}");
    update(&mut s, Action::Command(Command::Cancel));
    assert_eq!(s.overlay, Overlay::None);
    // An action on no fork: said, nothing opened.
    let mut s = explorer(
        &["assets/demo/evidence"],
        Some("assets/demo/keys.json"),
        None,
    );
    update(&mut s, Action::Command(Command::Fork));
    assert_eq!(s.overlay, Overlay::None);
    assert!(s.message.as_deref().unwrap().starts_with("no fork"));
}
