//! The review in the explorer: marks with verdicts (`m`, `M`), notes (`a`), jumping
//! between marks (`'`, `"`), the compare target (`v`), the marked-only toggle (`*`),
//! the session saved and restored, and the report request (`R`). The file itself is
//! read and written by the event loop; this module only changes state.

use super::*;
use crate::model::text::is_terminal_control;
use crate::review::file::{ActionRef, Review, Session, now};
use crate::review::marks::{Mark, Place, Target, Verdict};
use crate::review::report::Format as ReportFormat;
use std::path::PathBuf;

/// The filter `*` toggles: only marked actions.
pub const MARKED_ONLY: &str = "is:marked";

/// The review held by the explorer.
#[derive(Debug, Default)]
pub struct ReviewState {
    /// The review (none until the event loop has opened it).
    pub review: Option<Review>,
    /// Where it is saved; `None` when it cannot be (a broken file is never overwritten).
    pub path: Option<PathBuf>,
    /// Why it is not saved, when it is not.
    pub problem: Option<String>,
    /// Changed since last saved.
    pub dirty: bool,
    /// Per mark (same order as the review's): where it is in the evidence.
    pub places: Vec<Place>,
    /// The mark shown on each action.
    pub by_node: HashMap<NodeId, usize>,
    /// The action `v` set as the other side of `=`.
    pub compare_with: Option<NodeId>,
    /// A note to edit in `$EDITOR` (taken by the event loop): the target and its text.
    pub external_edit: Option<(Target, String)>,
    /// The inline note editor, when open.
    pub editor: Option<NoteEditor>,
    /// The last mark `'`/`"` went to (index into the marks).
    pub mark_cursor: Option<usize>,
    /// The marked target `m` asked about (it has a note): `m` again removes the mark.
    pub confirm_unmark: Option<Target>,
    /// A report to write (`R`, then Enter in its prompt); taken by the event loop.
    pub report_requested: Option<ReportPrompt>,
    /// How the explorer was started.
    pub settings: ReviewSettings,
}

/// How the explorer was started, as far as the review is concerned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReviewSettings {
    /// `$VISUAL` or `$EDITOR` is set: notes are edited there.
    pub external_editor: bool,
    /// Do not restore the saved session (`--fresh`).
    pub fresh: bool,
    /// The arguments that name the evidence as the explorer was given it (`--keys FILE`,
    /// `--key ID=KEY`, `--leases FILE`, the paths): a report's Reproduce line runs them.
    pub evidence_args: Vec<String>,
}

/// `R`'s prompt: the report's format and the file it goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportPrompt {
    pub format: ReportFormat,
    pub path: String,
}

impl ReportPrompt {
    /// The next (`forward`) or previous format; a path ending in the old format's
    /// extension takes the new one's.
    pub fn cycle(&mut self, forward: bool) {
        let all = ReportFormat::ALL;
        let at = all.iter().position(|f| *f == self.format).unwrap_or(0);
        self.set_format(all[(at + if forward { 1 } else { all.len() - 1 }) % all.len()]);
    }

    /// Another format; a path ending in the old format's extension takes the new one's.
    pub fn set_format(&mut self, format: ReportFormat) {
        let old = format!(".{}", self.format.extension());
        if let Some(stem) = self.path.strip_suffix(&old) {
            self.path = format!("{stem}.{}", format.extension());
        }
        self.format = format;
    }
}

/// `R`: the prompt, offering HTML beside the review file (`INC-7.report.html` for
/// `INC-7.json`; else in the working directory).
pub(super) fn open_report_prompt(state: &mut State) {
    let Some(d) = state.data.as_ref() else {
        return;
    };
    let format = ReportFormat::Html;
    let set = crate::review::file::EvidenceSet::of(&d.corpus);
    // A review file named by the reviewer (`--review INC-7.json`) names the incident:
    // the report goes beside it. The default one is named by the evidence set's key:
    // the report is named after the evidence, in the working directory.
    let chosen = (state.review.path.as_ref()).filter(|p| {
        p.file_stem()
            .is_some_and(|s| s.to_string_lossy() != set.key)
    });
    let path = match chosen {
        Some(p) => p
            .with_extension(format!("report.{}", format.extension()))
            .display()
            .to_string(),
        None => format!("{}.report.{}", incident_name(&d.corpus), format.extension()),
    };
    state.overlay = Overlay::Report(ReportPrompt { format, path });
}

/// The incident a report is named after: the evidence file's name (without extension),
/// or the folder holding the files; letters, digits, `.`, `_` and `-` kept.
fn incident_name(corpus: &crate::load::Corpus) -> String {
    use std::path::Path;
    let paths: Vec<&Path> = corpus.inputs.iter().map(|i| Path::new(&*i.path)).collect();
    let name = match paths.as_slice() {
        [one] => one.file_stem(),
        [first, rest @ ..] if rest.iter().all(|p| p.parent() == first.parent()) => {
            first.parent().and_then(Path::file_name)
        }
        _ => None,
    };
    let name: String = (name.map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "._-".contains(*c))
        .collect();
    if name.is_empty() || name.starts_with('.') {
        "aeplens".into()
    } else {
        name
    }
}

/// The note editor's keys, as the help overlay and aeplens-explorer(1) list them.
pub const NOTE_EDITOR_KEYS: [(&str, &str); 9] = [
    ("Ctrl-S", "save the note"),
    (
        "Esc",
        "leave (a changed note asks first; Esc again discards it)",
    ),
    ("Enter", "new line"),
    (
        "← → ↑ ↓ Home End",
        "move; Ctrl-A / Ctrl-E to the line's start / end",
    ),
    ("Alt-B Alt-F Ctrl-← Ctrl-→", "back / forward a word"),
    ("Ctrl-W Alt-D", "delete the word before / after the cursor"),
    (
        "Ctrl-U Ctrl-K",
        "delete to the line's start / end (Ctrl-Y puts it back)",
    ),
    ("Ctrl-Z Ctrl-R", "undo / redo"),
    (
        "paste",
        "pasted text goes in as it is (terminal controls left out)",
    ),
];

/// The inline note editor: what is being annotated and the text so far, in a real text
/// area (cursor, word motions, readline keys, undo; `ratatui-textarea`).
#[derive(Clone, Debug)]
pub struct NoteEditor {
    pub target: Target,
    pub label: String,
    pub area: ratatui_textarea::TextArea<'static>,
    /// The note as it was shown when the editor opened (Esc on a changed note asks first).
    pub original: String,
    /// Esc was pressed on a changed note: Esc again discards the change.
    pub discarding: bool,
}

impl NoteEditor {
    /// An editor on `text`, the cursor at its end. Invisible characters a note may hold
    /// (written in `$EDITOR` or by hand) are shown escaped, as everywhere else.
    pub fn new(target: Target, label: String, text: &str) -> NoteEditor {
        let lines = text.split('\n').map(|l| sanitize(l).into_owned());
        let mut area = ratatui_textarea::TextArea::new(lines.collect());
        area.move_cursor(ratatui_textarea::CursorMove::Bottom);
        area.move_cursor(ratatui_textarea::CursorMove::End);
        area.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
        area.set_cursor_line_style(ratatui::style::Style::default());
        let mut editor = NoteEditor {
            target,
            label,
            area,
            original: String::new(),
            discarding: false,
        };
        editor.original = editor.text();
        editor
    }

    /// The note as written so far.
    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    /// One key typed into the note. Readline's Ctrl-U (delete to the line's start) and
    /// Ctrl-Z (undo) where the widget's own map differs; everything else is the widget's
    /// (Ctrl-A/E, Ctrl-W, Ctrl-K, Alt-B/F and Ctrl-←/→ by words, Home/End, Ctrl-Y yank).
    pub fn key(&mut self, input: ratatui_textarea::Input) {
        use ratatui_textarea::{Input, Key};
        match input {
            Input {
                key: Key::Char('u'),
                ctrl: true,
                alt: false,
                ..
            } => {
                self.area.delete_line_by_head();
            }
            Input {
                key: Key::Char('z'),
                ctrl: true,
                alt: false,
                ..
            } => {
                self.area.undo();
            }
            // Terminal controls are never written into a note.
            Input {
                key: Key::Char(c),
                ctrl: false,
                alt: false,
                ..
            } if is_terminal_control(c) && c != '\n' && c != '\t' => {}
            input => {
                self.area.input(input);
            }
        }
        self.discarding = false;
    }

    /// Pasted text, inserted at the cursor (CR LF as one line break, other terminal
    /// controls left out).
    pub fn paste(&mut self, text: &str) {
        let clean: String = text
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .chars()
            .filter(|c| !is_terminal_control(*c) || *c == '\n' || *c == '\t')
            .collect();
        self.area.insert_str(clean);
        self.discarding = false;
    }
}

impl ReviewState {
    /// The mark on an action, with where it is.
    pub fn mark_of(&self, node: NodeId) -> Option<(&Mark, Place)> {
        let i = *self.by_node.get(&node)?;
        Some((&self.review.as_ref()?.marks[i], self.places[i]))
    }

    /// The mark on a whole record (flat index), if any.
    pub fn record_mark(&self, record: usize) -> Option<(&Mark, Place)> {
        let i = self
            .places
            .iter()
            .position(|p| *p == Place::Record(record))?;
        Some((self.review.as_ref()?.marks.get(i)?, self.places[i]))
    }

    /// The mark on a finding (by index into the findings), if any.
    pub fn finding_mark(&self, finding: usize) -> Option<&Mark> {
        let i = self
            .places
            .iter()
            .position(|p| *p == Place::Finding(finding))?;
        self.review.as_ref()?.marks.get(i)
    }

    /// How many marks there are, and how many no longer match the evidence exactly.
    pub fn counts(&self) -> (usize, usize) {
        let stale = self.places.iter().filter(|p| p.warning().is_some()).count();
        (self.places.len(), stale)
    }
}

/// The event loop opened the review file: `Ok(None)` when there is none yet.
pub(super) fn opened(
    state: &mut State,
    path: Option<PathBuf>,
    result: Result<Option<Box<Review>>, String>,
) {
    let Some(d) = state.data.as_ref() else {
        return;
    };
    let fresh = || Review::new(crate::review::file::EvidenceSet::of(&d.corpus), Vec::new());
    let review = match result {
        Ok(Some(r)) => {
            state.review.path = path;
            *r
        }
        Ok(None) => {
            state.review.path = path;
            fresh()
        }
        Err(e) => {
            // Shown, never overwritten: marks made now live only until quit.
            state.review.problem = Some(format!(
                "review not saved: the review file is unreadable ({e})"
            ));
            state.errors.push(e);
            fresh()
        }
    };
    if state.review.path.is_none() && state.review.problem.is_none() {
        state.review.problem = Some(
            "review not saved: no data directory ($XDG_DATA_HOME or $HOME); pass --review FILE"
                .into(),
        );
    }
    let session = review.session.clone();
    state.review.review = Some(review);
    resolve(state);
    if let Some(s) = session.filter(|_| !state.review.settings.fresh) {
        restore(state, &s);
    }
    say_stale(state);
    rebuild_nav(state);
}

/// Says how many marks no longer match the evidence — once it is verified (before, a
/// finding mark is pending, not stale).
pub(super) fn say_stale(state: &mut State) {
    let (marks, stale) = state.review.counts();
    let verified = state.data.as_ref().is_some_and(|d| d.report.is_some());
    if stale > 0 && verified {
        state.message = Some(format!(
            "{marks} marks, {stale} no longer match the evidence ('/\" go through them)"
        ));
    }
}

/// Finds every mark in the evidence again (after loading or verifying).
pub(super) fn resolve(state: &mut State) {
    let (Some(d), Some(r)) = (state.data.as_ref(), state.review.review.as_ref()) else {
        return;
    };
    let verified = d.report.is_some();
    let places: Vec<Place> = (r.marks.iter())
        .map(|m| match m.target {
            Target::Finding { .. } if !verified => Place::Pending,
            _ => m.target.place(&d.corpus, &d.analysis, &d.findings),
        })
        .collect();
    state.review.by_node = places
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.node().map(|n| (n, i)))
        .collect();
    state.review.places = places;
    if state.filter.is_applied() {
        apply_filter(state);
    }
}

/// What `m`, `M` and `a` act on: the finding under the navigator's cursor when the
/// navigator has the keyboard, the record on the Record and Raw tabs, else the action.
fn target(state: &State) -> Option<(Target, String)> {
    let d = state.data.as_ref()?;
    if state.focus == Pane::Navigator {
        let finding = match state.nav.items().get(state.nav.cursor()).map(|i| i.target) {
            Some(NavTarget::Finding(i)) => Some(i),
            // A group of one finding is that finding; of several, [`group_of_several`]
            // asks first. Never the action the timeline happens to show.
            Some(NavTarget::FindingGroup(first)) => Some(first),
            _ => None,
        };
        if let Some(i) = finding {
            let t = Target::finding(d.findings.get(i)?);
            let label = t.label();
            return Some((t, label));
        }
    }
    let node = state.timeline.node()?;
    let t = if state.focus == Pane::Detail
        && matches!(state.detail.tab(), DetailTab::Record | DetailTab::Raw)
    {
        let record = d.analysis.graph.nodes[node as usize].record as usize;
        Target::record(&d.corpus, &d.analysis, record)?
    } else {
        // A mark already on this action (perhaps made on a record since changed) is
        // the one acted on.
        match state.review.mark_of(node) {
            Some((m, _)) => m.target.clone(),
            None => Target::action(&d.corpus, &d.analysis, node)?,
        }
    };
    let label = t.label();
    Some((t, label))
}

/// With the navigator's cursor on a group of several findings, what `m`, `M` and `a`
/// say instead of acting: which of them is meant cannot be told.
fn group_of_several(state: &State) -> Option<String> {
    let d = state.data.as_ref()?;
    if state.focus != Pane::Navigator {
        return None;
    }
    let Some(NavTarget::FindingGroup(first)) =
        state.nav.items().get(state.nav.cursor()).map(|i| i.target)
    else {
        return None;
    };
    let id = d.findings.get(first)?.id;
    let count = d.findings.iter().filter(|f| f.id == id).count();
    (count > 1).then(|| {
        format!("{id} groups {count} findings: unfold it (Enter) and mark the one you mean")
    })
}

fn changed(state: &mut State) {
    state.review.dirty = true;
    resolve(state);
    rebuild_nav(state);
}

/// `m`: marks the target `suspicious`, or unmarks it.
pub(super) fn toggle_mark(state: &mut State) {
    if let Some(ask) = group_of_several(state) {
        state.message = Some(ask);
        return;
    }
    let Some((t, label)) = target(state) else {
        return;
    };
    let Some(r) = state.review.review.as_mut() else {
        state.message = Some("the review is still opening".into());
        return;
    };
    if let Some(i) = r.marks.iter().position(|m| m.target == t) {
        // A note is never taken off by one key: `m` asks first, `m` again removes it
        // (into the review's history; Ctrl-Z puts it back).
        let confirmed = state.review.confirm_unmark.take().as_ref() == Some(&t);
        if !r.marks[i].note.is_empty() && !confirmed {
            state.review.confirm_unmark = Some(t);
            state.message = Some(format!(
                "{} has a note: m again to unmark it (kept in the review's history; Ctrl-Z undoes)",
                sanitize(&label)
            ));
            return;
        }
        let m = r.remove(i);
        state.message = Some(if m.note.is_empty() {
            format!("unmarked {} (Ctrl-Z undoes)", sanitize(&label))
        } else {
            format!(
                "unmarked {}; its note is kept in the review's history (Ctrl-Z undoes)",
                sanitize(&label)
            )
        });
    } else {
        r.marks.push(Mark::new(t, Verdict::Suspicious));
        state.message = Some(format!(
            "marked {} suspicious (M: another verdict, a: a note)",
            sanitize(&label)
        ));
    }
    changed(state);
}

/// Ctrl-Z: puts the last mark taken off back, with its note.
pub(super) fn undo_unmark(state: &mut State) {
    let Some(r) = state.review.review.as_mut() else {
        return;
    };
    state.message = Some(match r.restore_last() {
        Some(m) => format!("mark on {} put back", sanitize(&m.target.label())),
        None => "nothing to undo".into(),
    });
    changed(state);
}

/// `M`: the next verdict (marking the target first when it is not).
pub(super) fn cycle_verdict(state: &mut State) {
    if let Some(ask) = group_of_several(state) {
        state.message = Some(ask);
        return;
    }
    let Some((t, label)) = target(state) else {
        return;
    };
    let Some(r) = state.review.review.as_ref() else {
        return;
    };
    if r.mark(&t).is_none() {
        toggle_mark(state);
    }
    if let Some(m) = state.review.review.as_mut().and_then(|r| r.mark_mut(&t)) {
        m.verdict = m.verdict.next();
        m.updated_at = now();
        state.message = Some(format!("{} is {}", sanitize(&label), m.verdict.name()));
    }
    changed(state);
}

/// `a`: edits the target's note (in `$EDITOR` when set, else inline); an unmarked target
/// is marked `follow-up` first.
pub(super) fn edit_note(state: &mut State) {
    if let Some(ask) = group_of_several(state) {
        state.message = Some(ask);
        return;
    }
    let Some((t, label)) = target(state) else {
        return;
    };
    let Some(r) = state.review.review.as_mut() else {
        return;
    };
    if r.mark(&t).is_none() {
        r.marks.push(Mark::new(t.clone(), Verdict::FollowUp));
        changed(state);
    }
    let text = state
        .review
        .review
        .as_ref()
        .and_then(|r| r.mark(&t))
        .map(|m| m.note.clone())
        .unwrap_or_default();
    if state.review.settings.external_editor {
        state.review.external_edit = Some((t, text));
    } else {
        state.review.editor = Some(NoteEditor::new(t, label, &text));
    }
}

/// A note was written (inline or in `$EDITOR`): trailing blank lines dropped.
pub(super) fn note_done(state: &mut State, target: &Target, text: &str) {
    let text = text.trim_end().to_string();
    if let Some(m) = state
        .review
        .review
        .as_mut()
        .and_then(|r| r.mark_mut(target))
        && m.note != text
    {
        m.note = text;
        m.updated_at = now();
        state.message = Some(format!("note saved on {}", sanitize(&target.label())));
    }
    changed(state);
}

/// `'` / `"`: the next / previous marked action in time order, across runs.
pub(super) fn jump_mark(state: &mut State, forward: bool) {
    let n = state.review.places.len();
    if n == 0 {
        state.message = Some("no mark (m marks one)".into());
        return;
    }
    // From the selected action's mark, else from the last mark gone to.
    let selected = state
        .timeline
        .node()
        .and_then(|x| state.review.by_node.get(&x));
    let here = selected.copied().or(state.review.mark_cursor);
    let next = match here {
        None if forward => 0,
        None => n - 1,
        Some(i) => (i + if forward { 1 } else { n - 1 }) % n,
    };
    state.review.mark_cursor = Some(next);
    let label = state.review.review.as_ref().map_or(String::new(), |r| {
        sanitize(&r.marks[next].target.label()).into_owned()
    });
    let node = super::navigator::mark_node(state, next);
    if let Some(node) = node {
        select(state, node, true);
    }
    let place = state.review.places[next];
    let why = match (node, place.warning()) {
        (None, Some(w)) => format!(" — {w}"),
        (None, None) => " — on no action".into(),
        (Some(_), _) => String::new(),
    };
    state.message = Some(format!("mark {} of {n}: {label}{why}", next + 1));
}

/// `v`: the selected action becomes the other side of `=` (again: cleared).
pub(super) fn set_compare_target(state: &mut State) {
    let Some(node) = state.timeline.node() else {
        return;
    };
    if state.review.compare_with == Some(node) {
        state.review.compare_with = None;
        state.message = Some("compare target cleared".into());
    } else {
        state.review.compare_with = Some(node);
        state.message = Some("compare target set: select another action and press =".into());
    }
}

/// The session to save: where the reviewer is now.
pub fn session(state: &State) -> Option<Session> {
    let d = state.data.as_ref()?;
    let g = &d.analysis.graph;
    let key = |n: NodeId| -> Option<ActionRef> {
        let (_, a) = g.action(&d.corpus, n)?;
        Some(ActionRef {
            run_id: g.runs[d.run_of(n)].id.clone(),
            action_id: a.id()?.to_string(),
        })
    };
    let selected = state.timeline.node().and_then(key);
    let mut folded: Vec<ActionRef> = state
        .timeline
        .folded
        .iter()
        .filter_map(|n| key(*n))
        .collect();
    folded.sort_by(|a, b| (&a.run_id, &a.action_id).cmp(&(&b.run_id, &b.action_id)));
    Some(Session {
        run_id: selected.as_ref().map(|s| s.run_id.clone()),
        action_id: selected.map(|s| s.action_id),
        filter: state.filter.applied().unwrap_or_default().to_string(),
        tab: state.detail.tab().title().to_lowercase(),
        list: state.nav.list().title().to_lowercase(),
        folded,
        zoom: state.timeline.zoom,
        pan: state.timeline.pan,
    })
}

/// Restores a saved session: what no longer exists is skipped.
fn restore(state: &mut State, s: &Session) {
    if let Some(tab) = DetailTab::ALL
        .iter()
        .find(|t| t.title().eq_ignore_ascii_case(&s.tab))
    {
        state.detail.show(*tab);
    }
    if let Some(list) = NavList::ALL
        .iter()
        .find(|l| l.title().eq_ignore_ascii_case(&s.list))
    {
        state.nav.set_list(*list);
    }
    if !s.filter.is_empty() {
        state.filter.edit(|t| t.clone_from(&s.filter));
        apply_filter(state);
    }
    if let Some(d) = state.data.as_ref() {
        let g = &d.analysis.graph;
        let folded: Vec<NodeId> = s
            .folded
            .iter()
            .filter_map(|a| g.find(&d.corpus, &a.run_id, &a.action_id))
            .collect();
        state.timeline.folded.extend(folded);
        let selected = s
            .run_id
            .as_deref()
            .zip(s.action_id.as_deref())
            .and_then(|(r, a)| g.find(&d.corpus, r, a));
        if s.zoom.is_finite() && s.zoom >= 1.0 {
            state.timeline.zoom = s.zoom;
        }
        if s.pan.is_finite() {
            state.timeline.pan = s.pan.clamp(0.0, 1.0);
        }
        rebuild_rows(state);
        if let Some(n) = selected {
            select(state, n, false);
        }
    }
    state.focus = Pane::Timeline;
}
