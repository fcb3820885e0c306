//! The explorer on records stamped by an RFC 3161 authority and a chain anchored part of
//! the way (tests/fixtures/tsa/, made by openssl): the Record tab says "proven by" only
//! for a verified token and shows which records an anchor covers, the timeline marks
//! proven times — snapshots at 80×24 and 120×40.

use crate::common;

use aeplens::tui::keymap::Command;
use aeplens::tui::state::{Action, State, update};
use common::{go, screen};

const TSA: &str = "tests/fixtures/tsa";

/// The explorer on the stamped store and a moved token, with the TSA root when `trusted`,
/// and the anchor of the store's second record.
fn opened(trusted: bool) -> State {
    let (corpus, mut keys, supplied) = common::inputs(
        &[
            &format!("{TSA}/stamped.ndjson"),
            &format!("{TSA}/moved.ndjson"),
        ],
        Some(&format!("{TSA}/keys.json")),
        None,
    );
    if trusted {
        keys.add_tsa_certs(&format!("{TSA}/root.pem")).unwrap();
    }
    keys.add_anchors(&format!("{TSA}/anchors_mid.ndjson"))
        .unwrap();
    let d = common::data(corpus, &keys, &supplied, None);
    let mut s = State::new(
        aeplens::tui::keymap::Keymap::default(),
        aeplens::tui::theme::Theme::dark(),
    );
    update(&mut s, Action::Loaded(Box::new(d)));
    s
}

#[test]
fn the_record_tab_says_proven_only_for_a_verified_token_and_shows_the_anchored_range() {
    let mut s = opened(true);
    go(&mut s, "run-tsa-stamped", "act-000");
    update(&mut s, Action::Command(Command::Tab(5)));
    let text = screen(&s, 160, 70);
    for needed in [
        "✓ proven by aeplens RSA TSA at 2026-",
        "(±1500 ms)",
        "anchored          through stamped.ndjson:2 (record 2 of 4)",
        "2 after it unanchored",
        "#1    line 2      linked    run-tsa-stamped anchored",
        "#2    line 3      linked    run-tsa-stamped unanchored",
    ] {
        assert!(text.contains(needed), "{needed}:\n{text}");
    }
    insta::assert_snapshot!("time_record_tab_120x40", screen(&s, 120, 40));
    insta::assert_snapshot!("time_record_tab_80x24", screen(&s, 80, 24));
    // The moved token: claimed, with why — never proven.
    go(&mut s, "run-tsa-moved", "act-001");
    let text = screen(&s, 120, 40);
    assert!(text.contains("○ claimed (tsa-imprint-mismatch"), "{text}");
    assert!(!text.contains("✓ proven by"), "{text}");
}

#[test]
fn the_timeline_marks_proven_times_and_nothing_without_the_root() {
    let mut s = opened(true);
    go(&mut s, "run-tsa-stamped", "act-000");
    let text = screen(&s, 120, 40);
    assert!(text.contains("▼ 4 time(s) proven by a TSA"), "{text}");
    assert!(
        text.lines()
            .nth(2)
            .is_some_and(|axis| axis.matches('▼').count() >= 3),
        "{text}"
    );
    insta::assert_snapshot!("time_timeline_120x40", text);
    let mut s = opened(false);
    go(&mut s, "run-tsa-stamped", "act-000");
    let text = screen(&s, 120, 40);
    assert!(!text.contains('▼') && !text.contains("proven"), "{text}");
    update(&mut s, Action::Command(Command::Tab(5)));
    let text = screen(&s, 120, 40);
    assert!(
        text.contains("○ claimed (tsa-untrusted: no TSA root given"),
        "{text}"
    );
    assert!(
        !text.contains("anchored"),
        "an untrusted anchor covers nothing:\n{text}"
    );
}
