//! The review: marks, notes and sessions through `update` (the same calls the event loop
//! makes to open and save the review file), marks that no longer match the evidence,
//! broken review files, the report with the reviewer's marks, and the evidence never
//! written.

use crate::common;

use aeplens::review::file::Review;
use aeplens::review::marks::{Place, Target, Verdict};
use aeplens::tui::data::Data;
use aeplens::tui::keymap::{Command, Keymap};
use aeplens::tui::state::{Action, DetailTab, NavTarget, Overlay, Pane, State, update};
use aeplens::tui::theme::Theme;
use aeplens::tui::{open_review, save_review, write_report};
use aeplens::verify::Keyring;
use std::path::{Path, PathBuf};

const RUN: &str = "run-deploy-0042";

/// A scratch directory with a copy of the demo evidence (so it may be edited).
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = common::run_dir(&format!("review-{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("evidence")).unwrap();
        std::fs::copy(
            "assets/demo/evidence/incident.ndjson",
            dir.join("evidence/incident.ndjson"),
        )
        .unwrap();
        Scratch(dir)
    }
    fn evidence(&self) -> PathBuf {
        self.0.join("evidence/incident.ndjson")
    }
    fn review(&self) -> PathBuf {
        self.0.join("tickets/INC-7.review.json")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn keys() -> Keyring {
    common::keyring(Path::new("assets/demo/keys.json"))
}

/// The explorer on `evidence`, its review opened from `review` (as the event loop does).
fn open(evidence: &Path, review: &Path, fresh: bool) -> State {
    // The lease file absolute, as the explorer opens it (and a Reproduce line names it).
    let leases = std::path::absolute("assets/demo/leases.ndjson").unwrap();
    let (corpus, keys, leases) = common::inputs(
        &[evidence.to_str().unwrap()],
        Some("assets/demo/keys.json"),
        Some(leases.to_str().unwrap()),
    );
    let mut s = State::new(Keymap::default(), Theme::dark());
    s.review.settings.fresh = fresh;
    update(
        &mut s,
        Action::Loaded(Box::new(common::data(corpus, &keys, &leases, None))),
    );
    open_review(&mut s, Some(review.to_path_buf()));
    s
}

/// `R`, then Enter on what its prompt offers: the report written (as the event loop
/// does, the review saved first).
fn report(s: &mut State) -> PathBuf {
    cmd(s, Command::Report);
    assert!(matches!(s.overlay, Overlay::Report(_)), "{:?}", s.message);
    update(s, Action::Submit);
    let request = s.review.report_requested.take().expect("Enter asks for it");
    save_review(s, &keys()).unwrap();
    write_report(s, &keys(), &request).unwrap()
}

/// `m` on the first finding of the Findings list (its group unfolded), from the navigator.
fn mark_first_finding(s: &mut State) {
    update(s, Action::ShowList(aeplens::tui::state::NavList::Findings));
    cmd(s, Command::Toggle);
    let row = (s.nav.items().iter())
        .position(|i| matches!(i.target, NavTarget::Finding(_)))
        .unwrap();
    while s.nav.cursor() < row {
        cmd(s, Command::Down);
    }
    cmd(s, Command::FocusNavigator);
    cmd(s, Command::Mark);
}

fn cmd(s: &mut State, c: Command) {
    update(s, Action::Command(c));
}

fn go(s: &mut State, id: &str) {
    common::go(s, RUN, id);
}

fn selected(s: &State) -> String {
    let d = s.data.as_ref().unwrap();
    let (_, a) = d
        .analysis
        .graph
        .action(&d.corpus, s.timeline.node().unwrap())
        .unwrap();
    a.id().unwrap().to_string()
}

fn screen(s: &State, w: u16, h: u16) -> String {
    common::screen(s, w, h)
}

/// Every file under `dir` with its bytes and modification time.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let m = std::fs::metadata(&p).unwrap();
        out.push((p.clone(), std::fs::read(&p).unwrap(), m.modified().unwrap()));
    }
    out.sort();
    out
}

#[test]
fn journey_mark_the_root_cause_with_a_note_quit_reopen_and_report() {
    let x = Scratch::new("journey");
    let evidence_dir = x.evidence().parent().unwrap().to_path_buf();
    let before = snapshot(&evidence_dir);

    let mut s = open(&x.evidence(), &x.review(), false);
    assert!(s.review.review.as_ref().unwrap().marks.is_empty());
    go(&mut s, "act-003");
    cmd(&mut s, Command::Mark);
    cmd(&mut s, Command::CycleVerdict);
    cmd(&mut s, Command::Note);
    let editor = s
        .review
        .editor
        .as_ref()
        .expect("the inline editor (no $EDITOR)");
    assert_eq!(editor.label, format!("{RUN}/act-003"));
    for c in "Re-approved with drifted arguments.\nPolicy bundle changed between approvals.".chars()
    {
        update(&mut s, Action::Char(c));
    }
    let editing = screen(&s, 120, 40);
    assert!(
        editing.contains("Note on run-deploy-0042/act-003"),
        "{editing}"
    );
    assert!(editing.contains("Ctrl-S save"), "{editing}");
    update(&mut s, Action::Submit);
    assert!(s.review.editor.is_none());
    cmd(&mut s, Command::Tab(3));
    // The mark shows in the timeline, the detail header and the header count.
    let shown = screen(&s, 160, 48);
    assert!(shown.contains("⚑ act-003"), "{shown}");
    assert!(
        shown.contains("⚑ ROOT-CAUSE · Re-approved with drifted arguments. (+1 lines: a)"),
        "{shown}"
    );
    assert!(shown.contains("⚑1"), "{shown}");
    // Quit: the session and the marks are saved in the review file, nowhere else.
    cmd(&mut s, Command::Quit);
    assert!(s.quit);
    let saved = save_review(&mut s, &keys()).unwrap();
    assert_eq!(saved.as_deref(), Some(x.review().as_path()));
    let file = Review::read(&x.review()).unwrap().unwrap();
    assert_eq!(file.marks.len(), 1);
    let m = &file.marks[0];
    assert_eq!(m.verdict, Verdict::RootCause);
    assert_eq!(
        m.note,
        "Re-approved with drifted arguments.\nPolicy bundle changed between approvals."
    );
    match &m.target {
        Target::Action {
            run_id,
            action_id,
            record_sha256,
        } => {
            assert_eq!((run_id.as_str(), action_id.as_str()), (RUN, "act-003"));
            assert_eq!(record_sha256.len(), 64);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(file.keyring.len(), 1);
    assert!(file.keyring[0].fingerprint.starts_with("sha256:"));
    assert_eq!(file.evidence.inputs.len(), 1);

    // Reopen: the mark, its note, the selection and the tab are back.
    let mut s = open(&x.evidence(), &x.review(), false);
    assert_eq!(selected(&s), "act-003");
    assert_eq!(s.detail.tab(), DetailTab::Lease);
    let node = s.timeline.node().unwrap();
    let (mark, place) = s.review.mark_of(node).unwrap();
    assert_eq!(mark.verdict, Verdict::RootCause);
    assert!(mark.note.starts_with("Re-approved with drifted"));
    assert_eq!(place, Place::Action(node));
    // ' and " go to it from elsewhere.
    go(&mut s, "act-001");
    cmd(&mut s, Command::NextMark);
    assert_eq!(selected(&s), "act-003");
    // `--fresh` starts at the first action, the marks still there.
    let fresh = open(&x.evidence(), &x.review(), true);
    assert_ne!(selected(&fresh), "act-003");
    assert_eq!(fresh.review.counts(), (1, 0));

    // The report (R) leads with the mark, its note and the action's three answers.
    let out = report(&mut s);
    assert_eq!(out, x.review().with_extension("report.html"));
    let html = std::fs::read_to_string(&out).unwrap();
    let marks_at = html
        .find("<h2>Reviewer's marks</h2>")
        .expect("marks section");
    let findings_at = html.find("<h2>Findings</h2>").unwrap();
    assert!(marks_at < findings_at);
    for expected in [
        "root-cause",
        "Re-approved with drifted arguments.",
        "Policy bundle changed between approvals.",
        "1. Authority available",
        "3. Changed between approval and execution",
        "Run <code>run-deploy-0042</code> (marked)",
    ] {
        assert!(html.contains(expected), "{expected}");
    }

    // The evidence: same bytes, same times, nothing written beside it.
    assert_eq!(snapshot(&evidence_dir), before);
}

#[test]
fn a_mark_on_changed_or_missing_evidence_says_so_and_is_never_reattached() {
    let x = Scratch::new("stale");
    let mut s = open(&x.evidence(), &x.review(), false);
    go(&mut s, "act-003");
    cmd(&mut s, Command::Mark);
    go(&mut s, "act-005");
    cmd(&mut s, Command::Mark);
    save_review(&mut s, &keys()).unwrap();
    // Edit the record holding act-003 (one byte of its reason), drop act-005 entirely.
    let text = std::fs::read_to_string(x.evidence()).unwrap();
    let edited: Vec<String> = text
        .lines()
        .map(|l| {
            let l = l.replace("\"act-005\"", "\"act-905\"");
            if l.contains("\"act-003\"") {
                l.replacen("\"run_id\"", "\"note_x\":1,\"run_id\"", 1)
            } else {
                l
            }
        })
        .collect();
    std::fs::write(x.evidence(), edited.join("\n") + "\n").unwrap();
    let mut s = open(&x.evidence(), &x.review(), true);
    assert_eq!(s.review.counts(), (2, 2), "{:?}", s.review.places);
    go(&mut s, "act-003");
    let node = s.timeline.node().unwrap();
    assert_eq!(
        s.review.mark_of(node).unwrap().1,
        Place::ActionChanged(node)
    );
    let shown = screen(&s, 160, 48);
    assert!(shown.contains("⚑! act-003"), "{shown}");
    assert!(shown.contains("evidence changed since marked"), "{shown}");
    assert!(shown.contains("(2 changed)"), "{shown}");
    assert!(s.review.places.contains(&Place::Gone));
    // The gone mark stays in the file (never dropped or moved to another action).
    save_review(&mut s, &keys()).unwrap();
    assert_eq!(Review::read(&x.review()).unwrap().unwrap().marks.len(), 2);
}

#[test]
fn marked_only_and_the_compare_target() {
    let x = Scratch::new("only");
    let mut s = open(&x.evidence(), &x.review(), false);
    go(&mut s, "act-001");
    cmd(&mut s, Command::Mark);
    cmd(&mut s, Command::CompareTarget);
    go(&mut s, "act-004");
    cmd(&mut s, Command::Mark);
    cmd(&mut s, Command::MarkedOnly);
    assert_eq!(s.filter.text(), "is:marked");
    let d = s.data.as_ref().unwrap();
    let passing: Vec<_> = (0..d.analysis.graph.nodes.len() as u32)
        .filter(|n| s.passes(*n))
        .collect();
    assert_eq!(passing.len(), 2);
    cmd(&mut s, Command::MarkedOnly);
    assert!(!s.filter.is_applied());
    // `=` with a target chosen by `v` compares the two, whatever their relation.
    cmd(&mut s, Command::Compare);
    assert!(matches!(s.overlay, Overlay::Compare(_)), "{:?}", s.message);
    let shown = screen(&s, 160, 48);
    assert!(shown.contains("act-001 (chosen with v"), "{shown}");
    assert!(shown.contains("act-004 (selected"), "{shown}");
    // A mark on a finding, from the navigator.
    cmd(&mut s, Command::Cancel);
    update(
        &mut s,
        Action::ShowList(aeplens::tui::state::NavList::Findings),
    );
    cmd(&mut s, Command::Toggle);
    let row = s
        .nav
        .items()
        .iter()
        .position(|i| matches!(i.target, NavTarget::Finding(_)))
        .expect("an unfolded finding");
    update(&mut s, Action::Click(Pane::Navigator, row));
    cmd(&mut s, Command::Mark);
    assert!(
        screen(&s, 160, 48).contains("⚑ "),
        "the finding's row shows its mark"
    );
    let r = s.review.review.as_ref().unwrap();
    assert!(
        r.marks
            .iter()
            .any(|m| matches!(m.target, Target::Finding { .. })),
        "{:?}",
        r.marks
    );
}

#[test]
fn a_broken_or_foreign_review_file_is_reported_and_never_overwritten() {
    let x = Scratch::new("broken");
    std::fs::create_dir_all(x.review().parent().unwrap()).unwrap();
    let broken = "{\n  \"format\": \"aeplens-review\",\n  \"marks\": [,]\n}\n";
    std::fs::write(x.review(), broken).unwrap();
    // The explorer refuses before taking the terminal.
    let (code, _, err) = common::aeplens(&[
        "--review",
        x.review().to_str().unwrap(),
        x.evidence().to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("INC-7.review.json:3:13"), "{err}");
    assert!(err.contains("marks"), "{err}");
    // In the explorer (a default file gone bad), marks work but are never saved over it.
    let mut s = open(&x.evidence(), &x.review(), false);
    assert!(s.review.problem.is_some());
    assert!(
        s.errors.iter().any(|e| e.contains(":3:13")),
        "{:?}",
        s.errors
    );
    go(&mut s, "act-003");
    cmd(&mut s, Command::Mark);
    assert_eq!(save_review(&mut s, &keys()).unwrap(), None);
    assert_eq!(std::fs::read_to_string(x.review()).unwrap(), broken);
    assert!(screen(&s, 160, 48).contains("review not saved"));
    // A foreign JSON file.
    std::fs::write(x.review(), "{\"kind\": \"something else\"}").unwrap();
    let (code, _, err) = common::aeplens(&[
        "report",
        "--review",
        x.review().to_str().unwrap(),
        x.evidence().to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("not an aeplens review file"), "{err}");
    // The review may not be an evidence file.
    let (code, _, err) = common::aeplens(&[
        "--review",
        x.evidence().to_str().unwrap(),
        x.evidence().to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("never writes evidence"), "{err}");
    // Nor a file inside an evidence directory (it would be read as evidence next time).
    let dir = x.evidence().parent().unwrap().to_path_buf();
    let inside = dir.join("review.json");
    let (code, _, err) =
        common::aeplens(&["--review", inside.to_str().unwrap(), dir.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("inside an evidence directory"), "{err}");
    assert!(!inside.exists());
}

#[test]
fn the_report_command_leads_with_the_reviews_marks_in_every_format() {
    let x = Scratch::new("report");
    let mut s = open(&x.evidence(), &x.review(), false);
    go(&mut s, "act-003");
    cmd(&mut s, Command::Mark);
    cmd(&mut s, Command::CycleVerdict);
    update(&mut s, Action::Command(Command::Note));
    for c in "root cause <script>alert(1)</script>".chars() {
        update(&mut s, Action::Char(c));
    }
    update(&mut s, Action::Submit);
    save_review(&mut s, &keys()).unwrap();
    let review = x.review();
    let args = |format: &str| {
        vec![
            "report".to_string(),
            "--format".into(),
            format.into(),
            "--review".into(),
            review.display().to_string(),
            "--keys".into(),
            "assets/demo/keys.json".into(),
            x.evidence().display().to_string(),
        ]
    };
    let run = |format: &str| {
        let a = args(format);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        common::aeplens(&a)
    };
    let (code, md, _) = run("md");
    assert_eq!(code, 0);
    let marks_at = md.find("## Reviewer's marks").expect("marks section");
    assert!(marks_at < md.find("## Findings").unwrap());
    assert!(md.contains("**root-cause**"), "{md}");
    assert!(md.contains("&lt;script&gt;"), "{md}");
    assert!(md.contains("```mermaid"), "{md}");
    let (code, json, _) = run("json");
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["review"]["marks"][0]["verdict"], "root-cause");
    assert_eq!(v["review"]["marks"][0]["status"], "current");
    assert_eq!(v["review"]["marks"][0]["action"]["action_id"], "act-003");
    let (code, html, _) = run("html");
    assert_eq!(code, 0);
    assert!(
        html.contains("root cause &lt;script&gt;alert(1)&lt;&#x2f;script&gt;"),
        "{html}"
    );
    assert!(!html.contains("<script"));
    // --no-review leaves them out; a missing --review file is an error.
    let (code, md, _) = common::aeplens(&["report", "--no-review", x.evidence().to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(!md.contains("Reviewer's marks"));
    let (code, _, err) = common::aeplens(&[
        "report",
        "--review",
        "/nonexistent/r.json",
        x.evidence().to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no review file at /nonexistent/r.json"),
        "{err}"
    );
}

#[test]
fn snapshots_of_a_marked_action_and_the_note_editor() {
    let x = Scratch::new("snap");
    let mut s = open(&x.evidence(), &x.review(), false);
    go(&mut s, "act-002");
    cmd(&mut s, Command::Mark);
    go(&mut s, "act-003");
    cmd(&mut s, Command::Mark);
    cmd(&mut s, Command::CycleVerdict);
    cmd(&mut s, Command::Note);
    for c in "Re-approved with drifted arguments.\nSee INC-7.".chars() {
        update(&mut s, Action::Char(c));
    }
    for (w, h) in [(80u16, 24u16), (120, 40), (160, 48)] {
        insta::assert_snapshot!(format!("note_editor_{w}x{h}"), screen(&s, w, h));
    }
    update(&mut s, Action::Submit);
    s.message = None;
    for (w, h) in [(80u16, 24u16), (120, 40), (160, 48)] {
        insta::assert_snapshot!(format!("marked_{w}x{h}"), screen(&s, w, h));
    }
}

#[test]
fn a_record_mark_heads_the_detail_of_its_actions() {
    let x = Scratch::new("record");
    let mut s = open(&x.evidence(), &x.review(), false);
    go(&mut s, "act-005");
    cmd(&mut s, Command::Tab(5));
    cmd(&mut s, Command::FocusDetail);
    cmd(&mut s, Command::Mark);
    let r = s.review.review.as_ref().unwrap();
    assert!(
        matches!(r.marks[0].target, Target::Record { .. }),
        "{:?}",
        r.marks
    );
    // act-006 lives in the same record: its detail pane says the record is marked.
    go(&mut s, "act-006");
    let shown = screen(&s, 160, 48);
    assert!(shown.contains("⚑ record SUSPICIOUS"), "{shown}");
    go(&mut s, "act-001");
    assert!(!screen(&s, 160, 48).contains("⚑ record"));
}

#[test]
fn the_session_comes_back_filter_zoom_and_folds_and_r_reports_the_filter() {
    let x = Scratch::new("session");
    let mut s = open(&x.evidence(), &x.review(), false);
    go(&mut s, "act-003");
    cmd(&mut s, Command::Mark);
    go(&mut s, "act-007");
    cmd(&mut s, Command::Mark);
    cmd(&mut s, Command::MarkedOnly);
    cmd(&mut s, Command::ZoomIn);
    let zoom = s.timeline.zoom();
    assert!(zoom > 1.0);
    // Fold act-002 (act-003's parent) from the timeline.
    cmd(&mut s, Command::MarkedOnly);
    go(&mut s, "act-002");
    cmd(&mut s, Command::FocusTimeline);
    cmd(&mut s, Command::Toggle);
    let folded_before = aeplens::tui::state::session(&s).unwrap().folded;
    assert_eq!(folded_before.len(), 1, "{folded_before:?}");
    cmd(&mut s, Command::MarkedOnly);
    go(&mut s, "act-007");
    // R under the filter: the report says so and keeps to it.
    let out = report(&mut s);
    let html = std::fs::read_to_string(out).unwrap();
    assert!(
        html.contains("<strong>Filtered:</strong> only the actions the filter marked matches"),
        "{html}"
    );
    save_review(&mut s, &keys()).unwrap();
    let s = open(&x.evidence(), &x.review(), false);
    assert_eq!(s.filter.text(), "is:marked");
    assert!(s.filter.is_applied());
    assert_eq!(s.timeline.zoom(), zoom);
    assert_eq!(selected(&s), "act-007");
    assert_eq!(
        aeplens::tui::state::session(&s).unwrap().folded,
        folded_before
    );
}

#[test]
fn with_nowhere_to_save_the_explorer_says_so() {
    let x = Scratch::new("nowhere");
    let (corpus, keys, leases) = common::inputs(
        &[x.evidence().to_str().unwrap()],
        Some("assets/demo/keys.json"),
        None,
    );
    let mut s = State::new(Keymap::default(), Theme::dark());
    update(
        &mut s,
        Action::Loaded(Box::new(common::data(corpus, &keys, &leases, None))),
    );
    update(&mut s, Action::ReviewOpened(None, Ok(None)));
    go(&mut s, "act-003");
    cmd(&mut s, Command::Mark);
    assert!(
        s.review
            .problem
            .as_deref()
            .unwrap()
            .contains("--review FILE")
    );
    assert!(screen(&s, 160, 48).contains("review not saved"));
    assert_eq!(save_review(&mut s, &keys).unwrap(), None);
}

/// The permission bits of `path`.
#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[cfg(unix)]
#[test]
fn reviews_backups_and_reports_are_private() {
    let x = Scratch::new("private");
    let mut s = open(&x.evidence(), &x.review(), false);
    go(&mut s, "act-003");
    cmd(&mut s, Command::Mark);
    save_review(&mut s, &keys()).unwrap();
    cmd(&mut s, Command::CycleVerdict);
    save_review(&mut s, &keys()).unwrap();
    let review = x.review();
    let backup = review.with_extension("json.bak");
    assert!(backup.exists(), "the version replaced is kept");
    assert_eq!(
        mode(review.parent().unwrap()),
        0o700,
        "the directory made for it"
    );
    assert_eq!(mode(&review), 0o600);
    assert_eq!(mode(&backup), 0o600);
    let report = report(&mut s);
    assert_eq!(mode(&report), 0o600);
    // The CLI's reports and exports too.
    let out = x.0.join("out/report.md");
    let (code, _, err) = common::aeplens(&[
        "report",
        "--no-index",
        "--format",
        "md",
        "--output",
        &out.display().to_string(),
        &x.evidence().display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(mode(&out), 0o600);
    assert_eq!(mode(out.parent().unwrap()), 0o700);
}

#[test]
fn reopening_unchanged_evidence_never_calls_a_finding_mark_stale() {
    let x = Scratch::new("finding-mark");
    // Mark a finding and save.
    let mut s = open(&x.evidence(), &x.review(), false);
    mark_first_finding(&mut s);
    assert_eq!(s.review.counts(), (1, 0));
    save_review(&mut s, &keys()).unwrap();
    // Reopen as the explorer does: the analysis first, the verification after it.
    let (corpus, keys, leases) = common::inputs(
        &[x.evidence().to_str().unwrap()],
        Some("assets/demo/keys.json"),
        Some("assets/demo/leases.ndjson"),
    );
    let verified = common::data(corpus, &keys, &leases, None);
    let bare = Data::new(
        verified.corpus.clone(),
        verified.analysis.clone(),
        Vec::new(),
    );
    let mut s = State::new(Keymap::default(), Theme::dark());
    update(&mut s, Action::Loaded(Box::new(bare)));
    open_review(&mut s, Some(x.review()));
    assert_eq!(s.review.counts(), (1, 0), "pending, not stale");
    assert_eq!(s.message, None);
    let report = verified.report.clone().unwrap();
    update(
        &mut s,
        Action::Verified(report, verified.findings.clone(), None),
    );
    assert_eq!(s.review.counts(), (1, 0));
    assert!(matches!(s.review.places[0], Place::Finding(_)));
    assert_eq!(s.message, None, "nothing said to no longer match");
    assert!(!screen(&s, 160, 48).contains("no longer match"));
}

#[test]
fn r_asks_for_the_format_and_file_and_its_reproduce_line_runs_as_printed() {
    let x = Scratch::new("report-prompt");
    let mut s = open(&x.evidence(), &x.review(), false);
    s.review.settings.evidence_args = vec![
        "--keys".into(),
        std::path::absolute("assets/demo/keys.json")
            .unwrap()
            .display()
            .to_string(),
        "--leases".into(),
        std::path::absolute("assets/demo/leases.ndjson")
            .unwrap()
            .display()
            .to_string(),
        x.evidence().display().to_string(),
    ];
    go(&mut s, "act-003");
    cmd(&mut s, Command::Mark);
    // Under a filter typed in the explorer's old terms: the report says what it leaves
    // out, and its Reproduce line carries the filter as the expression it stands for.
    cmd(&mut s, Command::Filter);
    for c in "tool:sql".chars() {
        update(&mut s, Action::Char(c));
    }
    update(&mut s, Action::Submit);
    assert!(s.filter.is_applied());
    cmd(&mut s, Command::Palette);
    for c in "save sql work".chars() {
        update(&mut s, Action::Char(c));
    }
    update(&mut s, Action::Submit);
    let saved = &s.review.review.as_ref().unwrap().filters;
    assert_eq!(saved[0].expression, "tool contains \"sql\"");
    cmd(&mut s, Command::Report);
    let Overlay::Report(p) = &s.overlay else {
        panic!("R opens the prompt");
    };
    assert_eq!(
        p.path,
        x.review()
            .with_extension("report.html")
            .display()
            .to_string()
    );
    let shown = screen(&s, 120, 40);
    assert!(shown.contains("Write the report"), "{shown}");
    assert!(
        shown.contains(" md   html   json   sarif   junit"),
        "{shown}"
    );
    // ← to Markdown: the extension follows; the file name is edited by typing.
    cmd(&mut s, Command::Left);
    for _ in 0..".md".len() {
        update(&mut s, Action::Backspace);
    }
    for c in "-final.md".chars() {
        update(&mut s, Action::Char(c));
    }
    let Overlay::Report(p) = &s.overlay else {
        panic!("still open");
    };
    assert_eq!(p.format.name(), "md");
    let want = x.review().with_extension("report-final.md");
    assert_eq!(p.path, want.display().to_string());
    let out = report(&mut s);
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(
        written.starts_with("# aeplens incident report"),
        "{written}"
    );
    // The Reproduce line, run in a shell as printed, writes the same report again.
    let line = written
        .lines()
        .find_map(|l| l.split("Reproduce: `").nth(1))
        .map(|l| l.trim_end_matches('`').to_string())
        .expect("a Reproduce line");
    assert!(
        line.contains("--keys ") && line.contains("--leases "),
        "{line}"
    );
    assert!(line.contains("--where 'tool contains \"sql\"'"), "{line}");
    assert!(
        written.contains("> **Filtered:** only the actions the filter tool contains \"sql\" (saved as sql work) matches: 2 of 9 actions shown;"),
        "{written}"
    );
    std::fs::remove_file(&out).unwrap();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_aeplens"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(&line)
        .env("PATH", path)
        .env("XDG_CACHE_HOME", x.0.join("cache"))
        .env("XDG_DATA_HOME", x.0.join("data"))
        .current_dir(std::env::temp_dir())
        .status()
        .unwrap();
    assert!(status.code().is_some_and(|c| c < 2), "{line}: {status}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), written, "{line}");
}

#[test]
fn no_note_is_lost_m_asks_first_and_ctrl_z_puts_it_back() {
    let x = Scratch::new("unmark");
    let mut s = open(&x.evidence(), &x.review(), false);
    go(&mut s, "act-003");
    cmd(&mut s, Command::Mark);
    cmd(&mut s, Command::Note);
    for c in "the root cause".chars() {
        update(&mut s, Action::Char(c));
    }
    update(&mut s, Action::Submit);
    let marks = |s: &State| s.review.review.as_ref().unwrap().marks.len();
    // m on a mark with a note asks; anything else in between cancels the question.
    cmd(&mut s, Command::Mark);
    assert_eq!(marks(&s), 1);
    assert!(
        s.message.as_deref().unwrap().contains("m again to unmark"),
        "{:?}",
        s.message
    );
    cmd(&mut s, Command::Down);
    go(&mut s, "act-003");
    cmd(&mut s, Command::Mark);
    assert_eq!(marks(&s), 1, "asked again");
    cmd(&mut s, Command::Mark);
    assert_eq!(marks(&s), 0);
    // The note is in the review's history, saved with it.
    save_review(&mut s, &keys()).unwrap();
    let file = Review::read(&x.review()).unwrap().unwrap();
    assert_eq!(file.removed.len(), 1);
    assert_eq!(file.removed[0].mark.note, "the root cause");
    // Ctrl-Z puts it back, note and all.
    let ctrl_z = crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('z'),
        crossterm::event::KeyModifiers::CONTROL,
    );
    let action = aeplens::tui::input::key_action(&s, &ctrl_z).expect("Ctrl-Z is bound");
    update(&mut s, action);
    assert_eq!(marks(&s), 1);
    let r = s.review.review.as_ref().unwrap();
    assert_eq!(r.marks[0].note, "the root cause");
    assert!(r.removed.is_empty());
    let shown = screen(&s, 160, 48);
    assert!(shown.contains("⚑ act-003"), "{shown}");
}

#[test]
fn the_marks_list_and_quote_keys_go_through_every_mark() {
    let x = Scratch::new("marks-list");
    let mut s = open(&x.evidence(), &x.review(), false);
    // An action, a record (Record tab) and a finding (navigator) marked.
    go(&mut s, "act-003");
    cmd(&mut s, Command::Mark);
    cmd(&mut s, Command::Note);
    for c in "first line\nsecond".chars() {
        update(&mut s, Action::Char(c));
    }
    update(&mut s, Action::Submit);
    go(&mut s, "act-006");
    cmd(&mut s, Command::Tab(5));
    cmd(&mut s, Command::FocusDetail);
    cmd(&mut s, Command::Mark);
    cmd(&mut s, Command::Tab(1));
    mark_first_finding(&mut s);
    assert_eq!(s.review.counts(), (3, 0));
    // The Marks list: every mark with its verdict, target, note's first line.
    update(
        &mut s,
        Action::ShowList(aeplens::tui::state::NavList::Marks),
    );
    assert_eq!(s.nav.items().len(), 3);
    let rows: Vec<String> = (s.nav.items().iter())
        .map(|i| aeplens::tui::state::nav_text(&s, i))
        .collect();
    assert_eq!(rows[0], "⚑ SUSPICIOUS run-deploy-0042/act-003 · first line");
    assert!(rows[1].starts_with("⚑ SUSPICIOUS record at "), "{rows:?}");
    assert!(rows[2].starts_with("⚑ SUSPICIOUS F-"), "{rows:?}");
    assert!(screen(&s, 200, 50).contains("⚑ SUSPICIOUS run-deploy-0042/act-003 ·"));
    // Enter on the record mark goes to its record's first action.
    cmd(&mut s, Command::Down);
    cmd(&mut s, Command::Toggle);
    let d = s.data.as_ref().unwrap();
    let node = s.timeline.node().unwrap();
    assert_eq!(
        d.corpus
            .record(d.analysis.graph.nodes[node as usize].record as usize)
            .source
            .line,
        3
    );
    // ' goes through all three, saying where it is.
    go(&mut s, "act-003");
    cmd(&mut s, Command::NextMark);
    assert!(
        s.message
            .as_deref()
            .unwrap()
            .starts_with("mark 2 of 3: record at"),
        "{:?}",
        s.message
    );
    cmd(&mut s, Command::NextMark);
    assert!(
        s.message.as_deref().unwrap().starts_with("mark 3 of 3: F-"),
        "{:?}",
        s.message
    );
    cmd(&mut s, Command::NextMark);
    assert!(
        s.message
            .as_deref()
            .unwrap()
            .starts_with("mark 1 of 3: run-deploy-0042/act-003")
    );
    assert_eq!(selected(&s), "act-003");
    cmd(&mut s, Command::PrevMark);
    assert!(s.message.as_deref().unwrap().starts_with("mark 3 of 3"));
}

#[test]
fn esc_on_a_changed_note_asks_before_discarding_it() {
    let x = Scratch::new("note-esc");
    let mut s = open(&x.evidence(), &x.review(), false);
    go(&mut s, "act-003");
    cmd(&mut s, Command::Note);
    for c in "kept".chars() {
        update(&mut s, Action::Char(c));
    }
    update(&mut s, Action::Submit);
    cmd(&mut s, Command::Note);
    update(&mut s, Action::Char('!'));
    cmd(&mut s, Command::Cancel);
    assert!(s.review.editor.is_some(), "asked, not closed");
    assert!(screen(&s, 120, 40).contains("Esc again discards it"));
    // Typing again takes the question back; Esc asks again, then discards.
    update(&mut s, Action::Char('?'));
    cmd(&mut s, Command::Cancel);
    assert!(s.review.editor.is_some());
    cmd(&mut s, Command::Cancel);
    assert!(s.review.editor.is_none());
    let r = s.review.review.as_ref().unwrap();
    assert_eq!(r.marks[0].note, "kept", "the saved note is untouched");
    // Unchanged: one Esc closes.
    cmd(&mut s, Command::Note);
    cmd(&mut s, Command::Cancel);
    assert!(s.review.editor.is_none());
}

/// The note editor is a text area: keys as a terminal sends them move the cursor by
/// characters, words and lines, and edit the way readline does; pasted text arrives as
/// one piece without terminal controls; Ctrl-Z undoes.
#[test]
fn the_note_editor_moves_and_edits_like_readline() {
    use aeplens::tui::input::key_action;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let x = Scratch::new("note-motions");
    let mut s = open(&x.evidence(), &x.review(), false);
    go(&mut s, "act-003");
    cmd(&mut s, Command::Note);
    let press = |s: &mut State, code: KeyCode, m: KeyModifiers| {
        let a = key_action(s, &KeyEvent::new(code, m)).expect("the editor takes every key");
        update(s, a);
    };
    let none = KeyModifiers::NONE;
    let ctrl = KeyModifiers::CONTROL;
    let alt = KeyModifiers::ALT;
    let text = |s: &State| s.review.editor.as_ref().unwrap().text();
    for c in "rotated key used".chars() {
        press(&mut s, KeyCode::Char(c), none);
    }
    // Ctrl-A to the start, a word typed there; End and Ctrl-W removes the last word.
    press(&mut s, KeyCode::Char('a'), ctrl);
    for c in "old ".chars() {
        press(&mut s, KeyCode::Char(c), none);
    }
    assert_eq!(text(&s), "old rotated key used");
    press(&mut s, KeyCode::End, none);
    press(&mut s, KeyCode::Char('w'), ctrl);
    assert_eq!(text(&s), "old rotated key ");
    // Alt-B back one word, Ctrl-K cuts to the end, Ctrl-E, then Ctrl-U cuts to the start.
    press(&mut s, KeyCode::Char('b'), alt);
    press(&mut s, KeyCode::Char('k'), ctrl);
    assert_eq!(text(&s), "old rotated ");
    press(&mut s, KeyCode::Left, none);
    press(&mut s, KeyCode::Home, none);
    press(&mut s, KeyCode::Delete, none);
    assert_eq!(text(&s), "ld rotated ");
    press(&mut s, KeyCode::Char('e'), ctrl);
    press(&mut s, KeyCode::Char('u'), ctrl);
    assert_eq!(text(&s), "");
    press(&mut s, KeyCode::Char('z'), ctrl);
    assert_eq!(text(&s), "ld rotated ", "Ctrl-Z undoes the cut");
    // Enter is a new line; a paste keeps its line breaks and loses its controls.
    press(&mut s, KeyCode::Enter, none);
    update(
        &mut s,
        Action::Paste("see F-KEY\r\nrow 7\u{1b}[31m red\u{202e}".into()),
    );
    assert_eq!(text(&s), "ld rotated \nsee F-KEY\nrow 7[31m red");
    let shown = screen(&s, 80, 24);
    assert!(shown.contains("see F-KEY"), "{shown}");
    assert!(shown.contains("Ctrl-S save"), "{shown}");
    press(&mut s, KeyCode::Char('s'), ctrl);
    assert!(s.review.editor.is_none());
    let r = s.review.review.as_ref().unwrap();
    assert_eq!(r.marks[0].note, "ld rotated \nsee F-KEY\nrow 7[31m red");
}

/// `m` with the navigator on a collapsed finding group marks the finding when the group is
/// one, and asks when it is several — never the action the timeline happens to show.
#[test]
fn m_on_a_finding_group_marks_its_finding_or_asks() {
    let x = Scratch::new("group");
    let mut s = open(&x.evidence(), &x.review(), true);
    update(
        &mut s,
        Action::ShowList(aeplens::tui::state::NavList::Findings),
    );
    cmd(&mut s, Command::FocusNavigator);
    let item = s.nav.items()[s.nav.cursor()].clone();
    let NavTarget::FindingGroup(first) = item.target else {
        panic!("the list opens on a group: {item:?}");
    };
    let finding = s.data.as_ref().unwrap().findings[first].clone();
    cmd(&mut s, Command::Mark);
    let marks = &s.review.review.as_ref().unwrap().marks;
    assert_eq!(marks.len(), 1);
    assert_eq!(
        marks[0].target,
        Target::finding(&finding),
        "{:?}",
        marks[0].target
    );
    // Several findings of one id: the group asks, nothing is marked.
    let (corpus, keys, leases) = common::inputs(
        &["tests/fixtures/rfc-final/evidence"],
        Some("tests/fixtures/rfc-final/keys.json"),
        Some("tests/fixtures/rfc-final/leases.ndjson"),
    );
    let mut s = State::new(Keymap::default(), Theme::dark());
    update(
        &mut s,
        Action::Loaded(Box::new(common::data(corpus, &keys, &leases, None))),
    );
    open_review(&mut s, Some(x.0.join("rfc.review.json")));
    update(
        &mut s,
        Action::ShowList(aeplens::tui::state::NavList::Findings),
    );
    cmd(&mut s, Command::FocusNavigator);
    let d = s.data.as_ref().unwrap();
    let several = (0..s.nav.items().len())
        .find(|&row| match s.nav.items()[row].target {
            NavTarget::FindingGroup(f) => {
                d.findings
                    .iter()
                    .filter(|x| x.id == d.findings[f].id)
                    .count()
                    > 1
            }
            _ => false,
        })
        .expect("a group of several findings");
    while s.nav.cursor() < several {
        cmd(&mut s, Command::Down);
    }
    cmd(&mut s, Command::FocusNavigator);
    cmd(&mut s, Command::Mark);
    assert!(s.review.review.as_ref().unwrap().marks.is_empty());
    assert!(
        s.message
            .as_deref()
            .unwrap_or("")
            .contains("unfold it (Enter) and mark the one you mean"),
        "{:?}",
        s.message
    );
}

#[test]
fn r_names_the_report_after_the_incident() {
    let x = Scratch::new("named");
    // A review named by the reviewer: the report goes beside it, named after it.
    let mut s = open(&x.evidence(), &x.0.join("INC-7.json"), false);
    cmd(&mut s, Command::Report);
    let Overlay::Report(p) = &s.overlay else {
        panic!("R opens the prompt");
    };
    assert_eq!(p.path, x.0.join("INC-7.report.html").display().to_string());
    // The default review (named by the evidence set's key): named after the evidence.
    let set = aeplens::review::file::EvidenceSet::of(&s.data.as_ref().unwrap().corpus);
    let mut s = open(&x.evidence(), &x.0.join(format!("{}.json", set.key)), false);
    cmd(&mut s, Command::Report);
    let Overlay::Report(p) = &s.overlay else {
        panic!("R opens the prompt");
    };
    let stem = x
        .evidence()
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .to_string();
    assert_eq!(p.path, format!("{stem}.report.html"));
}
