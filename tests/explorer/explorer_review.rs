//! What a reviewer reads and acts on in the explorer: a finding described whole in the
//! detail pane (run-level ones too) and Enter going to what it names.

use crate::common;

use aeplens::tui::keymap::Command;
use aeplens::tui::state::{Action, NavList, NavTarget, Pane, State, update};
use common::{explorer, screen};

const DEMO: &str = "assets/demo";

fn demo() -> State {
    explorer(
        &[&format!("{DEMO}/evidence")],
        Some(&format!("{DEMO}/keys.json")),
        Some(&format!("{DEMO}/leases.ndjson")),
    )
}

fn cmd(s: &mut State, c: Command) {
    update(s, Action::Command(c));
}

/// Puts the navigator's cursor on the first finding with `id` (groups unfolded).
fn cursor_on_finding(s: &mut State, id: &str) -> usize {
    while s.nav.list() != NavList::Findings {
        cmd(s, Command::NextList);
    }
    cmd(s, Command::FocusNavigator);
    for _ in 0..200 {
        let item = s.nav.items()[s.nav.cursor()].clone();
        match item.target {
            NavTarget::Finding(i) if s.data.as_ref().unwrap().findings[i].id == id => return i,
            NavTarget::FindingGroup(_) if item.foldable && item.folded => {
                cmd(s, Command::Toggle);
            }
            _ => {}
        }
        cmd(s, Command::Down);
    }
    panic!("no finding {id}");
}

#[test]
fn a_run_level_finding_is_described_whole_and_enter_goes_to_its_record() {
    let mut s = demo();
    let i = cursor_on_finding(&mut s, "F-CHAIN-GAP");
    let f = s.data.as_ref().unwrap().findings[i].clone();
    assert!(f.action_ids.is_empty(), "a run-level finding");
    for (w, h) in [(80, 24), (120, 40), (200, 60)] {
        let text = screen(&s, w, h);
        assert!(text.contains("Finding F-CHAIN-GAP"), "{w}x{h}:\n{text}");
    }
    let text = screen(&s, 200, 60);
    // Its whole message (wrapped, never cut), locations, evidence and fingerprint.
    let flat: String = text
        .lines()
        .map(|l| l.trim_matches(|c| c == '│' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ");
    let words: Vec<&str> = f.message.split_whitespace().collect();
    assert!(
        flat.contains(&words[words.len() - 6..].join(" ")),
        "the message's end: {text}"
    );
    for part in [
        "LOCATIONS",
        "EVIDENCE",
        "incident.ndjson:3",
        "\"before\"",
        &f.fingerprint,
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    // At 80×24 what does not fit says so, and the detail pane scrolls to it.
    let small = screen(&s, 80, 24);
    assert!(small.contains("more lines: F4 then ↓"), "{small}");
    cmd(&mut s, Command::FocusDetail);
    for _ in 0..40 {
        cmd(&mut s, Command::Down);
    }
    let small = screen(&s, 80, 24);
    assert!(small.contains(&f.fingerprint[..12]), "{small}");
    // Enter (from the navigator) goes to the first action of the record after the gap.
    cmd(&mut s, Command::FocusNavigator);
    cmd(&mut s, Command::Toggle);
    assert_eq!(s.focus, Pane::Timeline);
    let d = s.data.as_ref().unwrap();
    let node = s.timeline.node().unwrap();
    let record = d.analysis.graph.nodes[node as usize].record as usize;
    assert_eq!(d.corpus.record(record).source.line, 3);
    // The timeline focused, the detail pane is the action's again.
    assert!(!screen(&s, 120, 40).contains("Finding F-CHAIN-GAP"));
}

#[test]
fn the_raw_tab_shows_strings_as_json_escapes_them() {
    use aeplens::load::{Corpus, parse_input};
    let line = r#"{"schema_version":"aep/v0.3","run_id":"r-raw","created_at_ms":1780740185000,"actions":[{"action_id":"a\"1","tool_name":"say \"hi\" \\ there\u200b","timestamp_ms":1780740185000}]}"#;
    let corpus = Corpus::new(vec![parse_input("raw.ndjson".into(), line.as_bytes())]);
    let d = common::data(
        corpus,
        &aeplens::verify::Keyring::default(),
        &aeplens::analysis::lease::SuppliedLeases::default(),
        None,
    );
    let mut s = State::new(
        aeplens::tui::keymap::Keymap::default(),
        aeplens::tui::theme::Theme::dark(),
    );
    update(&mut s, Action::Loaded(Box::new(d)));
    cmd(&mut s, Command::Tab(6));
    let text = screen(&s, 160, 48);
    assert!(
        text.contains(r#""tool_name": "say \"hi\" \\ there\u{200B}""#),
        "{text}"
    );
    assert!(text.contains(r#""action_id": "a\"1""#), "{text}");
    // The Record tab reads the record's time as ISO-8601 UTC, the raw value beside it.
    cmd(&mut s, Command::Tab(5));
    let text = screen(&s, 160, 48);
    assert!(
        text.contains("created           2026-06-06T10:03:05.000Z (1780740185000)"),
        "{text}"
    );
}

#[test]
fn show_and_the_report_read_times_as_iso_utc_with_the_raw_value() {
    let keys = format!("{DEMO}/keys.json");
    let evidence = format!("{DEMO}/evidence");
    let args = ["--no-index", "--keys", &keys, &evidence];
    let mut show = vec!["show", "act-005", "--format", "text"];
    show.extend(args);
    let (_, text, _) = common::aeplens(&show);
    assert!(
        text.contains("timestamp_ms             2026-06-06T10:03:05.000Z (1780740185000)"),
        "{text}"
    );
    let mut report = vec!["report", "--format", "md"];
    report.extend(args);
    let (_, md, _) = common::aeplens(&report);
    assert!(
        md.contains("2026-06-06T10:03:05.000Z (1780740185000)"),
        "{md}"
    );
    assert!(!md.contains("= 1780740185000"), "{md}");
}

#[test]
fn goto_opens_at_one_action_or_says_why_not() {
    use aeplens::tui::state::goto;
    let mut s = demo();
    let id = |s: &State| {
        let d = s.data.as_ref().unwrap();
        let n = s.timeline.node().unwrap();
        d.analysis
            .graph
            .facts(&d.corpus, n)
            .unwrap()
            .id()
            .unwrap()
            .to_string()
    };
    goto(&mut s, "run-deploy-0042/act-003");
    assert_eq!(id(&s), "act-003");
    assert_eq!(s.focus, Pane::Timeline);
    goto(&mut s, "act-006");
    assert_eq!(id(&s), "act-006");
    goto(&mut s, "act-999");
    assert_eq!(s.message.as_deref(), Some("--goto: no action act-999"));
    assert_eq!(id(&s), "act-006", "nothing else picked");
    // Two emitters sharing a run and its default ids: nothing is picked of several.
    let stores = "tests/fixtures/reference-stores";
    let mut s = explorer(
        &[&format!("{stores}/subagents_default_action_ids.ndjson")],
        Some(&format!("{stores}/keys.json")),
        None,
    );
    let before = s.timeline.node();
    goto(&mut s, "action-0");
    assert!(
        s.message
            .as_deref()
            .unwrap()
            .contains("name one as RUN/ACTION"),
        "{:?}",
        s.message
    );
    assert_eq!(s.timeline.node(), before);
}

#[test]
fn zoomed_in_an_action_off_screen_has_an_arrow_at_the_edge() {
    let mut s = demo();
    aeplens::tui::state::goto(&mut s, "run-deploy-0042/act-001");
    for _ in 0..4 {
        cmd(&mut s, Command::ZoomIn);
    }
    let text = screen(&s, 160, 48);
    // The window shows the start of the run: the later actions point right.
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("act-00")).collect();
    let pointing = rows
        .iter()
        .filter(|l| l.trim_end_matches(['│', ' ']).ends_with('→'))
        .count();
    assert!(pointing >= 3, "{text}");
    assert!(
        text.contains("showing"),
        "the title names the window: {text}"
    );
}

/// The id of the selected action.
fn selected_id(s: &State) -> String {
    let d = s.data.as_ref().unwrap();
    let n = s.timeline.node().unwrap();
    let run = &d.analysis.graph.runs[d.run_of(n)].id;
    let id = d.analysis.graph.facts(&d.corpus, n).unwrap().id().unwrap();
    format!("{run}/{id}")
}

/// Types `line` into the `:` command line.
fn palette(s: &mut State, line: &str) {
    cmd(s, Command::Palette);
    for c in line.chars() {
        update(s, Action::Char(c));
    }
}

/// `:` goes to a time (ISO-8601 UTC, zone and seconds optional, or epoch ms) or an
/// action, completes action ids, commands and report formats with Tab, and says why a
/// line is not a command.
#[test]
fn the_command_line_goes_to_times_and_actions_with_completion() {
    use aeplens::tui::state::{Overlay, suggestions};
    let mut s = demo();
    // A time between two actions: the first at or after it, in any run.
    palette(&mut s, "goto 2026-06-06T10:03:02");
    update(&mut s, Action::Submit);
    assert_eq!(selected_id(&s), "run-deploy-0042/act-004");
    assert!(
        s.message
            .as_deref()
            .unwrap()
            .contains("2026-06-06T10:03:04"),
        "{:?}",
        s.message
    );
    palette(&mut s, "goto 1780740500000");
    update(&mut s, Action::Submit);
    assert_eq!(selected_id(&s), "run-deploy-0042/act-007");
    palette(&mut s, "goto 2026-06-06T10:10Z");
    update(&mut s, Action::Submit);
    assert_eq!(selected_id(&s), "run-deploy-0043/act-001", "another run");
    palette(&mut s, "goto 2030-01-01");
    update(&mut s, Action::Submit);
    assert_eq!(
        selected_id(&s),
        "run-deploy-0044/act-001",
        "the last action"
    );
    assert!(
        s.message
            .as_deref()
            .unwrap()
            .starts_with("every action is before")
    );
    // Action ids complete from the shown run; Tab takes the first, Enter runs it.
    aeplens::tui::state::goto(&mut s, "run-deploy-0042/act-001");
    palette(&mut s, "goto 06");
    let list = suggestions(&s, "goto 06");
    assert_eq!(list[0].line, "goto run-deploy-0042/act-006", "{list:?}");
    cmd(&mut s, Command::Right);
    assert!(matches!(&s.overlay, Overlay::Palette(p) if p.text == "goto run-deploy-0042/act-006"));
    update(&mut s, Action::Submit);
    assert_eq!(selected_id(&s), "run-deploy-0042/act-006");
    // ↓ picks another completion; Enter runs the one highlighted.
    palette(&mut s, "goto act-00");
    cmd(&mut s, Command::Down);
    cmd(&mut s, Command::Down);
    let chosen = suggestions(&s, "goto act-00")[1].line.clone();
    update(&mut s, Action::Submit);
    assert_eq!(format!("goto {}", selected_id(&s)), chosen);
    // A command's first letters run it; the screen lists commands with their help.
    palette(&mut s, "m");
    let text = common::screen(&s, 80, 24);
    assert!(text.contains(":m█"), "{text}");
    assert!(text.contains("marks"), "{text}");
    assert!(text.contains("Tab complete"), "{text}");
    update(&mut s, Action::Submit);
    assert_eq!(s.nav.list(), NavList::Marks);
    assert_eq!(s.overlay, Overlay::None);
    // What is not a command is said, and nothing changes.
    let before = s.timeline.node();
    palette(&mut s, "frobnicate");
    update(&mut s, Action::Submit);
    assert!(s.message.as_deref().unwrap().starts_with("no command"));
    palette(&mut s, "goto act-999");
    update(&mut s, Action::Submit);
    assert_eq!(s.message.as_deref(), Some("no action act-999"));
    assert_eq!(s.timeline.node(), before);
    // Esc closes without running anything.
    palette(&mut s, "quit");
    cmd(&mut s, Command::Cancel);
    assert!(!s.quit && s.overlay == Overlay::None);
}

/// `:filter` sets the filter (completing its terms) and `:filter` alone clears it;
/// `:report FORMAT FILE` asks the loop to write that report there, without a file it
/// opens `R`'s prompt on that format.
#[test]
fn the_command_line_sets_the_filter_and_writes_reports() {
    use aeplens::review::report::Format;
    use aeplens::tui::state::{Overlay, suggestions};
    let mut s = demo();
    let lines: Vec<String> = suggestions(&s, "filter reapp")
        .into_iter()
        .map(|x| x.line)
        .collect();
    assert_eq!(lines, ["filter reapp", "filter reapproved"]);
    let lines: Vec<String> = suggestions(&s, "filter lease.verdict == \"af")
        .into_iter()
        .map(|x| x.line)
        .collect();
    assert_eq!(lines[1], "filter lease.verdict == \"after-expiry\"");
    let tools: Vec<String> = suggestions(&s, "filter tool == \"")
        .into_iter()
        .map(|x| x.line)
        .collect();
    assert!(
        tools.contains(&"filter tool == \"write_file\"".to_string()),
        "{tools:?}"
    );
    palette(&mut s, "filter tool:write_file");
    update(&mut s, Action::Submit);
    assert!(s.filter.is_applied());
    assert_eq!(s.filter.text(), "tool:write_file");
    // The timeline shows what passes and the ancestors that place it in its tree.
    let rows: Vec<u32> = s.timeline.rows().iter().map(|r| r.node).collect();
    let d = s.data.as_ref().unwrap();
    let run = &d.analysis.graph.runs[s.timeline.run()];
    let hidden: Vec<u32> = (run.nodes.iter().copied())
        .filter(|n| !rows.contains(n))
        .collect();
    assert!(!hidden.is_empty(), "a filter hides what it does not pass");
    for n in hidden {
        assert!(!s.passes(n), "{n} passes and is hidden");
    }
    for &n in &rows {
        let passing_below = rows
            .iter()
            .any(|&m| s.passes(m) && d.analysis.graph.nodes[m as usize].parent == Some(n));
        assert!(s.passes(n) || passing_below, "{n} shown for nothing");
    }
    assert!(s.cursor_row().is_some(), "the selection is a row");
    palette(&mut s, "filter bogus:1");
    update(&mut s, Action::Submit);
    assert!(
        s.message
            .as_deref()
            .unwrap()
            .contains("expected an operator")
    );
    assert_eq!(
        s.filter.text(),
        "tool:write_file",
        "a bad filter changes nothing"
    );
    palette(&mut s, "filter");
    update(&mut s, Action::Submit);
    assert!(!s.filter.is_applied());
    // Reports wait for verification: the demo here is verified.
    let s2 = &mut s;
    assert!(s2.data.as_ref().unwrap().report.is_some());
    palette(s2, "report sarif /tmp/x.sarif");
    update(s2, Action::Submit);
    let asked = s2
        .review
        .report_requested
        .take()
        .expect("a report asked for");
    assert_eq!(
        (asked.format, asked.path.as_str()),
        (Format::Sarif, "/tmp/x.sarif")
    );
    palette(s2, "report ju");
    cmd(s2, Command::Right);
    update(s2, Action::Submit);
    assert!(
        matches!(&s2.overlay, Overlay::Report(p) if p.format == Format::Junit),
        "{:?}",
        s2.overlay
    );
    cmd(s2, Command::Cancel);
    palette(s2, "report pdf");
    update(s2, Action::Submit);
    assert!(
        s2.message
            .as_deref()
            .unwrap()
            .starts_with("report as what?")
    );
}

#[test]
fn snapshots_of_the_command_line() {
    let mut s = demo();
    palette(&mut s, "goto act");
    cmd(&mut s, Command::Down);
    for (w, h) in [(80, 24), (120, 40)] {
        insta::assert_snapshot!(format!("palette_{w}x{h}"), screen(&s, w, h));
    }
}

#[test]
fn search_finds_a_value_only_a_rewritten_copy_holds_and_says_so() {
    // The demo's act-001 reads `read_file` in its first copy and `read_fil3` in the later
    // snapshot that rewrote it after signing (F-ACTION-REWRITTEN).
    let mut s = demo();
    update(
        &mut s,
        Action::Command(aeplens::tui::keymap::Command::Search),
    );
    for c in "read_fil3".chars() {
        update(&mut s, Action::Char(c));
    }
    update(&mut s, Action::Submit);
    let message = s.message.clone().unwrap_or_default();
    assert!(
        message.contains("only in a rewritten copy of act-001"),
        "{message}"
    );
    assert!(message.contains("incident.ndjson:2"), "{message}");
    let d = s.data.as_ref().unwrap();
    let node = s.timeline.node().unwrap();
    assert_eq!(
        d.analysis.graph.facts(&d.corpus, node).and_then(|f| f.id()),
        Some("act-001")
    );
    // A value no copy holds is still no match.
    update(
        &mut s,
        Action::Command(aeplens::tui::keymap::Command::Search),
    );
    for _ in 0..9 {
        update(&mut s, Action::Backspace);
    }
    for c in "no-such-tool".chars() {
        update(&mut s, Action::Char(c));
    }
    update(&mut s, Action::Submit);
    assert!(
        s.message.as_deref().unwrap().contains("no match"),
        "{:?}",
        s.message
    );
}
