//! The agent's telemetry in the explorer (`--traces`): the telemetry lane under a traced
//! run, `e` stopping at a capture gap with the span described, and the span joined to an
//! action on the Record tab — snapshots at 80×24 and 120×40.

use crate::common;

use aeplens::tui::keymap::Command;
use aeplens::tui::state::{Action, State, update};
use common::{explorer, explorer_traced, go, screen};

const DEMO: [&str; 3] = [
    "assets/demo/evidence",
    "assets/demo/keys.json",
    "assets/demo/leases.ndjson",
];

fn traced() -> State {
    explorer_traced(
        &[DEMO[0]],
        Some(DEMO[1]),
        Some(DEMO[2]),
        &["assets/demo/traces.jsonl"],
    )
}

/// The id of the selected action.
fn selected_id(s: &State) -> String {
    let d = s.data.as_ref().unwrap();
    let facts = d
        .analysis
        .graph
        .facts(&d.corpus, s.timeline.node().unwrap());
    facts.unwrap().id().unwrap().to_string()
}

#[test]
fn a_traced_run_has_a_telemetry_lane_and_e_stops_at_its_capture_gap() {
    let mut s = traced();
    go(&mut s, "run-deploy-0042", "act-001");
    let lane = screen(&s, 120, 40);
    assert!(
        lane.contains("telemetry 8 spans ✚1 not in evidence"),
        "{lane}"
    );
    assert!(lane.contains('✚') && lane.contains('┆'), "{lane}");
    insta::assert_snapshot!("capture_lane_120x40", lane);
    insta::assert_snapshot!("capture_lane_80x24", screen(&s, 80, 24));
    // `e` goes through the problems in time order: from act-006 (10:04:10) to the gap
    // (10:08:20), then act-007 (10:08:30); `E` comes back.
    go(&mut s, "run-deploy-0042", "act-006");
    update(&mut s, Action::Command(Command::NextProblem));
    let g = s.timeline.gap().expect("e stops at the capture gap");
    let d = s.data.as_ref().unwrap();
    let c = d.capture.as_deref().unwrap();
    assert_eq!(c.spans[g as usize].tool.as_deref(), Some("shell_exec"));
    // The action before it (act-006, 10:04:10; the gap is at 10:08:20) is the cursor's.
    assert_eq!(selected_id(&s), "act-006");
    let gap = screen(&s, 120, 40);
    for needed in [
        "Capture gap",
        "F-CAPTURE-GAP",
        "shell_exec",
        "no action: a capture gap",
        "offset +1.500",
    ] {
        assert!(gap.contains(needed), "{needed}:\n{gap}");
    }
    insta::assert_snapshot!("capture_gap_120x40", gap);
    insta::assert_snapshot!("capture_gap_80x24", screen(&s, 80, 24));
    // The next `e` leaves the gap for act-007; `E` comes back to it, and again to act-006.
    update(&mut s, Action::Command(Command::NextProblem));
    assert_eq!(s.timeline.gap(), None);
    assert_eq!(selected_id(&s), "act-007");
    update(&mut s, Action::Command(Command::PrevProblem));
    assert_eq!(s.timeline.gap(), Some(g));
    update(&mut s, Action::Command(Command::PrevProblem));
    assert_eq!(
        (s.timeline.gap(), selected_id(&s).as_str()),
        (None, "act-006")
    );
}

#[test]
fn the_record_tab_shows_the_span_joined_to_the_action_and_how() {
    let mut s = traced();
    go(&mut s, "run-deploy-0042", "act-005");
    update(&mut s, Action::Command(Command::Tab(5)));
    let text = screen(&s, 120, 40);
    for needed in [
        "capture",
        "gaps (its run",
        "TELEMETRY",
        "same run and tool",
        "execute_tool write_file",
    ] {
        assert!(text.contains(needed), "{needed}:\n{text}");
    }
    insta::assert_snapshot!("capture_record_tab_120x40", text);
    insta::assert_snapshot!("capture_record_tab_80x24", screen(&s, 80, 24));
}

#[test]
fn without_telemetry_nothing_is_claimed() {
    let mut s = explorer(&[DEMO[0]], Some(DEMO[1]), Some(DEMO[2]));
    go(&mut s, "run-deploy-0042", "act-005");
    update(&mut s, Action::Command(Command::Tab(5)));
    let text = screen(&s, 120, 40);
    assert!(!text.contains("telemetry"), "{text}");
    assert!(text.contains("capture           ○ not evaluated"), "{text}");
    for _ in 0..12 {
        update(&mut s, Action::Command(Command::NextProblem));
        assert_eq!(s.timeline.gap(), None);
    }
}
