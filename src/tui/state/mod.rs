//! The explorer's state and its one `update(state, action)`. No terminal here: tests
//! drive `update` directly and the views render `&State`.

mod action;
pub mod axis;
mod copy;
mod detail;
mod filter;
mod navigator;
mod palette;
mod review;
mod scroll;
mod search;
mod timeline;

use copy::*;
use detail::*;
use filter::*;
use navigator::*;
use review::*;
use search::*;
use timeline::*;

pub use action::{Action, Progress};
pub use copy::CopyTarget;
pub use detail::{Detail, DetailTab, JsonLine, raw_lines};
pub use filter::{Filter, columns_key, compile, expression, shorthand};
pub use navigator::{
    NavItem, NavList, NavTarget, Navigator, chain_status, goto, nav_text, rebuild_nav,
};
pub use palette::{COMMANDS, Palette, SHOWN, Suggestion, parse_time, suggestions};
pub use review::{
    MARKED_ONLY, NOTE_EDITOR_KEYS, NoteEditor, ReportPrompt, ReviewSettings, ReviewState, session,
};
pub use scroll::Scroll;
pub use search::{AllMatches, BACKGROUND_SEARCH_FROM, Search, SearchJob, matches_all};
pub use timeline::{Row, Timeline, rebuild_rows, select};

use super::data::{Data, flag};
use super::keymap::{Command, Keymap};
use super::theme::Theme;
use crate::analysis::chains::ChainKind;
use crate::analysis::graph::NodeId;
use crate::canon::{CHAIN_EXCLUDED, Variant, canonical_bytes_without};
use crate::model::json::Json;
use crate::model::text::{sanitize, show_id};
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The pane with the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    Navigator,
    Timeline,
    Detail,
}

/// Overlays drawn over the screen.
#[derive(Clone, Debug, PartialEq)]
pub enum Overlay {
    None,
    /// Help: the glyph legend first, then the keys.
    Help(Scroll),
    /// Every input file with its format, records, size, SHA-256 and load errors.
    Inputs(Scroll),
    /// The selected action beside its counterpart (`analysis::compare`).
    Compare(Scroll),
    /// The fork the selected action is on: both branches side by side.
    Fork(Scroll),
    /// The copy menu: what can be copied for the selected action, and the highlighted entry.
    Copy(Vec<CopyTarget>, usize),
    /// `R`: which report to write, and where.
    Report(review::ReportPrompt),
    /// `:`: the command line and its completions.
    Palette(palette::Palette),
}

/// A line editor for `/` and `f`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prompt {
    pub active: bool,
    pub text: String,
}

/// Everything the explorer shows.
#[derive(Debug)]
pub struct State {
    pub data: Option<Data>,
    pub progress: Progress,
    pub errors: Vec<String>,
    pub keymap: Keymap,
    pub theme: Theme,
    pub focus: Pane,
    pub nav: Navigator,
    pub timeline: Timeline,
    pub detail: Detail,
    pub search: Search,
    pub filter: Filter,
    pub overlay: Overlay,
    pub message: Option<String>,
    /// Texts to put on the clipboard (taken by the event loop).
    pub clipboard: Vec<String>,
    pub quit: bool,
    pub size: (u16, u16),
    /// Rows visible in the timeline and navigator (set by the views' layout).
    pub page: usize,
    /// The banner shown in the header (e.g. for the bundled demo).
    pub banner: Option<String>,
    /// True when keys were given (`--keys`, `--key`): an unknown key id
    /// is then one the keyring lacks, not a keyring missing.
    pub keys_given: bool,
    /// The reviewer's marks and notes, and where they are saved.
    pub review: ReviewState,
}

impl State {
    /// An empty explorer waiting for evidence.
    pub fn new(keymap: Keymap, theme: Theme) -> State {
        State {
            data: None,
            progress: Progress {
                phase: "loading".into(),
                ..Progress::default()
            },
            errors: Vec::new(),
            keymap,
            theme,
            focus: Pane::Timeline,
            nav: Navigator::default(),
            timeline: Timeline::default(),
            detail: Detail::default(),
            search: Search::default(),
            filter: Filter::default(),
            overlay: Overlay::None,
            message: None,
            clipboard: Vec::new(),
            quit: false,
            size: (80, 24),
            page: 10,
            banner: None,
            keys_given: false,
            review: ReviewState::default(),
        }
    }

    /// The row index of the selected node in the timeline.
    pub fn cursor_row(&self) -> Option<usize> {
        self.timeline
            .node
            .and_then(|n| self.timeline.row_of.get(&n).copied())
    }

    /// True when the node passes the filter (or there is none).
    pub fn passes(&self, node: NodeId) -> bool {
        self.filter.passes(node)
    }
}

/// Applies one action.
pub fn update(state: &mut State, action: Action) {
    match action {
        Action::Loaded(data) => {
            let first = data
                .analysis
                .graph
                .runs
                .iter()
                .position(|r| !r.nodes.is_empty());
            state.data = Some(*data);
            state.timeline.run = first.unwrap_or(0);
            rebuild_rows(state);
            let start = state.timeline.rows.first().map(|r| r.node);
            if let Some(n) = start {
                select(state, n, false);
            }
            review::resolve(state);
            rebuild_nav(state);
        }
        Action::Verified(report, findings, capture) => {
            if let Some(d) = state.data.as_mut() {
                d.set_report(report, findings);
                d.capture = capture;
            }
            state.progress.finished = true;
            state.progress.phase = "verified".into();
            review::resolve(state);
            review::say_stale(state);
            rebuild_rows(state);
            rebuild_nav(state);
        }
        Action::ReviewOpened(path, result) => review::opened(state, path, result),
        Action::NoteEdited(target, text) => review::note_done(state, &target, &text),
        Action::Progress(p) => state.progress = p,
        Action::Columns(columns, key) => columns_made(state, *columns, key),
        Action::Errors(e) => {
            state.errors.extend(e);
            rebuild_nav(state);
        }
        Action::Resize(w, h) => state.size = (w, h),
        // A typed character or Backspace is a plain key for the note editor.
        Action::Char(c) if state.review.editor.is_some() => {
            note_key(state, plain(ratatui_textarea::Key::Char(c)));
        }
        Action::Backspace if state.review.editor.is_some() => {
            note_key(state, plain(ratatui_textarea::Key::Backspace));
        }
        Action::Edit(input) => note_key(state, input),
        Action::Paste(text) => paste(state, &text),
        Action::Char(c) => edit(state, |t| t.push(c)),
        Action::Backspace => edit(state, |t| {
            t.pop();
        }),
        Action::Submit => submit(state),
        Action::Complete => complete(state),
        Action::Click(pane, row) => click(state, pane, row),
        Action::Focus(pane) => state.focus = pane,
        Action::ShowList(list) => show_list(state, list),
        Action::SearchDone(query, result) => search_done(state, &query, result),
        Action::Scroll(pane, delta) => {
            state.focus = pane;
            let cmd = if delta < 0 {
                Command::Up
            } else {
                Command::Down
            };
            for _ in 0..delta.unsigned_abs().min(10) {
                command(state, cmd);
            }
        }
        Action::Command(c) => command(state, c),
    }
}

fn edit(state: &mut State, f: impl FnOnce(&mut String)) {
    if let Overlay::Palette(p) = &mut state.overlay {
        palette::edit(p, f);
    } else if let Overlay::Report(p) = &mut state.overlay {
        f(&mut p.path);
    } else if state.search.is_active() {
        state.search.edit(f);
        search_run(state);
    } else if state.filter.is_active() {
        state.filter.edit(f);
        // Checked and applied at every keystroke; a bad expression keeps the last good.
        apply_filter(state);
    }
}

/// A key with no modifier.
fn plain(key: ratatui_textarea::Key) -> ratatui_textarea::Input {
    ratatui_textarea::Input {
        key,
        ..Default::default()
    }
}

/// One key for the note editor, when it is open.
fn note_key(state: &mut State, input: ratatui_textarea::Input) {
    if let Some(e) = state.review.editor.as_mut() {
        e.key(input);
    }
}

/// Pasted text: into the note editor as it is, into a one-line prompt as one line.
fn paste(state: &mut State, text: &str) {
    if let Some(e) = state.review.editor.as_mut() {
        e.paste(text);
        return;
    }
    let line: String = text
        .chars()
        .filter(|c| !crate::model::text::is_terminal_control(*c))
        .collect();
    edit(state, |t| t.push_str(&line));
}

fn submit(state: &mut State) {
    if matches!(state.overlay, Overlay::Palette(_)) {
        palette::submit(state);
    } else if let Some(e) = state.review.editor.take() {
        review::note_done(state, &e.target, &e.text());
    } else if let Overlay::Report(p) = &state.overlay {
        state.review.report_requested = Some(p.clone());
        state.overlay = Overlay::None;
    } else if state.search.is_active() {
        state.search.close();
        match search_all(state) {
            Some(best) => select(state, best, true),
            None if state.search.job().is_some() => {
                state.message = Some("searching every run… (Esc cancels)".into());
            }
            None if !state.search.text().is_empty() => {
                state.message = Some(format!("no match for {:?}", state.search.text()));
            }
            None => {}
        }
    } else if state.filter.is_active() {
        state.filter.close();
        apply_filter(state);
    } else if let Overlay::Copy(items, i) = &state.overlay {
        if let Some(target) = items.get(*i).cloned()
            && let Some(text) = target.text(state)
        {
            state.message = Some(format!("copied {} ({} bytes)", target.label(), text.len()));
            state.clipboard.push(text);
        }
        state.overlay = Overlay::None;
    }
}

fn command(state: &mut State, c: Command) {
    state.message = None;
    if c != Command::Mark {
        state.review.confirm_unmark = None;
    }
    if let Some(e) = state.review.editor.as_mut() {
        if c == Command::Cancel {
            // A changed note is never dropped by one key: Esc asks, Esc again discards.
            if e.text() == e.original || e.discarding {
                state.review.editor = None;
                state.message = Some("note not changed".into());
            } else {
                e.discarding = true;
                state.message =
                    Some("the note has changed: Esc again discards it, Ctrl-S saves it".into());
            }
        }
        return;
    }
    if matches!(state.overlay, Overlay::Palette(_)) {
        palette::command(state, c);
        return;
    }
    if let Overlay::Report(p) = &mut state.overlay {
        match c {
            Command::Left | Command::Up => p.cycle(false),
            Command::Right | Command::Down => p.cycle(true),
            Command::Cancel => {
                state.overlay = Overlay::None;
                state.message = Some("no report written".into());
            }
            _ => {}
        }
        return;
    }
    if let Overlay::Copy(items, i) = &mut state.overlay {
        match c {
            Command::Up => *i = i.saturating_sub(1),
            Command::Down => *i = (*i + 1).min(items.len().saturating_sub(1)),
            Command::Toggle => submit(state),
            Command::Tab(n) if n >= 1 && (n as usize) <= items.len() => {
                *i = n as usize - 1;
                submit(state);
            }
            Command::Quit | Command::Cancel | Command::Copy => state.overlay = Overlay::None,
            _ => {}
        }
        return;
    }
    let page = state.page;
    let open = match &mut state.overlay {
        Overlay::Help(scroll) => Some(scroll.command(c, page, Command::Help)),
        Overlay::Inputs(scroll) => Some(scroll.command(c, page, Command::Inputs)),
        Overlay::Compare(scroll) => Some(scroll.command(c, page, Command::Compare)),
        Overlay::Fork(scroll) => Some(scroll.command(c, page, Command::Fork)),
        _ => None,
    };
    if let Some(open) = open {
        if !open {
            state.overlay = Overlay::None;
        }
        return;
    }
    if state.search.is_active() || state.filter.is_active() {
        if c == Command::Cancel {
            state.search.close();
            state.filter.close();
        }
        return;
    }
    match c {
        Command::Quit => state.quit = true,
        Command::JumpToViolation => jump_to_violation(state),
        Command::NarrowNavigator => state.nav.resize(false),
        Command::WidenNavigator => state.nav.resize(true),
        Command::Help => state.overlay = Overlay::Help(Scroll::default()),
        Command::Palette => palette::open(state),
        Command::Inputs => state.overlay = Overlay::Inputs(Scroll::default()),
        Command::Compare => open_compare(state),
        Command::Fork => open_fork(state),
        Command::ProblemsOnly => toggle_only(state, PROBLEMS_ONLY),
        Command::MarkedOnly => toggle_only(state, MARKED_ONLY),
        Command::Mark => toggle_mark(state),
        Command::Undo => review::undo_unmark(state),
        Command::CycleVerdict => cycle_verdict(state),
        Command::Note => edit_note(state),
        Command::NextMark | Command::PrevMark => jump_mark(state, c == Command::NextMark),
        Command::CompareTarget => set_compare_target(state),
        Command::Report => {
            if state.data.as_ref().is_some_and(|d| d.report.is_some()) {
                review::open_report_prompt(state);
            } else {
                state.message = Some("the report waits for verification to finish".into());
            }
        }
        Command::Cancel => {
            if state.search.clear() {
                state.message = Some("search cancelled".into());
            }
        }
        Command::FocusNavigator => state.focus = Pane::Navigator,
        Command::FocusTimeline => state.focus = Pane::Timeline,
        Command::FocusDetail => state.focus = Pane::Detail,
        Command::FocusNext | Command::FocusPrev => {
            let order = [Pane::Navigator, Pane::Timeline, Pane::Detail];
            let i = order.iter().position(|p| *p == state.focus).unwrap_or(0);
            let step = if c == Command::FocusNext { 1 } else { 2 };
            state.focus = order[(i + step) % 3];
        }
        Command::Tab(n) => {
            if let Some(t) = (n as usize)
                .checked_sub(1)
                .and_then(|i| DetailTab::ALL.get(i))
            {
                // A tab is the selected action's: a capture gap shown gives way to it.
                state.timeline.gap = None;
                state.detail.show(*t);
            }
        }
        Command::NextList => switch_list(state, 1),
        Command::Search => state.search.open(),
        Command::Filter => state.filter.open(),
        Command::SearchNext | Command::SearchPrev => {
            if state.search.all().is_empty() {
                let _ = search_all(state);
            }
            let all = state.search.all().to_vec();
            match next_in(state, &all, c == Command::SearchNext) {
                Some(n) => select(state, n, true),
                None => state.message = Some("no search matches".into()),
            }
        }
        Command::NextProblem | Command::PrevProblem => {
            match next_problem(state, c == Command::NextProblem) {
                Some(Stop::Node(n)) => select(state, n, true),
                Some(Stop::Gap(g)) => select_gap(state, g),
                None => state.message = Some("no problems recorded".into()),
            }
        }
        Command::Back => {
            if state.timeline.history_pos > 1 {
                state.timeline.history_pos -= 1;
                let n = state.timeline.history[state.timeline.history_pos - 1];
                select(state, n, false);
            }
        }
        Command::Forward => {
            if state.timeline.history_pos < state.timeline.history.len() {
                state.timeline.history_pos += 1;
                let n = state.timeline.history[state.timeline.history_pos - 1];
                select(state, n, false);
            }
        }
        Command::Copy => open_copy_menu(state),
        Command::Canonical => state.detail.toggle_canonical(),
        _ => match state.focus {
            Pane::Navigator => nav_command(state, c),
            Pane::Timeline => timeline_command(state, c),
            Pane::Detail => detail_command(state, c),
        },
    }
}

fn click(state: &mut State, pane: Pane, row: usize) {
    state.focus = pane;
    match pane {
        Pane::Navigator => {
            if state.nav.set_cursor(row) {
                follow_nav(state);
            }
        }
        Pane::Timeline => {
            if let Some(r) = state.timeline.rows.get(row) {
                let n = r.node;
                select(state, n, true);
            }
        }
        Pane::Detail => {}
    }
}

/// What `=` compares the selected action with: the action `v` set, else its natural
/// counterpart.
pub fn comparison<'d>(
    state: &State,
    d: &'d Data,
    node: NodeId,
) -> Option<crate::analysis::compare::Pair<'d>> {
    use crate::analysis::compare::{chosen, counterpart};
    match state.review.compare_with {
        Some(other) if other != node => chosen(&d.analysis, &d.corpus, other, node),
        _ => counterpart(&d.analysis, &d.corpus, node),
    }
}

/// Opens the fork view on the selected action's fork, or says why not.
fn open_fork(state: &mut State) {
    let (Some(d), Some(node)) = (&state.data, state.timeline.node) else {
        return;
    };
    if crate::analysis::compare::fork(&d.analysis, &d.corpus, node).is_some() {
        state.overlay = Overlay::Fork(Scroll::default());
    } else {
        state.message = Some("no fork: this action's chain has no branches".into());
    }
}

/// Opens the comparison of the selected action with its counterpart, or says why not.
fn open_compare(state: &mut State) {
    let (Some(d), Some(node)) = (&state.data, state.timeline.node) else {
        return;
    };
    if comparison(state, d, node).is_some() {
        state.overlay = Overlay::Compare(Scroll::default());
    } else {
        state.message = Some(
            "nothing to compare with: not re-approved, not re-approved later, no twin on another branch of a fork, no rewritten copy (v chooses one)"
                .into(),
        );
    }
}
