//! The explorer without a terminal: `update` tests, TestBackend snapshots of every pane
//! and overlay, journeys, and terminal safety of every view.

use crate::common;

use common::{buffer_text as text, go};

use aeplens::analysis::lease::SuppliedLeases;
use aeplens::load::{Corpus, parse_input};
use aeplens::tui::data::Data;
use aeplens::tui::keymap::{Command, Keymap};
use aeplens::tui::state::{
    Action, DetailTab, NavList, NavTarget, Overlay, Pane, Scroll, State, update,
};
use aeplens::tui::theme::Theme;
use aeplens::tui::view::Screen;
use aeplens::verify::Keyring;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use std::path::Path;

const V03: &str = "tests/fixtures/reference/v03.ndjson";
const RFC: &str = "tests/fixtures/rfc-final";
const DEMO: &str = "assets/demo";

fn data(paths: &[&str], keys: Option<&str>, leases: Option<&str>) -> Data {
    let (corpus, keys, supplied) = common::inputs(paths, keys, leases);
    common::data(corpus, &keys, &supplied, None)
}

fn state_with(d: Data, theme: Theme) -> State {
    let mut s = State::new(Keymap::default(), theme);
    update(&mut s, Action::Loaded(Box::new(d)));
    s
}

fn v03() -> State {
    state_with(
        data(&[V03], Some("tests/fixtures/reference/keys.json"), None),
        Theme::dark(),
    )
}

fn rfc() -> State {
    state_with(
        data(
            &[&format!("{RFC}/evidence")],
            Some(&format!("{RFC}/keys.json")),
            Some(&format!("{RFC}/leases.ndjson")),
        ),
        Theme::dark(),
    )
}

fn demo() -> State {
    let leases = format!("{DEMO}/leases.ndjson");
    let leases = Path::new(&leases).exists().then_some(leases);
    state_with(
        data(
            &[&format!("{DEMO}/evidence")],
            Some(&format!("{DEMO}/keys.json")),
            leases.as_deref(),
        ),
        Theme::dark(),
    )
}

fn cmd(s: &mut State, c: Command) {
    update(s, Action::Command(c));
}

fn typed(s: &mut State, text: &str) {
    for c in text.chars() {
        update(s, Action::Char(c));
    }
}

fn selected_id(s: &State) -> String {
    let d = s.data.as_ref().unwrap();
    let n = s.timeline.node().unwrap();
    let (_, a) = d.analysis.graph.action(&d.corpus, n).unwrap();
    a.id().unwrap().to_string()
}

fn render(s: &State, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(&Screen(s), f.area())).unwrap();
    t
}

const LEDGER: &str = "run-devfix-ledger-0417";

#[test]
fn navigation_moves_the_selection_and_keeps_history() {
    let mut s = v03();
    assert_eq!(selected_id(&s), "L01-fetch-schema");
    cmd(&mut s, Command::Down);
    assert_eq!(selected_id(&s), "L02-sql-denied-drift");
    cmd(&mut s, Command::Child);
    assert_eq!(selected_id(&s), "L03-sql-reapproved");
    cmd(&mut s, Command::Parent);
    assert_eq!(selected_id(&s), "L02-sql-denied-drift");
    cmd(&mut s, Command::Back);
    assert_eq!(selected_id(&s), "L03-sql-reapproved");
    cmd(&mut s, Command::Forward);
    assert_eq!(selected_id(&s), "L02-sql-denied-drift");
    // Children of L03 cycle on repeated `c`.
    go(&mut s, LEDGER, "L03-sql-reapproved");
    cmd(&mut s, Command::Child);
    let first = selected_id(&s);
    go(&mut s, LEDGER, "L03-sql-reapproved");
    cmd(&mut s, Command::Child);
    assert_ne!(selected_id(&s), first, "c cycles through the children");
    // Folding hides the subtree and keeps the markers of what is inside.
    go(&mut s, LEDGER, "L02-sql-denied-drift");
    let before = s.timeline.rows().len();
    cmd(&mut s, Command::Toggle);
    assert!(s.timeline.rows().len() < before);
    let row = s.timeline.rows().iter().find(|r| r.folded).unwrap();
    assert_ne!(row.subtree & aeplens::tui::data::flag::REAPPROVED, 0);
    cmd(&mut s, Command::End);
    cmd(&mut s, Command::Home);
    assert_eq!(s.cursor_row(), Some(0));
}

#[test]
fn problems_tabs_focus_and_help() {
    let mut s = v03();
    cmd(&mut s, Command::NextProblem);
    let first = selected_id(&s);
    assert_eq!(
        first, "L02-sql-denied-drift",
        "the first problem is the drift deny"
    );
    cmd(&mut s, Command::NextProblem);
    assert_ne!(selected_id(&s), first);
    cmd(&mut s, Command::PrevProblem);
    assert_eq!(selected_id(&s), first);
    cmd(&mut s, Command::Tab(3));
    assert_eq!(s.detail.tab(), DetailTab::Lease);
    cmd(&mut s, Command::FocusNext);
    assert_eq!(s.focus, Pane::Detail);
    cmd(&mut s, Command::Right);
    assert_eq!(s.detail.tab(), DetailTab::Digests);
    cmd(&mut s, Command::Help);
    assert_eq!(s.overlay, Overlay::Help(Scroll::default()));
    cmd(&mut s, Command::Down);
    assert!(
        matches!(s.overlay, Overlay::Help(_)),
        "keys go to the overlay"
    );
    cmd(&mut s, Command::Cancel);
    assert_eq!(s.overlay, Overlay::None);
    cmd(&mut s, Command::Quit);
    assert!(s.quit);
}

#[test]
fn search_highlights_in_the_run_and_jumps_across_runs() {
    let mut s = v03();
    cmd(&mut s, Command::Search);
    typed(&mut s, "upload");
    assert_eq!(
        s.search.hits().len(),
        2,
        "two upload_blob actions in this run"
    );
    update(&mut s, Action::Submit);
    assert!(selected_id(&s).starts_with("L06") || selected_id(&s).starts_with("L07"));
    let a = selected_id(&s);
    cmd(&mut s, Command::SearchNext);
    assert_ne!(selected_id(&s), a);
    cmd(&mut s, Command::SearchPrev);
    assert_eq!(selected_id(&s), a);
    // A digest prefix finds the state-run action in another run.
    cmd(&mut s, Command::Search);
    typed(&mut s, "memory_peek");
    update(&mut s, Action::Submit);
    assert_eq!(selected_id(&s), "S08-memory-bag");
    cmd(&mut s, Command::Cancel);
    assert!(s.search.hits().is_empty());
}

#[test]
fn filter_language_narrows_the_navigator() {
    let mut s = v03();
    assert!(aeplens::tui::state::compile("color:red").is_err());
    assert_eq!(
        aeplens::tui::state::shorthand("tool:sql !decision:deny").unwrap(),
        "tool contains \"sql\" and not (decision == \"deny\")"
    );
    update(&mut s, Action::ShowList(NavList::Chains));
    let all = s.nav.items().len();
    cmd(&mut s, Command::Filter);
    typed(&mut s, "tool:send_email");
    update(&mut s, Action::Submit);
    assert!(s.filter.is_applied());
    assert!(s.nav.items().len() < all, "{} < {all}", s.nav.items().len());
    assert!(
        s.nav
            .items()
            .iter()
            .all(|i| matches!(i.target, NavTarget::Chain(_) | NavTarget::Step(..)))
    );
    cmd(&mut s, Command::Filter);
    for _ in 0..20 {
        update(&mut s, Action::Backspace);
    }
    typed(&mut s, "!decision:deny");
    update(&mut s, Action::Submit);
    let filter = &s.filter;
    let d = s.data.as_ref().unwrap();
    let l02 = d
        .analysis
        .graph
        .find(&d.corpus, LEDGER, "L02-sql-denied-drift")
        .unwrap();
    assert!(!filter.passes(l02));
    // A bad expression is refused as it is typed; the last good filter stays applied.
    cmd(&mut s, Command::Filter);
    typed(&mut s, " bad:key");
    assert!(s.filter.fault().is_some());
    let screen = common::screen(&s, 120, 30);
    let rows: Vec<&str> = screen.lines().collect();
    let under = rows[rows.len() - 1];
    assert!(under.contains("^ expected an operator"), "{screen}");
    // The caret is under the `:` of `!decision:deny` (column 10 of the text typed).
    let prompt = rows[rows.len() - 2];
    let at = prompt.find("!decision").unwrap() + "!decision".len();
    assert_eq!(under.find('^'), Some(at), "{screen}");
    update(&mut s, Action::Submit);
    assert!(s.filter.error().unwrap().contains("expected an operator"));
    assert_eq!(s.filter.applied().map(str::trim), Some("!decision:deny"));
    assert!(!s.filter.passes(l02));
}

#[test]
fn copy_menu_puts_the_chosen_text_on_the_clipboard() {
    let mut s = v03();
    go(&mut s, LEDGER, "L03-sql-reapproved");
    cmd(&mut s, Command::Copy);
    let Overlay::Copy(items, _) = &s.overlay else {
        panic!("copy menu")
    };
    let labels: Vec<&str> = items
        .iter()
        .map(aeplens::tui::state::CopyTarget::label)
        .collect();
    assert!(labels.contains(&"action id") && labels.contains(&"record canonical bytes (C1)"));
    cmd(&mut s, Command::Tab(1));
    assert_eq!(s.clipboard, vec!["L03-sql-reapproved".to_string()]);
    assert_eq!(s.overlay, Overlay::None);
    cmd(&mut s, Command::Copy);
    cmd(&mut s, Command::Down);
    cmd(&mut s, Command::Toggle);
    assert!(s.clipboard[1].starts_with("sha256:"));
}

#[test]
fn navigator_lists_and_activation() {
    let mut s = rfc();
    update(&mut s, Action::Focus(Pane::Navigator));
    for list in [
        NavList::Chains,
        NavList::Findings,
        NavList::Leases,
        NavList::Runs,
    ] {
        cmd(&mut s, Command::NextList);
        assert_eq!(s.nav.list(), list);
        assert!(!s.nav.items().is_empty(), "{list:?}");
    }
    // Runs unfold into their chains and leases; activating an item selects its action.
    while !aeplens::tui::state::nav_text(&s, &s.nav.items()[s.nav.cursor()])
        .contains(" run-rfc-payments-7 ·")
    {
        let at = s.nav.cursor();
        cmd(&mut s, Command::Down);
        assert_ne!(s.nav.cursor(), at, "the run is listed");
    }
    cmd(&mut s, Command::Toggle);
    assert!(s.nav.items().iter().any(|i| i.depth == 1));
    cmd(&mut s, Command::Down);
    let before = s.timeline.node();
    cmd(&mut s, Command::Down);
    assert!(s.timeline.node().is_some() && (s.timeline.node() != before || s.nav.cursor() == 2));
}

// ---- journeys ----

#[test]
fn journey_step_a_denied_then_reapproved_chain_to_the_execution() {
    let mut s = v03();
    update(&mut s, Action::ShowList(NavList::Chains));
    // The first chain is the drift deny; open it and walk it.
    cmd(&mut s, Command::Toggle);
    cmd(&mut s, Command::Down);
    assert_eq!(selected_id(&s), "L02-sql-denied-drift");
    update(&mut s, Action::Focus(Pane::Timeline));
    cmd(&mut s, Command::Tab(2));
    let screen = text(&render(&s, 160, 48));
    assert!(screen.contains("≠ drifted"), "{screen}");
    cmd(&mut s, Command::Child);
    assert_eq!(selected_id(&s), "L03-sql-reapproved");
    cmd(&mut s, Command::Tab(1));
    let screen = text(&render(&s, 160, 48));
    assert!(
        screen.contains("follows denied L02-sql-denied-drift"),
        "{screen}"
    );
    assert!(screen.contains("carries a new approval"), "{screen}");
    cmd(&mut s, Command::Child);
    let last = selected_id(&s);
    assert!(["L09-drop-audit-denied", "N02-post-status"].contains(&last.as_str()));
}

#[test]
fn journey_find_the_action_that_ran_outside_its_lease() {
    let mut s = rfc();
    update(&mut s, Action::ShowList(NavList::Leases));
    let first = aeplens::tui::state::nav_text(&s, &s.nav.items()[0]);
    assert!(first.contains("outside"), "{first}");
    cmd(&mut s, Command::Filter);
    typed(&mut s, "lease:after-expiry");
    update(&mut s, Action::Submit);
    cmd(&mut s, Command::Toggle);
    cmd(&mut s, Command::Down);
    cmd(&mut s, Command::Tab(3));
    let screen = text(&render(&s, 160, 48));
    assert!(screen.contains("after-expiry"), "{screen}");
    assert!(screen.contains("LEASE TIMELINE"), "{screen}");
}

#[test]
fn journey_open_a_record_with_a_broken_signature_and_see_why() {
    let mut s = demo();
    cmd(&mut s, Command::NextProblem);
    let d = s.data.as_ref().unwrap();
    let invalid = (0..d.flags.len())
        .find(|n| d.flags[*n] & aeplens::tui::data::flag::INVALID != 0)
        .expect("the demo has a tampered record");
    aeplens::tui::state::select(&mut s, invalid as u32, true);
    cmd(&mut s, Command::Tab(5));
    let screen = text(&render(&s, 160, 48));
    assert!(screen.contains("✗ invalid"), "{screen}");
    assert!(screen.contains("why"), "{screen}");
}

// ---- snapshots ----

/// The text of one screen region (a pane), so a change to one pane touches only its own
/// snapshots.
fn region(t: &Terminal<TestBackend>, r: ratatui::layout::Rect) -> String {
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in r.y..r.y + r.height {
        for x in r.x..r.x + r.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (160, 48)];

/// Snapshots of each pane of `s`, named `{pane}_{state}_{w}x{h}`.
fn snapshot_panes(state: &str, s: &State, w: u16, h: u16, panes: &[&str]) {
    let t = render(s, w, h);
    let a = aeplens::tui::view::layout(ratatui::layout::Rect::new(0, 0, w, h), s);
    for pane in panes {
        let rect = match *pane {
            "header" => a.header,
            "hints" => a.hints,
            "timeline" => a.timeline,
            "detail" => a.detail,
            "navigator" => match (a.navigator, a.tab_bar) {
                (Some(n), _) => n,
                (None, Some(bar)) => bar,
                (None, None) => continue,
            },
            "screen" => ratatui::layout::Rect::new(0, 0, w, h),
            other => panic!("no pane {other}"),
        };
        insta::assert_snapshot!(format!("{pane}_{state}_{w}x{h}"), region(&t, rect));
    }
}

#[test]
fn snapshots_of_every_pane_and_overlay() {
    for (w, h) in SIZES {
        // One action per fixture: the header, timeline and hint bar once; every tab.
        for (name, mut s, run, id) in [
            ("v03_L03", v03(), LEDGER, "L03-sql-reapproved"),
            ("rfc_K03", rfc(), "run-rfc-leases-3", "K03-after-expiry"),
        ] {
            go(&mut s, run, id);
            snapshot_panes(name, &s, w, h, &["header", "timeline", "hints"]);
            for tab in 1..=6u8 {
                cmd(&mut s, Command::Tab(tab));
                let tab_name = DetailTab::ALL[usize::from(tab) - 1].title().to_lowercase();
                snapshot_panes(&format!("{name}_{tab_name}"), &s, w, h, &["detail"]);
            }
        }
        let mut s = rfc();
        go(&mut s, "run-rfc-state-2", "S21-cache-write");
        cmd(&mut s, Command::Tab(4));
        snapshot_panes("rfc_S21_digests", &s, w, h, &["detail"]);
        let mut s = v03();
        for list in NavList::ALL {
            update(&mut s, Action::ShowList(list));
            cmd(&mut s, Command::Toggle);
            let name = format!("v03_{}", list.title().to_lowercase());
            snapshot_panes(&name, &s, w, h, &["navigator", "hints"]);
        }
        let mut s = v03();
        cmd(&mut s, Command::Help);
        snapshot_panes("v03_help", &s, w, h, &["screen"]);
        let mut s = v03();
        cmd(&mut s, Command::Copy);
        snapshot_panes("v03_copy", &s, w, h, &["screen"]);
    }
}

#[test]
fn monochrome_theme_never_queues_a_colour_and_keeps_the_states_readable() {
    let d = data(&[V03], Some("tests/fixtures/reference/keys.json"), None);
    let mut s = state_with(d, Theme::monochrome());
    go(&mut s, LEDGER, "L02-sql-denied-drift");
    let t = render(&s, 160, 48);
    let buf = t.backend().buffer();
    for cell in buf.content() {
        assert!(
            matches!(cell.fg, Color::Reset) && matches!(cell.bg, Color::Reset),
            "{cell:?}"
        );
    }
    insta::assert_snapshot!("v03_monochrome_160x48", text(&t));
    // The selection is still visible: reversed.
    assert!(
        buf.content()
            .iter()
            .any(|c| c.modifier.contains(ratatui::style::Modifier::REVERSED))
    );
}

#[test]
fn dark_theme_colours_denials_red() {
    let mut s = v03();
    go(&mut s, LEDGER, "L01-fetch-schema");
    let t = render(&s, 160, 48);
    let buf = t.backend().buffer();
    assert!(
        buf.content()
            .iter()
            .any(|c| c.symbol() == "⊘" && c.fg == Color::Red),
        "a red denial marker on the timeline"
    );
}

// ---- terminal safety ----

#[test]
fn no_view_sends_a_control_character_from_a_record() {
    let evil = "\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\u{202e}\u{9b}\u{2028}\u{2029}\u{200b}\u{feff}\u{ad}\u{2060}\u{e0041}";
    let esc = |s: &str| serde_json::to_string(s).unwrap();
    let record = format!(
        r#"{{"schema_version":"aep/v0.3","run_id":{run},"created_at_ms":1780000000000,"policy_bundle_digest":{p},"actions":[{{"action_id":{id},"tool_name":{tool},"state_changing":true,"timestamp_ms":1780000000000,"side_effect_class":"mutate-external","scope_lease_id":{lease},"capability_decision":{{"capability":{cap},"subject":"s","resource":"r","decision":"deny"}},"argument_drift":{{"detected":true,"approved_args_digest":{p},"observed_args_digest":"x","resolution":"denied"}},"state_digest_kind":{kind},"state_digest_coverage":{{"namespace":{p}}},"pre_state_digest":{p}}}],"signature":{{"alg":"ed25519","key_id":{p},"sig":{p}}}}}"#,
        run = esc(&format!("run{evil}")),
        id = esc(&format!("act{evil}")),
        tool = esc(&format!("tool{evil}")),
        lease = esc(&format!("lease{evil}")),
        cap = esc(&format!("cap{evil}")),
        kind = esc(&format!("kind{evil}")),
        p = esc(evil),
    );
    let input = parse_input(format!("evil{evil}.json").into(), record.as_bytes());
    let d = common::data(
        Corpus::new(vec![input]),
        &Keyring::default(),
        &SuppliedLeases::default(),
        None,
    );
    let mut s = state_with(d, Theme::dark());
    let mut screens = Vec::new();
    for list in NavList::ALL {
        update(&mut s, Action::ShowList(list));
        cmd(&mut s, Command::Toggle);
        for tab in 1..=6u8 {
            cmd(&mut s, Command::Tab(tab));
            screens.push(render(&s, 160, 48));
            screens.push(render(&s, 80, 24));
        }
    }
    cmd(&mut s, Command::Canonical);
    screens.push(render(&s, 160, 48));
    cmd(&mut s, Command::Copy);
    screens.push(render(&s, 160, 48));
    cmd(&mut s, Command::Cancel);
    cmd(&mut s, Command::Search);
    typed(&mut s, "\u{1b}[31m");
    screens.push(render(&s, 160, 48));
    for t in &screens {
        for cell in t.backend().buffer().content() {
            assert!(
                !cell.symbol().chars().any(unsafe_for_terminal),
                "control character in a cell: {:?}",
                cell.symbol()
            );
        }
    }
    let all: String = screens.iter().map(text).collect();
    assert!(all.contains("\\e]52"), "escapes are shown visibly");
}

#[test]
fn load_errors_are_listed_and_counted_in_the_header() {
    let mut bytes = std::fs::read(V03).unwrap();
    bytes.extend_from_slice(b"{\"torn\": \n");
    let inputs = vec![
        parse_input("store.ndjson".into(), &bytes),
        parse_input("empty.ndjson".into(), b""),
    ];
    let corpus = Corpus::new(inputs);
    let errors: Vec<String> = corpus
        .errors()
        .map(std::string::ToString::to_string)
        .collect();
    assert_eq!(errors.len(), 2);
    let d = common::data(
        corpus,
        &Keyring::default(),
        &SuppliedLeases::default(),
        None,
    );
    let mut s = state_with(d, Theme::dark());
    update(&mut s, Action::Errors(errors));
    for (w, h) in [(80, 24), (160, 48)] {
        let screen = text(&render(&s, w, h));
        let header = screen.lines().next().unwrap();
        assert!(header.contains("⚠ 2 load errors"), "{w}x{h}: {header}");
    }
    // Listed first under Runs, with file and line.
    let screen = text(&render(&s, 160, 48));
    assert!(screen.contains("⚠ store.ndjson:12"), "{screen}");
    assert!(screen.contains("⚠ empty.ndjson: empty file"), "{screen}");
}

#[test]
fn inputs_overlay_names_every_file_its_digest_size_and_errors() {
    let mut bytes = std::fs::read(V03).unwrap();
    bytes.extend_from_slice(b"{\"torn\": \n");
    let corpus = Corpus::new(vec![
        parse_input("store.ndjson".into(), &bytes),
        parse_input("empty\u{1b}[2J.ndjson".into(), b""),
    ]);
    let sha = corpus.inputs[0].sha256.clone().unwrap();
    let mut errors: Vec<String> = corpus
        .errors()
        .map(std::string::ToString::to_string)
        .collect();
    errors.push("leases.ndjson:2: neither a ScopeLease nor an ApprovalReceipt".into());
    let d = common::data(
        corpus,
        &Keyring::default(),
        &SuppliedLeases::default(),
        None,
    );
    let mut s = state_with(d, Theme::dark());
    update(&mut s, Action::Errors(errors));
    cmd(&mut s, Command::Inputs);
    assert!(matches!(s.overlay, Overlay::Inputs(_)));
    let screen = text(&render(&s, 160, 48));
    for expected in [
        "2 inputs · 11 records · 2 load errors",
        "store.ndjson",
        &format!("sha256 {sha}"),
        &format!("ndjson · 11 records · {} bytes", bytes.len()),
        "✗ line 12:",
        "empty\\e[2J.ndjson",
        "OTHER PROBLEMS (lease files)",
        "✗ leases.ndjson:2: neither a ScopeLease",
    ] {
        assert!(screen.contains(expected), "{expected}: {screen}");
    }
    assert!(!screen.contains('\u{1b}'));
    for (w, h) in SIZES {
        snapshot_panes("torn_inputs", &s, w, h, &["screen"]);
    }
    // I again, or Esc, closes it.
    cmd(&mut s, Command::Inputs);
    assert_eq!(s.overlay, Overlay::None);
}

#[test]
fn inputs_overlay_names_the_other_evidence_and_what_it_names() {
    let sib = "tests/fixtures/evidence-types/devfix_siblings.ndjson";
    let corpus = Corpus::new(vec![
        parse_input(V03.into(), &std::fs::read(V03).unwrap()),
        parse_input(sib.into(), &std::fs::read(sib).unwrap()),
    ]);
    let d = common::data(
        corpus,
        &Keyring::default(),
        &SuppliedLeases::default(),
        None,
    );
    let mut s = state_with(d, Theme::dark());
    cmd(&mut s, Command::Inputs);
    let screen = text(&render(&s, 200, 160));
    for expected in [
        "OTHER EVIDENCE",
        "checkpoint ○ not-checked · chain not-present · tests/fixtures/evidence-types/devfix_siblings.ndjson:1",
        "source_checkpoint_id → checkpoint cp-not-loaded: not in the evidence loaded",
        "replay-evidence ○ not-checked",
    ] {
        assert!(screen.contains(expected), "{expected}: {screen}");
    }
    // A replay attestation names the run but is none: the runs are the store's alone.
    let runs = |s: &State| s.data.as_ref().unwrap().analysis.graph.runs.len();
    let alone = common::data(
        Corpus::new(vec![parse_input(V03.into(), &std::fs::read(V03).unwrap())]),
        &Keyring::default(),
        &SuppliedLeases::default(),
        None,
    );
    assert_eq!(runs(&s), alone.analysis.graph.runs.len());
    assert!(!screen.contains("(no run_id)"), "{screen}");
}

#[test]
fn nothing_loaded_says_so_instead_of_an_empty_explorer() {
    let corpus = Corpus::new(vec![parse_input("bad.ndjson".into(), b"not json\n")]);
    let errors: Vec<String> = corpus
        .errors()
        .map(std::string::ToString::to_string)
        .collect();
    let d = common::data(
        corpus,
        &Keyring::default(),
        &SuppliedLeases::default(),
        None,
    );
    let mut s = state_with(d, Theme::dark());
    update(&mut s, Action::Errors(errors));
    let screen = text(&render(&s, 80, 24));
    assert!(screen.contains("Nothing loaded: 1 load error"), "{screen}");
}

#[test]
fn records_without_a_trusted_key_are_said_at_every_width() {
    let s = state_with(data(&[V03], None, None), Theme::dark());
    for (w, h) in [(80, 24), (120, 40), (160, 48)] {
        let screen = text(&render(&s, w, h));
        let header = screen.lines().next().unwrap();
        assert!(
            header.contains("○11 (11 unknown key — pass --keys)"),
            "{w}x{h}: {header}"
        );
        assert!(!header.contains("✓11"), "{header}");
    }
    // With the keys the warning goes.
    let header = text(&render(&v03(), 160, 48));
    assert!(!header.lines().next().unwrap().contains("unknown key"));
    // Keys given that lack the records' key: "pass --keys" would mislead.
    let mut s = state_with(data(&[V03], None, None), Theme::dark());
    s.keys_given = true;
    let screen = text(&render(&s, 160, 48));
    let header = screen.lines().next().unwrap();
    assert!(
        header.contains("○11 (11 unknown key — not in the keys given)"),
        "{header}"
    );
}

/// An empty navigator list names the filter only when one is applied.
#[test]
fn an_empty_list_names_the_filter_only_under_one() {
    let mut s = v03();
    cmd(&mut s, Command::Filter);
    typed(&mut s, "tool:no_such_tool");
    update(&mut s, Action::Submit);
    assert!(s.nav.items().is_empty());
    let screen = text(&render(&s, 120, 40));
    assert!(
        screen.contains("nothing passes the filter (f changes it)"),
        "{screen}"
    );
    // No filter, a list with nothing in it (no marks yet): that alone is said.
    let mut s = v03();
    update(&mut s, Action::ShowList(NavList::Marks));
    assert!(s.nav.items().is_empty());
    let screen = text(&render(&s, 120, 40));
    assert!(
        screen.contains("nothing here") && !screen.contains("filter ("),
        "{screen}"
    );
}

#[test]
fn chain_counts_draw_only_intact_paths_as_checked() {
    // v03: one linked pair, nine records with no link: ✓1, nine vacuous, none intact.
    let header = text(&render(&v03(), 160, 48));
    let header = header.lines().next().unwrap();
    assert!(header.contains("chains ✓1 ○9"), "{header}");
    // The demo: a record edited after signing leaves the next one orphaned.
    let header = text(&render(&demo(), 200, 48));
    let header = header.lines().next().unwrap();
    assert!(header.contains("✗1 (incident.ndjson:3)"), "{header}");
}

#[test]
fn a_record_level_violation_names_the_action_it_concerns() {
    // The demo's third record holds V14 about act-007; seen from act-005 (same record) it
    // must name act-007, never read as act-005's own.
    let mut s = demo();
    go(&mut s, "run-deploy-0042", "act-005");
    cmd(&mut s, Command::Tab(5));
    let screen = text(&render(&s, 160, 60));
    assert!(screen.contains("semantic V14 [on act-007]"), "{screen}");
    // The why stands right under the axes, before the rest of the pane.
    let axis = screen.find("semantic          ").unwrap();
    let why = screen.find("semantic V14 [on act-007]").unwrap();
    let authenticity = screen.find("authenticity      ").unwrap();
    assert!(axis < authenticity && authenticity < why, "{screen}");
    assert!(screen[axis..why].lines().count() < 8, "{screen}");
    // `o` goes to the action the violation names.
    cmd(&mut s, Command::JumpToViolation);
    assert_eq!(selected_id(&s), "act-007");
    let screen = text(&render(&s, 160, 60));
    assert!(screen.contains("V14 [this action]"), "{screen}");
}

#[test]
fn each_glyph_has_one_meaning_in_the_legend() {
    let legend = aeplens::tui::view::GLYPH_LEGEND.join("  ");
    for glyph in [
        "⊘", "↻", "≠", "‼", "●", "◆", "◌", "✗", "⧗", "⌛", "◉", "◐", "≉", "✓", "○", "~", "▲", "?",
        "⋯", "⋎", "Δ", "=", "–",
    ] {
        assert_eq!(legend.matches(glyph).count(), 1, "{glyph} in {legend}");
    }
}

#[test]
fn chain_roles_come_from_the_analysis() {
    use aeplens::tui::data::flag;
    let s = v03();
    let d = s.data.as_ref().unwrap();
    let g = &d.analysis.graph;
    for (n, f) in d.flags.iter().enumerate() {
        assert!(
            !(f & flag::DENIED != 0 && f & flag::REAPPROVED != 0),
            "node {n} is denied and marked re-approved"
        );
    }
    let flags = |id: &str| d.flags[g.find(&d.corpus, LEDGER, id).unwrap() as usize];
    assert_ne!(flags("L03-sql-reapproved") & flag::REAPPROVED, 0);
    // Denied again inside the L02 chain: denied, not re-approved.
    let l09 = flags("L09-drop-audit-denied");
    assert_ne!(l09 & flag::DENIED, 0);
    assert_eq!(l09 & flag::REAPPROVED, 0);
}

#[test]
fn invisible_characters_leave_no_stale_cell_when_tabs_change() {
    // The reference store with U+2028/2029, zero-width and tag characters, bidi marks.
    let d = data(
        &["tests/fixtures/reference-stores/unicode_ids_and_values.ndjson"],
        Some("tests/fixtures/reference-stores/keys.json"),
        None,
    );
    let mut s = state_with(d, Theme::dark());
    for (w, h) in [(80, 24), (160, 48)] {
        // One terminal kept across redraws (what a user's screen is) against a fresh one.
        let mut kept = Terminal::new(TestBackend::new(w, h)).unwrap();
        for step in 0..12u8 {
            cmd(&mut s, Command::Tab(step % 6 + 1));
            if step % 3 == 2 {
                cmd(&mut s, Command::Down);
            }
            kept.draw(|f| f.render_widget(&Screen(&s), f.area()))
                .unwrap();
            let fresh = render(&s, w, h);
            assert_eq!(
                terminal_view(&kept),
                terminal_view(&fresh),
                "{w}x{h} step {step}"
            );
            for cell in kept.backend().buffer().content() {
                assert!(
                    !cell.symbol().chars().any(unsafe_for_terminal),
                    "{:?}",
                    cell.symbol()
                );
            }
        }
    }
}

/// What a terminal shows of a test screen: a cell under the right half of a wide
/// character is covered by it (TestBackend keeps whatever was there before; a terminal
/// does not), so it reads as the wide character's continuation.
fn terminal_view(t: &Terminal<TestBackend>) -> String {
    use unicode_width::UnicodeWidthStr;
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut covered = false;
        for x in 0..buf.area.width {
            let symbol = buf[(x, y)].symbol();
            if covered {
                covered = false;
                out.push('·');
                continue;
            }
            out.push_str(symbol);
            covered = symbol.width() > 1;
        }
        out.push('\n');
    }
    out
}

/// Controls, bidi marks and the characters terminals draw with another width than
/// ratatui counts, or not at all (U+2028/2029, zero-width, BOM, soft hyphen, word joiner,
/// tag characters): listed here, not taken from the code under test.
fn unsafe_for_terminal(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}' | '\u{200b}'..='\u{200f}'
        | '\u{feff}' | '\u{ad}' | '\u{2060}'..='\u{2064}' | '\u{e0000}'..='\u{e007f}')
}

#[test]
fn the_record_tab_shows_the_file_in_order_with_the_broken_link() {
    // The demo's second record was edited after signing: the third one's link names a
    // hash that is no longer there.
    let mut s = demo();
    go(&mut s, "run-deploy-0042", "act-007");
    cmd(&mut s, Command::Tab(5));
    let screen = text(&render(&s, 160, 80));
    assert!(
        screen
            .contains("FILE assets/demo/evidence/incident.ndjson · 5 records · file order broken"),
        "{screen}"
    );
    assert!(
        screen.contains("chain path        ~ orphaned · 1 record · incident.ndjson:3"),
        "{screen}"
    );
    assert!(screen.contains("#2    line 3      mismatch"), "{screen}");
    let d = s.data.as_ref().unwrap();
    let report = d.report.as_ref().unwrap();
    let expected = &report.records[1].canonical_sha256;
    assert!(screen.contains(&format!("expected {expected}")), "{screen}");
    assert!(screen.contains("actual   "), "{screen}");
}

#[test]
fn help_and_quit_are_pinned_and_a_tiny_terminal_is_told_so() {
    let mut s = demo();
    for focus in [Pane::Navigator, Pane::Timeline, Pane::Detail] {
        update(&mut s, Action::Focus(focus));
        for (w, h) in [(60, 16), (80, 24), (120, 40), (200, 60)] {
            let screen = text(&render(&s, w, h));
            let hints = screen.lines().last().unwrap().trim_end();
            assert!(hints.ends_with("? help · q quit"), "{w}x{h}: {hints}");
        }
    }
    let screen = text(&render(&s, 50, 10));
    assert!(screen.contains("terminal too small (50×10)"), "{screen}");
    assert!(screen.contains("press q to quit"), "{screen}");
}

#[test]
fn clicking_a_detail_tab_title_opens_that_tab() {
    let mut s = demo();
    go(&mut s, "run-deploy-0042", "act-003");
    let (w, h) = (160, 48);
    let areas = aeplens::tui::view::layout(ratatui::layout::Rect::new(0, 0, w, h), &s);
    let screen = text(&render(&s, w, h));
    let title = screen.lines().nth(areas.detail.y as usize).unwrap();
    let at = title.find("4 Digests").unwrap();
    let column = title[..at].chars().count() as u16;
    let a = aeplens::tui::view::tab_at(&s, &areas, column, areas.detail.y).unwrap();
    update(&mut s, a);
    assert_eq!(s.detail.tab(), DetailTab::Digests);
}

#[test]
fn the_header_abbreviates_instead_of_dropping_at_80_columns() {
    let mut s = demo();
    s.banner =
        Some("demo incident (public test key) · open your own: aeplens --keys K PATH".into());
    let screen = text(&render(&s, 80, 24));
    let header = screen.lines().next().unwrap();
    let parts = [
        "5 rec",
        "✓4",
        "✗1",
        "ch ✓1",
        "(incident:3)",
        "▲4",
        "f:—",
        "demo",
    ];
    for part in parts {
        assert!(header.contains(part), "{part:?} in {header}");
    }
    // Problems come first, in full words, at every width (one not of an input — a lease
    // file's — is not a load error).
    update(
        &mut s,
        Action::Errors(vec!["x.ndjson:3: broken line".into()]),
    );
    let screen = text(&render(&s, 80, 24));
    let header = screen.lines().next().unwrap();
    for part in [
        "⚠ 1 lease-file problem",
        "5 rec",
        "✓4",
        "✗1",
        "(incident:3)",
        "▲4",
    ] {
        assert!(header.contains(part), "{part:?} in {header}");
    }
    // Wide enough: the full words.
    let screen = text(&render(&s, 240, 40));
    let header = screen.lines().next().unwrap();
    assert!(
        header.contains("1 input · 5 records") && header.contains("findings"),
        "{header}"
    );
}

#[test]
fn search_counts_real_matches_and_ranks_literal_ones_first() {
    let mut s = demo();
    cmd(&mut s, Command::Search);
    typed(&mut s, "act-003");
    assert_eq!(s.search.hits().len(), 1, "one action is act-003");
    assert!(!s.search.is_fuzzy());
    let screen = text(&render(&s, 160, 48));
    assert!(screen.contains("(1 match in this run"), "{screen}");
    update(&mut s, Action::Submit);
    assert_eq!(selected_id(&s), "act-003");
    // Nothing literal: the fuzzy fallback says so.
    cmd(&mut s, Command::Search);
    typed(&mut s, "wrfl");
    assert!(s.search.is_fuzzy() && !s.search.hits().is_empty());
    let screen = text(&render(&s, 160, 48));
    assert!(screen.contains("fuzzy matches in this run"), "{screen}");
}

#[test]
fn the_navigator_widens_with_the_terminal_and_resizes() {
    use aeplens::tui::view::layout;
    use ratatui::layout::Rect;
    let mut s = demo();
    let width = |s: &State, w| layout(Rect::new(0, 0, w, 50), s).navigator.unwrap().width;
    assert_eq!(width(&s, 160), 42);
    assert_eq!(width(&s, 240), 60);
    cmd(&mut s, Command::WidenNavigator);
    assert_eq!(width(&s, 240), 64);
    cmd(&mut s, Command::NarrowNavigator);
    cmd(&mut s, Command::NarrowNavigator);
    assert_eq!(width(&s, 160), 38);
    // The timeline always keeps room.
    for _ in 0..30 {
        cmd(&mut s, Command::WidenNavigator);
    }
    assert!(width(&s, 120) <= 80);
}

#[test]
fn findings_are_grouped_by_id_with_counts() {
    let mut s = v03();
    update(&mut s, Action::ShowList(NavList::Findings));
    let groups: Vec<String> = s
        .nav
        .items()
        .iter()
        .filter(|i| matches!(i.target, NavTarget::FindingGroup(_)))
        .map(|i| aeplens::tui::state::nav_text(&s, i))
        .collect();
    let d = s.data.as_ref().unwrap();
    let ids: std::collections::BTreeSet<&str> = d.findings.iter().map(|f| f.id).collect();
    assert_eq!(groups.len(), ids.len(), "one group per id: {groups:?}");
    let total: usize = groups
        .iter()
        .map(|g| g.rsplit('×').next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(total, d.findings.len());
    // Folded until opened; Enter shows the members.
    let before = s.nav.items().len();
    cmd(&mut s, Command::Toggle);
    assert!(s.nav.items().len() > before);
}

#[test]
fn the_navigator_follows_a_jump_to_another_run() {
    let mut s = demo();
    // Next problems until the selection leaves the first run.
    let first_run = s.timeline.run();
    for _ in 0..20 {
        cmd(&mut s, Command::NextProblem);
        if s.timeline.run() != first_run {
            break;
        }
    }
    assert_ne!(
        s.timeline.run(),
        first_run,
        "the demo has problems in other runs"
    );
    let item = &s.nav.items()[s.nav.cursor()];
    assert_eq!(item.target, NavTarget::Run(s.timeline.run()));
}

#[test]
fn every_detail_tab_stays_reachable_at_80_columns() {
    let mut s = demo();
    go(&mut s, "run-deploy-0042", "act-003");
    for tab in 1..=6u8 {
        cmd(&mut s, Command::Tab(tab));
        let screen = text(&render(&s, 80, 24));
        let areas = aeplens::tui::view::layout(ratatui::layout::Rect::new(0, 0, 80, 24), &s);
        let title = screen.lines().nth(areas.detail.y as usize).unwrap();
        for n in 1..=6 {
            assert!(title.contains(&format!(" {n} ")), "tab {n} in {title}");
        }
        assert!(title.contains("Raw"), "{title}");
    }
}

#[test]
fn the_authority_tab_fits_its_width() {
    let mut s = demo();
    go(&mut s, "run-deploy-0042", "act-003");
    cmd(&mut s, Command::Tab(1));
    // Wide: side by side, digests in full, headers in view.
    let screen = text(&render(&s, 240, 60));
    let d = s.data.as_ref().unwrap();
    let n = s.timeline.node().unwrap();
    let (_, a) = d.analysis.graph.action(&d.corpus, n).unwrap();
    let hash = a.str_field("approval_context_hash").unwrap();
    assert!(screen.contains(hash), "full digest shown: {screen}");
    assert!(
        screen
            .lines()
            .any(|l| l.contains("AVAILABLE") && l.contains("EXERCISED"))
    );
    // Narrow: stacked, every continuation starts at the value column, tags whole.
    for (w, h) in [(80, 60), (99, 60)] {
        let screen = text(&render(&s, w, h));
        assert!(
            !screen
                .lines()
                .any(|l| l.contains("AVAILABLE") && l.contains("EXERCISED")),
            "{w}: stacked"
        );
        for line in screen.lines() {
            let inside = line.trim_start_matches('│');
            assert!(
                !inside.trim_end_matches('│').trim_end().ends_with("[JS"),
                "split tag: {line}"
            );
        }
    }
    // Findings of the action come first.
    go(&mut s, "run-deploy-0042", "act-007");
    let screen = text(&render(&s, 160, 48));
    let findings_at = screen.find("FINDINGS ON THIS ACTION").expect(&screen);
    let changed_at = screen.find("CHANGED BETWEEN APPROVAL").unwrap();
    assert!(findings_at < changed_at);
}

#[test]
fn zoom_stays_centred_on_the_selected_action_and_the_title_says_what_is_shown() {
    let mut s = demo();
    go(&mut s, "run-deploy-0042", "act-004");
    let screen = text(&render(&s, 160, 48));
    assert!(
        screen.contains("Timeline · run-deploy-0042 · 2026-"),
        "date in the title"
    );
    for _ in 0..4 {
        cmd(&mut s, Command::ZoomIn);
    }
    let screen = text(&render(&s, 160, 48));
    assert!(screen.contains("· showing "), "{screen}");
    let d = s.data.as_ref().unwrap();
    let axis = aeplens::tui::view::run_axis(&s, d);
    let t = d.analysis.graph.nodes[s.timeline.node().unwrap() as usize]
        .time()
        .unwrap();
    let x = axis
        .x(t, 100, s.timeline.zoom(), s.timeline.pan())
        .expect("the selected action stays in view");
    assert!((30..=70).contains(&x), "near the centre: {x}");
}

/// A node's search text is read from its facts when asked for: its id, tool, resource,
/// arguments digest, lease and state digests, lower-cased, each followed by a space.
#[test]
fn search_text_is_read_from_the_facts() {
    let s = demo();
    let d = s.data.as_ref().unwrap();
    let hay = d.haystacks();
    assert_eq!(hay.len(), d.analysis.graph.nodes.len());
    let node = d
        .analysis
        .graph
        .find(&d.corpus, "run-deploy-0042", "act-005")
        .unwrap();
    let mut text = String::from("kept ");
    hay.write(node, &mut text);
    assert_eq!(
        text,
        "kept act-005 write_file sandbox://deploy/out \
         sha256:182a3511f98b0e78508cb2cd3773c65eb4849a8abd0b5d11b1cf0f65ff5678ba lease-0007 \
         sha256:0ddbe7a2bfe953f03310d02c939d8ece9f785ab4478681b6b44d9cc82d0d88b4 \
         sha256:3ac2273a6e16d09e266947d24ed89037b5c0ca3f22a680c355473c0318591354 "
    );
}

#[test]
fn a_background_search_can_be_cancelled_and_only_its_own_result_is_taken() {
    use aeplens::tui::state::{AllMatches, matches_all};
    use std::sync::atomic::{AtomicBool, AtomicUsize};
    let texts: Vec<String> = (0..10_000).map(|i| format!("act-{i} write_file")).collect();
    let hay = |n: u32, buf: &mut String| buf.push_str(&texts[n as usize]);
    let cancelled = AtomicBool::new(true);
    assert!(matches_all(10_000, &hay, "act-42", &AtomicUsize::new(0), &cancelled).is_none());
    let found = matches_all(
        10_000,
        &hay,
        "act-42",
        &AtomicUsize::new(0),
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(found.best, Some(42), "the whole-word match wins");
    assert!(!found.fuzzy);

    // Every all-runs search in the background (as on large evidence).
    let mut s = demo();
    s.search.set_background_from(1);
    let d = s.data.as_ref().unwrap();
    let target = d
        .analysis
        .graph
        .find(&d.corpus, "run-deploy-0044", "act-001")
        .unwrap();
    let result = AllMatches {
        nodes: vec![target],
        best: Some(target),
        fuzzy: false,
    };
    let search = |s: &mut State, q: &str| {
        cmd(s, Command::Search);
        typed(s, q);
        update(s, Action::Submit);
    };
    search(&mut s, "new");
    let screen = text(&render(&s, 120, 40));
    assert!(
        screen.contains("searching every run for \"new\"… 0% (Esc cancels)"),
        "{screen}"
    );
    // The event loop takes the job once.
    let job = s.search.job_to_start().expect("a job to run");
    assert!(s.search.job_to_start().is_none());
    // A result for another query than the running one is dropped.
    update(&mut s, Action::SearchDone("old".into(), result.clone()));
    assert_ne!(s.timeline.node(), Some(target));
    // Esc cancels the running job.
    cmd(&mut s, Command::Cancel);
    assert!(s.search.job().is_none());
    assert!(job.cancel.load(std::sync::atomic::Ordering::Relaxed));
    // Its own result is taken and selected.
    search(&mut s, "act-001");
    update(&mut s, Action::SearchDone("act-001".into(), result));
    assert_eq!(s.timeline.node(), Some(target));
    assert!(s.search.job().is_none());
}

#[test]
fn journey_compare_a_re_approved_action_with_its_denied_parent() {
    let mut s = demo();
    go(&mut s, "run-deploy-0042", "act-003");
    cmd(&mut s, Command::Compare);
    assert!(matches!(s.overlay, Overlay::Compare(_)), "{:?}", s.message);
    let screen = text(&render(&s, 160, 48));
    for expected in [
        "re-approved after this denied parent",
        "act-002 (denied parent",
        "act-003 (re-approved",
        "≠",
        "members differ",
        "WHAT CHANGED BETWEEN APPROVAL AND EXECUTION",
    ] {
        assert!(screen.contains(expected), "{expected}: {screen}");
    }
    for (w, h) in SIZES {
        snapshot_panes("demo_compare_act003", &s, w, h, &["screen"]);
    }
    cmd(&mut s, Command::Cancel);
    assert_eq!(s.overlay, Overlay::None);
    // From the deny, the same pair; an action with no counterpart says so.
    go(&mut s, "run-deploy-0042", "act-002");
    cmd(&mut s, Command::Compare);
    let screen = text(&render(&s, 160, 48));
    assert!(
        screen.contains("denied, then re-approved by this child"),
        "{screen}"
    );
    cmd(&mut s, Command::Cancel);
    go(&mut s, "run-deploy-0042", "act-004");
    cmd(&mut s, Command::Compare);
    assert_eq!(s.overlay, Overlay::None);
    assert!(
        s.message
            .as_deref()
            .unwrap_or("")
            .starts_with("nothing to compare")
    );
    // The rewritten act-001 compares its first copy with the later one (V17).
    go(&mut s, "run-deploy-0042", "act-001");
    cmd(&mut s, Command::Compare);
    let screen = text(&render(&s, 160, 48));
    assert!(
        screen.contains("rewritten in a later snapshot (V17)"),
        "{screen}"
    );
    assert!(screen.contains("Δtool_name"), "{screen}");
}

#[test]
fn p_shows_only_the_actions_with_a_problem_and_again_all() {
    let mut s = demo();
    let d = s.data.as_ref().unwrap();
    let problems = d
        .flags
        .iter()
        .filter(|f| **f & aeplens::tui::data::flag::PROBLEM != 0)
        .count();
    let all = d.flags.len();
    assert!(problems > 0 && problems < all);
    cmd(&mut s, Command::ProblemsOnly);
    assert_eq!(
        s.message.as_deref(),
        Some(format!("filter: {problems} of {all} actions").as_str())
    );
    let d = s.data.as_ref().unwrap();
    for n in 0..all as u32 {
        assert_eq!(
            s.passes(n),
            d.flags[n as usize] & aeplens::tui::data::flag::PROBLEM != 0
        );
    }
    cmd(&mut s, Command::ProblemsOnly);
    assert!(!s.filter.is_applied());
    assert!((0..all as u32).all(|n| s.passes(n)));
    // Typed, the same term; an unknown `is:` value is refused.
    assert!(aeplens::tui::state::compile("is:problem").is_ok());
    assert!(aeplens::tui::state::compile("is:fine").is_err());
}

/// The explorer as the worker loads a store (each record's JSON let go once verified),
/// on a copy of the v0.3 reference store in a fresh directory.
fn let_go(name: &str) -> (State, std::path::PathBuf) {
    use aeplens::verify::{Options, Trees};
    let dir = common::run_dir(&format!("tui-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("v03.ndjson");
    std::fs::copy(V03, &store).unwrap();
    let keys = common::keyring(Path::new("tests/fixtures/reference/keys.json"));
    let leases = aeplens::analysis::lease::SuppliedLeases::default();
    let paths = [store.display().to_string()];
    let ev = aeplens::open::kept::whole(
        &paths,
        &common::setting_of(&keys, &Options::default(), &leases),
        None,
        Trees::OnDisk,
        &mut |_| {},
    );
    let mut d = Data::new(
        std::sync::Arc::new(ev.corpus),
        std::sync::Arc::new(ev.analysis),
        Vec::new(),
    );
    d.set_report(std::sync::Arc::new(ev.report), ev.findings);
    (state_with(d, Theme::dark()), store)
}

#[test]
fn a_filter_reads_no_record_and_a_record_changed_since_verification_is_not_shown() {
    let (mut s, store) = let_go("reread");
    let held = |s: &State| {
        let d = s.data.as_ref().unwrap();
        d.corpus.records().filter(|r| r.is_held()).count()
    };
    let before = held(&s);
    cmd(&mut s, Command::Filter);
    typed(&mut s, "tool:send_email !decision:deny class:read");
    update(&mut s, Action::Submit);
    assert!(s.filter.is_applied());
    assert_eq!(held(&s), before, "the filter read records again");
    // The selected action's record changes on disk (same length): the detail pane says
    // so and shows nothing of it.
    let d = s.data.as_ref().unwrap();
    let node = s.timeline.node().unwrap();
    let record = d
        .corpus
        .record(d.analysis.graph.nodes[node as usize].record as usize);
    assert!(
        !record.is_held(),
        "the selected record was read before the edit"
    );
    let span = record.span.unwrap();
    let mut bytes = std::fs::read(&store).unwrap();
    let line = &mut bytes[span.offset as usize..(span.offset + u64::from(span.len)) as usize];
    let at = line.windows(8).position(|w| w == b"\"run_id\"").unwrap() + 1;
    line[at] = b'R';
    std::fs::write(&store, &bytes).unwrap();
    let screen = format!("{:?}", render(&s, 160, 48).backend());
    assert!(screen.contains("changed after it was"), "{screen}");
    assert!(!screen.contains("\"run_id\""));
    let _ = std::fs::remove_dir_all(store.parent().unwrap());
}

/// Every label on the time axis is whole (`HH:MM`, `HH:MM:SS`, `HH:MM:SS.mmm`, or a
/// compressed gap `⋯41s⋯`), at every width, zoom and pan: none is cut at the pane's edge.
#[test]
fn axis_labels_are_never_cut() {
    let whole = |label: &str| {
        let shape: String = label
            .chars()
            .map(|c| if c.is_ascii_digit() { '9' } else { c })
            .collect();
        ["99:99", "99:99:99", "99:99:99.999"].contains(&shape.as_str())
            || (label.starts_with('⋯') && label.ends_with('⋯') && label.chars().count() > 2)
    };
    let mut labels = 0;
    for (mut s, run, id) in [
        (demo(), "run-deploy-0042", "act-004"),
        (rfc(), "run-rfc-leases-3", "K03-after-expiry"),
    ] {
        go(&mut s, run, id);
        for zoom in 0..7 {
            for pan in 0..4 {
                for (w, h) in [(80, 24), (120, 40), (200, 60)] {
                    let screen = text(&render(&s, w, h));
                    let row = screen
                        .lines()
                        .find(|l| l.contains("│action"))
                        .unwrap_or_else(|| panic!("no axis row:\n{screen}"));
                    // The axis starts after the tree's column rule.
                    let axis = row.split("│action").nth(1).unwrap();
                    let axis = &axis[axis.find('│').unwrap() + '│'.len_utf8()..];
                    let axis = axis.trim_end().trim_end_matches('│');
                    for label in axis.split('│').map(str::trim).filter(|l| !l.is_empty()) {
                        for part in label.split_whitespace() {
                            assert!(
                                whole(part),
                                "{w}x{h} zoom {zoom} pan {pan}: {part:?} in {row}"
                            );
                            labels += 1;
                        }
                    }
                }
                cmd(&mut s, Command::Right);
            }
            cmd(&mut s, Command::ZoomIn);
        }
    }
    assert!(labels > 200, "labels were read: {labels}");
}

#[test]
fn tab_completes_a_field_then_a_value_and_says_what_it_offers() {
    let mut s = v03();
    cmd(&mut s, Command::Filter);
    typed(&mut s, "rec");
    update(&mut s, Action::Complete);
    // Every `record.*` field shares `record.`: completed that far, the rest offered.
    assert_eq!(s.filter.text(), "record.");
    let offered = s.filter.offered().unwrap().to_string();
    assert!(
        offered.contains("record.authenticity") && offered.contains("record.key"),
        "{offered}"
    );
    let screen = common::screen(&s, 160, 48);
    assert!(
        screen
            .lines()
            .last()
            .unwrap()
            .contains("Tab: 6 completions"),
        "{screen}"
    );
    typed(&mut s, "auth");
    assert!(s.filter.offered().is_none(), "an edit takes the offer away");
    update(&mut s, Action::Complete);
    assert_eq!(s.filter.text(), "record.authenticity");
    typed(&mut s, " == \"inv");
    update(&mut s, Action::Complete);
    assert_eq!(s.filter.text(), "record.authenticity == \"invalid\"");
    assert!(s.filter.fault().is_none());
    assert_eq!(
        s.filter.applied(),
        Some("record.authenticity == \"invalid\"")
    );
    // A value seen in the evidence, for a field with no closed list.
    cmd(&mut s, Command::Cancel);
    cmd(&mut s, Command::Filter);
    for _ in 0..40 {
        update(&mut s, Action::Backspace);
    }
    typed(&mut s, "tool == \"send_e");
    update(&mut s, Action::Complete);
    assert_eq!(s.filter.text(), "tool == \"send_email\"");
}

#[test]
fn while_the_rest_loads_the_header_says_how_much_is_shown() {
    use aeplens::analysis::Analysis;
    use aeplens::tui::state::Progress;
    let one =
        std::fs::read_to_string("tests/fixtures/reference-stores/three_emitters_one_store.ndjson")
            .unwrap();
    let dir = common::run_dir("so-far");
    std::fs::create_dir_all(&dir).unwrap();
    let store = dir.join("grown.ndjson");
    std::fs::write(&store, one.repeat(40)).unwrap();
    let size = std::fs::metadata(&store).unwrap().len();
    let paths = [store.display().to_string()];
    let head = aeplens::load::load_prefix(&paths, size / 4).unwrap();
    let corpus = std::sync::Arc::new(aeplens::load::Corpus::new(head));
    let shown = corpus.len();
    let analysis = std::sync::Arc::new(Analysis::build(&corpus, &SuppliedLeases::default()));
    let mut s = State::new(Keymap::default(), Theme::dark());
    update(
        &mut s,
        Action::Loaded(Box::new(Data::new(corpus, analysis, Vec::new()))),
    );
    update(
        &mut s,
        Action::Progress(Progress {
            phase: "reading and verifying".into(),
            done: 0,
            total: size as usize,
            finished: false,
        }),
    );
    let header = common::screen(&s, 200, 30)
        .lines()
        .next()
        .unwrap()
        .to_string();
    // 40 copies of 9 records: about 360 in all.
    assert!(
        header.contains(&format!("{shown} of ~360 records so far")),
        "{header}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_header_counts_glyphs_as_check_does() {
    // 4 invalid and 2 binding-mismatch records: ✗ for both, the mismatches named apart;
    // nothing is ○.
    let s = common::explorer(
        &["tests/fixtures/reference-stores/tampered_dsse_envelopes.ndjson"],
        Some("tests/fixtures/reference-stores/keys.json"),
        None,
    );
    let screen = common::screen(&s, 200, 30);
    let header = screen.lines().next().unwrap();
    assert!(
        header.contains("✓0 ✗6 (2 binding-mismatch) ○0 "),
        "{header}"
    );
}

#[test]
fn an_approval_receipt_bound_to_no_lease_is_shown_on_the_action_it_approves() {
    // The gateway's one-shot receipt for rotate_credentials (no leaseId): its tool, its
    // window (01:52:00–01:53:00) and its arguments digest match rc-3, re-approved at
    // 01:52:30 — not rc-2, the denied call with other arguments.
    let store = "tests/fixtures/reference-stores/reapproval_after_denial.ndjson";
    let leases = "tests/fixtures/reference-stores/reapproval_after_denial.leases.ndjson";
    let mut s = common::explorer(
        &[store],
        Some("tests/fixtures/reference-stores/keys.json"),
        Some(leases),
    );
    let run = "run-pub-keyring-rotation";
    go(&mut s, run, "rc-3");
    cmd(&mut s, Command::Tab(3));
    let screen = common::screen(&s, 160, 48);
    assert!(screen.contains("APPROVAL RECEIPT"), "{screen}");
    assert!(screen.contains("9b7ba9fcc37a431a"), "{screen}");
    assert!(
        screen.contains("reapproval_after_denial.leases.ndjson:2"),
        "{screen}"
    );
    go(&mut s, run, "rc-2");
    let screen = common::screen(&s, 160, 48);
    assert!(!screen.contains("APPROVAL RECEIPT"), "{screen}");
    // Every receipt was used: no lease-file problem.
    assert!(s.errors.is_empty(), "{:?}", s.errors);
}

#[test]
fn a_long_status_wraps_onto_a_second_row_and_is_never_cut() {
    let mut s = v03();
    let path = "/home/reviewer/tickets/2026/INC-7-ledger-agent-wire-transfer/INC-7.report.html";
    s.message = Some(format!("html report written: {path}"));
    let screen = common::screen(&s, 80, 24);
    let rows: Vec<&str> = screen.lines().collect();
    let bar = format!("{}{}", rows[22].trim(), rows[23].trim());
    assert!(
        bar.replace(' ', "")
            .contains(&format!("htmlreportwritten:{path}")),
        "{screen}"
    );
    assert!(!bar.contains('…'), "{screen}");
    // A short one keeps the one row.
    s.message = Some("saved".into());
    let screen = common::screen(&s, 80, 24);
    assert!(
        screen.lines().nth(23).unwrap().contains("saved"),
        "{screen}"
    );
}
