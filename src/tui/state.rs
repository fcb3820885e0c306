//! The explorer's state and its one `update(state, action)`. No terminal here: tests
//! drive `update` directly and the views render `&State`.

use super::data::{Data, flag};
use super::keymap::{Command, Keymap};
use super::theme::Theme;
use crate::analysis::chains::ChainKind;
use crate::analysis::graph::NodeId;
use crate::canon::{CHAIN_EXCLUDED, Variant, canonical_bytes_without};
use crate::model::json::Json;
use crate::model::text::{sanitize, show_id};
use crate::verify::Report;
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The pane with the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    Navigator,
    Timeline,
    Detail,
}

/// The navigator's lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NavList {
    Runs,
    Chains,
    Findings,
    Leases,
}

impl NavList {
    /// All lists in order.
    pub const ALL: [NavList; 4] = [
        NavList::Runs,
        NavList::Chains,
        NavList::Findings,
        NavList::Leases,
    ];

    /// The tab title.
    pub fn title(self) -> &'static str {
        match self {
            NavList::Runs => "Runs",
            NavList::Chains => "Chains",
            NavList::Findings => "Findings",
            NavList::Leases => "Leases",
        }
    }
}

/// The detail tabs, `1`–`6`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DetailTab {
    Authority,
    Drift,
    Lease,
    Digests,
    Record,
    Raw,
}

impl DetailTab {
    /// All tabs in key order.
    pub const ALL: [DetailTab; 6] = [
        DetailTab::Authority,
        DetailTab::Drift,
        DetailTab::Lease,
        DetailTab::Digests,
        DetailTab::Record,
        DetailTab::Raw,
    ];

    /// The tab title.
    pub fn title(self) -> &'static str {
        match self {
            DetailTab::Authority => "Authority",
            DetailTab::Drift => "Drift",
            DetailTab::Lease => "Lease",
            DetailTab::Digests => "Digests",
            DetailTab::Record => "Record",
            DetailTab::Raw => "Raw",
        }
    }
}

/// What a navigator row points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NavTarget {
    Run(usize),
    Chain(usize),
    Finding(usize),
    Lease(usize),
    /// An action inside a chain (the chain's index).
    Step(usize, NodeId),
    /// An action under a lease (the lease summary's index).
    LeaseUse(usize, NodeId),
    /// A load or lease-file error (index into `State::errors`), listed first under Runs.
    LoadError(usize),
}

/// One navigator row.
#[derive(Clone, Debug, PartialEq)]
pub struct NavItem {
    pub depth: u8,
    pub target: NavTarget,
    /// State flags of everything inside (shown even when folded).
    pub flags: u16,
    pub foldable: bool,
    pub folded: bool,
}

/// One timeline row: an action in tree order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub node: NodeId,
    pub depth: u16,
    pub has_children: bool,
    pub folded: bool,
    /// Flags of the node and everything under it.
    pub subtree: u16,
}

/// Overlays drawn over the screen.
#[derive(Clone, Debug, PartialEq)]
pub enum Overlay {
    None,
    Help,
    /// The copy menu: what can be copied for the selected action, and the highlighted entry.
    Copy(Vec<CopyTarget>, usize),
}

/// Something the copy menu offers; the text is produced only when chosen (a record may
/// be tens of megabytes).
#[derive(Clone, Debug, PartialEq)]
pub enum CopyTarget {
    /// A short value shown in full: (label, text).
    Value(String, String),
    ActionJson,
    RecordJson,
    CanonicalBytes,
}

impl CopyTarget {
    /// The menu label.
    pub fn label(&self) -> &str {
        match self {
            CopyTarget::Value(label, _) => label,
            CopyTarget::ActionJson => "action raw JSON",
            CopyTarget::RecordJson => "record raw JSON",
            CopyTarget::CanonicalBytes => "record canonical bytes (C1)",
        }
    }

    /// The text to copy, for the selected node.
    pub fn text(&self, state: &State) -> Option<String> {
        let d = state.data.as_ref()?;
        let node = state.node?;
        let (record, _) = d.analysis.graph.action(&d.corpus, node)?;
        Some(match self {
            CopyTarget::Value(_, v) => v.clone(),
            CopyTarget::ActionJson => {
                serde_json::to_string_pretty(d.analysis.raw(&d.corpus, node)?).ok()?
            }
            CopyTarget::RecordJson => serde_json::to_string_pretty(&record.json).ok()?,
            CopyTarget::CanonicalBytes => String::from_utf8_lossy(&canonical_bytes_without(
                &record.json,
                CHAIN_EXCLUDED,
                Variant::C1,
            ))
            .into_owned(),
        })
    }
}

/// A line editor for `/` and `f`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prompt {
    pub active: bool,
    pub text: String,
}

/// Loading and verification progress from the background worker.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    pub phase: String,
    pub done: usize,
    pub total: usize,
    pub finished: bool,
}

/// Input the state reacts to.
#[derive(Debug)]
pub enum Action {
    /// A command from the keymap.
    Command(Command),
    /// A typed character while a prompt is open.
    Char(char),
    Backspace,
    Submit,
    Resize(u16, u16),
    /// Evidence loaded and analysed (first frame comes before verification).
    Loaded(Box<Data>),
    /// Verification finished: the report and the full finding list.
    Verified(Arc<Report>, Vec<crate::model::finding::Finding>),
    Progress(Progress),
    /// Problems to show (load errors, lease-file errors).
    Errors(Vec<String>),
    /// A mouse click on a pane row: (pane, row index in that pane's list).
    Click(Pane, usize),
    Scroll(Pane, i32),
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
    pub nav_list: NavList,
    pub nav_items: Vec<NavItem>,
    pub nav_cursor: usize,
    nav_unfolded: HashSet<NavTarget>,
    /// Selected run (index into the graph's runs).
    pub run: usize,
    pub rows: Vec<Row>,
    row_of: HashMap<NodeId, usize>,
    folded: HashSet<NodeId>,
    pub node: Option<NodeId>,
    pub zoom: f64,
    /// Pan as a fraction of the zoomed axis.
    pub pan: f64,
    pub tab: DetailTab,
    pub detail_scroll: usize,
    pub raw_cursor: usize,
    pub raw_folded: HashSet<String>,
    pub show_canonical: bool,
    pub search: Prompt,
    /// Nodes of the current run matching the search, for highlighting.
    pub search_hits: HashSet<NodeId>,
    /// All matching nodes (computed on submit), in run/time order.
    pub search_all: Vec<NodeId>,
    pub filter: Prompt,
    /// Nodes passing the submitted filter (None = no filter).
    pub filter_pass: Option<Vec<bool>>,
    pub filter_error: Option<String>,
    history: Vec<NodeId>,
    history_pos: usize,
    /// The child `c` last went to, per parent.
    child_seen: HashMap<NodeId, usize>,
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
            nav_list: NavList::Runs,
            nav_items: Vec::new(),
            nav_cursor: 0,
            nav_unfolded: HashSet::new(),
            run: 0,
            rows: Vec::new(),
            row_of: HashMap::new(),
            folded: HashSet::new(),
            node: None,
            zoom: 1.0,
            pan: 0.0,
            tab: DetailTab::Authority,
            detail_scroll: 0,
            raw_cursor: 0,
            raw_folded: HashSet::new(),
            show_canonical: false,
            search: Prompt::default(),
            search_hits: HashSet::new(),
            search_all: Vec::new(),
            filter: Prompt::default(),
            filter_pass: None,
            filter_error: None,
            history: Vec::new(),
            history_pos: 0,
            child_seen: HashMap::new(),
            overlay: Overlay::None,
            message: None,
            clipboard: Vec::new(),
            quit: false,
            size: (80, 24),
            page: 10,
            banner: None,
        }
    }

    /// The row index of the selected node in the timeline.
    pub fn cursor_row(&self) -> Option<usize> {
        self.node.and_then(|n| self.row_of.get(&n).copied())
    }

    /// True when the node passes the filter (or there is none).
    pub fn passes(&self, node: NodeId) -> bool {
        self.filter_pass
            .as_ref()
            .is_none_or(|p| p.get(node as usize).copied().unwrap_or(false))
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
            state.run = first.unwrap_or(0);
            rebuild_rows(state);
            let start = state.rows.first().map(|r| r.node);
            if let Some(n) = start {
                select(state, n, false);
            }
            rebuild_nav(state);
        }
        Action::Verified(report, findings) => {
            if let Some(d) = state.data.as_mut() {
                d.set_report(report, findings);
            }
            state.progress.finished = true;
            state.progress.phase = "verified".into();
            rebuild_rows(state);
            rebuild_nav(state);
        }
        Action::Progress(p) => state.progress = p,
        Action::Errors(e) => {
            state.errors.extend(e);
            rebuild_nav(state);
        }
        Action::Resize(w, h) => state.size = (w, h),
        Action::Char(c) => edit(state, |t| t.push(c)),
        Action::Backspace => edit(state, |t| {
            t.pop();
        }),
        Action::Submit => submit(state),
        Action::Click(pane, row) => click(state, pane, row),
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
    if state.search.active {
        f(&mut state.search.text);
        search_run(state);
    } else if state.filter.active {
        f(&mut state.filter.text);
    }
}

fn submit(state: &mut State) {
    if state.search.active {
        state.search.active = false;
        match search_all(state) {
            Some(best) => select(state, best, true),
            None if !state.search.text.is_empty() => {
                state.message = Some(format!("no match for {:?}", state.search.text));
            }
            None => {}
        }
    } else if state.filter.active {
        state.filter.active = false;
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
    if state.overlay == Overlay::Help {
        if matches!(
            c,
            Command::Help | Command::Cancel | Command::Quit | Command::Toggle
        ) {
            state.overlay = Overlay::None;
        }
        return;
    }
    if state.search.active || state.filter.active {
        if c == Command::Cancel {
            state.search.active = false;
            state.filter.active = false;
        }
        return;
    }
    match c {
        Command::Quit => state.quit = true,
        Command::Help => state.overlay = Overlay::Help,
        Command::Cancel => {
            state.search = Prompt::default();
            state.search_hits.clear();
            state.search_all.clear();
        }
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
                state.tab = *t;
                state.detail_scroll = 0;
                state.raw_cursor = 0;
            }
        }
        Command::NextList => switch_list(state, 1),
        Command::Search => {
            state.search = Prompt {
                active: true,
                text: String::new(),
            };
            state.search_hits.clear();
        }
        Command::Filter => {
            state.filter.active = true;
        }
        Command::SearchNext | Command::SearchPrev => {
            if state.search_all.is_empty() {
                let _ = search_all(state);
            }
            let all = state.search_all.clone();
            match next_in(state, &all, c == Command::SearchNext) {
                Some(n) => select(state, n, true),
                None => state.message = Some("no search matches".into()),
            }
        }
        Command::NextProblem | Command::PrevProblem => {
            let problems = problem_nodes(state);
            match next_in(state, &problems, c == Command::NextProblem) {
                Some(n) => select(state, n, true),
                None => state.message = Some("no problems recorded".into()),
            }
        }
        Command::Back => {
            if state.history_pos > 1 {
                state.history_pos -= 1;
                let n = state.history[state.history_pos - 1];
                select(state, n, false);
            }
        }
        Command::Forward => {
            if state.history_pos < state.history.len() {
                state.history_pos += 1;
                let n = state.history[state.history_pos - 1];
                select(state, n, false);
            }
        }
        Command::Copy => open_copy_menu(state),
        Command::Canonical => state.show_canonical = !state.show_canonical,
        _ => match state.focus {
            Pane::Navigator => nav_command(state, c),
            Pane::Timeline => timeline_command(state, c),
            Pane::Detail => detail_command(state, c),
        },
    }
}

fn switch_list(state: &mut State, step: isize) {
    let i = NavList::ALL
        .iter()
        .position(|l| *l == state.nav_list)
        .unwrap_or(0) as isize;
    state.nav_list = NavList::ALL[(i + step).rem_euclid(4) as usize];
    state.nav_cursor = 0;
    rebuild_nav(state);
}

fn nav_command(state: &mut State, c: Command) {
    let len = state.nav_items.len();
    match c {
        Command::Up => state.nav_cursor = state.nav_cursor.saturating_sub(1),
        Command::Down => state.nav_cursor = (state.nav_cursor + 1).min(len.saturating_sub(1)),
        Command::PageUp => state.nav_cursor = state.nav_cursor.saturating_sub(state.page),
        Command::PageDown => {
            state.nav_cursor = (state.nav_cursor + state.page).min(len.saturating_sub(1))
        }
        Command::Home => state.nav_cursor = 0,
        Command::End => state.nav_cursor = len.saturating_sub(1),
        Command::Left => switch_list(state, -1),
        Command::Right => switch_list(state, 1),
        Command::Toggle => activate_nav(state),
        _ => {}
    }
    if matches!(
        c,
        Command::Up
            | Command::Down
            | Command::PageUp
            | Command::PageDown
            | Command::Home
            | Command::End
    ) {
        follow_nav(state);
    }
}

/// Moving in the navigator selects what the row points at.
fn follow_nav(state: &mut State) {
    let Some(item) = state.nav_items.get(state.nav_cursor) else {
        return;
    };
    if let Some(n) = target_node(state, item.target) {
        select(state, n, true);
    }
}

fn target_node(state: &State, t: NavTarget) -> Option<NodeId> {
    let d = state.data.as_ref()?;
    let an = &d.analysis;
    match t {
        NavTarget::Run(r) => an.graph.runs.get(r)?.nodes.first().copied(),
        NavTarget::Chain(i) => {
            let c = an.chains.get(i)?;
            c.steps.first().map(|s| s.node)
        }
        NavTarget::Finding(i) => d.nodes_of(d.findings.get(i)?).first().copied(),
        NavTarget::Lease(i) => an.leases.summaries.get(i)?.nodes.first().copied(),
        NavTarget::Step(_, n) | NavTarget::LeaseUse(_, n) => Some(n),
        NavTarget::LoadError(_) => None,
    }
}

fn activate_nav(state: &mut State) {
    let Some(item) = state.nav_items.get(state.nav_cursor).cloned() else {
        return;
    };
    if item.foldable {
        if !state.nav_unfolded.remove(&item.target) {
            state.nav_unfolded.insert(item.target);
        }
        rebuild_nav(state);
    } else if let Some(n) = target_node(state, item.target) {
        select(state, n, true);
        state.focus = Pane::Timeline;
    }
}

fn timeline_command(state: &mut State, c: Command) {
    let Some(data) = state.data.as_ref() else {
        return;
    };
    let cur = state.cursor_row().unwrap_or(0);
    let last = state.rows.len().saturating_sub(1);
    let target_row = match c {
        Command::Up => Some(cur.saturating_sub(1)),
        Command::Down => Some((cur + 1).min(last)),
        Command::PageUp => Some(cur.saturating_sub(state.page)),
        Command::PageDown => Some((cur + state.page).min(last)),
        Command::Home => Some(0),
        Command::End => Some(last),
        _ => None,
    };
    if let Some(r) = target_row {
        if let Some(row) = state.rows.get(r) {
            let n = row.node;
            select(state, n, false);
        }
        return;
    }
    let Some(node) = state.node else { return };
    let g = &data.analysis.graph;
    match c {
        Command::Toggle => {
            if !state.folded.remove(&node) {
                state.folded.insert(node);
            }
            rebuild_rows(state);
        }
        Command::Left => state.pan = (state.pan - 0.1 / state.zoom).max(0.0),
        Command::Right => state.pan = (state.pan + 0.1 / state.zoom).min(1.0 - 1.0 / state.zoom),
        Command::ZoomIn => state.zoom = (state.zoom * 2.0).min(1024.0),
        Command::ZoomOut => {
            state.zoom = (state.zoom / 2.0).max(1.0);
            state.pan = state.pan.min(1.0 - 1.0 / state.zoom).max(0.0);
        }
        Command::Parent => match g.nodes[node as usize].parent {
            Some(p) => select(state, p, true),
            None => state.message = Some("no parent recorded".into()),
        },
        Command::Child => {
            let kids = g.children(node);
            if kids.is_empty() {
                state.message = Some("no children".into());
            } else {
                // Repeated presses cycle through the children.
                let i = state.child_cycle(node, kids.len());
                select(state, kids[i], true);
            }
        }
        Command::NextSibling | Command::PrevSibling => {
            let sibs = match g.nodes[node as usize].parent {
                Some(p) => g.children(p),
                None => state
                    .rows
                    .iter()
                    .filter(|r| r.depth == 0)
                    .map(|r| r.node)
                    .collect(),
            };
            if let Some(i) = sibs.iter().position(|s| *s == node) {
                let j = if c == Command::NextSibling {
                    (i + 1).min(sibs.len() - 1)
                } else {
                    i.saturating_sub(1)
                };
                select(state, sibs[j], true);
            }
        }
        _ => {}
    }
}

impl State {
    /// Which child `c` goes to: the one after the child last visited from this node.
    fn child_cycle(&mut self, node: NodeId, count: usize) -> usize {
        let key = node;
        let entry = self.child_seen.entry(key).or_insert(usize::MAX);
        *entry = entry.wrapping_add(1) % count;
        *entry
    }
}

fn detail_command(state: &mut State, c: Command) {
    match c {
        Command::Up => {
            if state.tab == DetailTab::Raw {
                state.raw_cursor = state.raw_cursor.saturating_sub(1);
            } else {
                state.detail_scroll = state.detail_scroll.saturating_sub(1);
            }
        }
        Command::Down => {
            if state.tab == DetailTab::Raw {
                state.raw_cursor += 1;
            } else {
                state.detail_scroll += 1;
            }
        }
        Command::PageUp => state.detail_scroll = state.detail_scroll.saturating_sub(state.page),
        Command::PageDown => state.detail_scroll += state.page,
        Command::Home => {
            state.detail_scroll = 0;
            state.raw_cursor = 0;
        }
        Command::Left | Command::Right => {
            let i = DetailTab::ALL
                .iter()
                .position(|t| *t == state.tab)
                .unwrap_or(0) as isize;
            let step = if c == Command::Right { 1 } else { -1 };
            state.tab = DetailTab::ALL[(i + step).rem_euclid(6) as usize];
            state.detail_scroll = 0;
        }
        Command::Toggle if state.tab == DetailTab::Raw => {
            let lines = raw_lines(state);
            if let Some(line) = lines.get(state.raw_cursor.min(lines.len().saturating_sub(1)))
                && line.foldable
                && !state.raw_folded.remove(&line.path)
            {
                state.raw_folded.insert(line.path.clone());
            }
        }
        _ => {}
    }
}

fn click(state: &mut State, pane: Pane, row: usize) {
    state.focus = pane;
    match pane {
        Pane::Navigator => {
            if row < state.nav_items.len() {
                state.nav_cursor = row;
                follow_nav(state);
            }
        }
        Pane::Timeline => {
            if let Some(r) = state.rows.get(row) {
                let n = r.node;
                select(state, n, true);
            }
        }
        Pane::Detail => {}
    }
}

/// Selects a node: switches to its run, unfolds its ancestors, records history.
pub fn select(state: &mut State, node: NodeId, record: bool) {
    let Some(data) = state.data.as_ref() else {
        return;
    };
    let run = data.run_of(node);
    let mut unfold = Vec::new();
    let mut cur = data.analysis.graph.nodes[node as usize].parent;
    let mut guard = 0;
    while let Some(p) = cur {
        if data.run_of(p) != run || guard > data.flags.len() {
            break;
        }
        unfold.push(p);
        cur = data.analysis.graph.nodes[p as usize].parent;
        guard += 1;
    }
    let mut changed = run != state.run;
    for p in unfold {
        changed |= state.folded.remove(&p);
    }
    state.run = run;
    if changed || state.rows.is_empty() {
        rebuild_rows(state);
        search_run(state);
    }
    if state.node != Some(node) {
        state.raw_folded.clear();
        state.raw_cursor = 0;
        state.detail_scroll = 0;
    }
    state.node = Some(node);
    if record {
        state.history.truncate(state.history_pos);
        if state.history.last() != Some(&node) {
            state.history.push(node);
        }
        state.history_pos = state.history.len();
    } else if state.history.is_empty() {
        state.history.push(node);
        state.history_pos = 1;
    }
}

/// Rebuilds the timeline rows of the selected run: tree order, folded subtrees hidden.
pub fn rebuild_rows(state: &mut State) {
    state.rows.clear();
    state.row_of.clear();
    let Some(data) = state.data.as_ref() else {
        return;
    };
    let g = &data.analysis.graph;
    let Some(run) = g.runs.get(state.run) else {
        return;
    };
    let run_idx = state.run as u32;
    let in_run = |n: NodeId| g.nodes[n as usize].run == run_idx;
    let roots: Vec<NodeId> = run
        .nodes
        .iter()
        .copied()
        .filter(|n| g.nodes[*n as usize].parent.is_none_or(|p| !in_run(p)))
        .collect();
    // Subtree flags (post-order), computed over the whole run so folded rows keep them.
    let mut visited: HashSet<NodeId> = HashSet::with_capacity(run.nodes.len());
    let mut order: Vec<(NodeId, u16)> = Vec::with_capacity(run.nodes.len());
    let mut stack: Vec<(NodeId, u16)> = roots.iter().rev().map(|r| (*r, 0)).collect();
    // Nodes only reachable through a cycle still get a row.
    let mut pending: Vec<NodeId> = run.nodes.clone();
    pending.reverse();
    loop {
        let Some((n, depth)) = stack.pop() else {
            match pending.pop() {
                Some(n) if !visited.contains(&n) => {
                    stack.push((n, 0));
                    continue;
                }
                Some(_) => continue,
                None => break,
            }
        };
        if !visited.insert(n) {
            continue;
        }
        order.push((n, depth));
        for k in g.children(n).into_iter().rev() {
            if in_run(k) && !visited.contains(&k) {
                stack.push((k, depth + 1));
            }
        }
    }
    // Flags of each subtree (children come after their parent in `order`).
    let mut subtree: HashMap<NodeId, u16> = HashMap::with_capacity(order.len());
    let mut has_children: HashSet<NodeId> = HashSet::new();
    for &(n, _) in order.iter().rev() {
        let f = data.flags[n as usize] | subtree.get(&n).copied().unwrap_or(0);
        subtree.insert(n, f);
        if let Some(p) = g.nodes[n as usize].parent
            && in_run(p)
            && p != n
        {
            has_children.insert(p);
            *subtree.entry(p).or_default() |= f;
        }
    }
    let mut hidden_below: Option<u16> = None;
    for &(n, depth) in &order {
        if let Some(d) = hidden_below {
            if depth > d {
                continue;
            }
            hidden_below = None;
        }
        let folded = state.folded.contains(&n);
        if folded {
            hidden_below = Some(depth);
        }
        state.row_of.insert(n, state.rows.len());
        state.rows.push(Row {
            node: n,
            depth,
            has_children: has_children.contains(&n),
            folded,
            subtree: subtree.get(&n).copied().unwrap_or(0),
        });
    }
}

/// Rebuilds the navigator list (respecting the filter and fold state).
pub fn rebuild_nav(state: &mut State) {
    state.nav_items = nav_items(state);
    state.nav_cursor = state
        .nav_cursor
        .min(state.nav_items.len().saturating_sub(1));
}

fn nav_items(state: &State) -> Vec<NavItem> {
    let errors = (0..state.errors.len()).map(|i| NavItem {
        depth: 0,
        target: NavTarget::LoadError(i),
        flags: 0,
        foldable: false,
        folded: false,
    });
    let Some(d) = state.data.as_ref() else {
        return if state.nav_list == NavList::Runs {
            errors.collect()
        } else {
            Vec::new()
        };
    };
    let an = &d.analysis;
    let g = &an.graph;
    let filtered = state.filter_pass.is_some();
    let union = |nodes: &mut dyn Iterator<Item = NodeId>| -> (u16, bool) {
        let mut f = 0;
        let mut any = !filtered;
        for n in nodes {
            f |= d.flags[n as usize];
            any = any || state.passes(n);
        }
        (f, any)
    };
    let item = |depth, target, flags, foldable| NavItem {
        depth,
        target,
        flags,
        foldable,
        folded: foldable && !state.nav_unfolded.contains(&target),
    };
    let mut out = Vec::new();
    let chain_item = |i: usize, depth: u8, out: &mut Vec<NavItem>| {
        let c = &an.chains[i];
        let (flags, pass) = if filtered {
            union(&mut c.steps.iter().map(|s| s.node))
        } else {
            (d.group_flags.chains[i], true)
        };
        if pass {
            let it = item(depth, NavTarget::Chain(i), flags, true);
            let folded = it.folded;
            out.push(it);
            if !folded {
                for s in &c.steps {
                    out.push(item(
                        depth + 1,
                        NavTarget::Step(i, s.node),
                        d.flags[s.node as usize],
                        false,
                    ));
                }
            }
        }
    };
    let lease_item = |i: usize, depth: u8, out: &mut Vec<NavItem>| {
        let l = &an.leases.summaries[i];
        let (flags, pass) = if filtered {
            union(&mut l.nodes.iter().copied())
        } else {
            (d.group_flags.leases[i], true)
        };
        if pass {
            let it = item(depth, NavTarget::Lease(i), flags, true);
            let folded = it.folded;
            out.push(it);
            if !folded {
                for &n in &l.nodes {
                    out.push(item(
                        depth + 1,
                        NavTarget::LeaseUse(i, n),
                        d.flags[n as usize],
                        false,
                    ));
                }
            }
        }
    };
    match state.nav_list {
        NavList::Runs => {
            out.extend(errors);
            for (ri, run) in g.runs.iter().enumerate() {
                let (flags, pass) = if filtered {
                    union(&mut run.nodes.iter().copied())
                } else {
                    (d.group_flags.runs[ri], true)
                };
                if !pass {
                    continue;
                }
                let it = item(0, NavTarget::Run(ri), flags, true);
                let folded = it.folded;
                out.push(it);
                if !folded {
                    for (i, c) in an.chains.iter().enumerate() {
                        if c.steps.first().is_some_and(|s| d.run_of(s.node) == ri) {
                            chain_item(i, 1, &mut out);
                        }
                    }
                    for (i, l) in an.leases.summaries.iter().enumerate() {
                        if l.nodes.first().is_some_and(|n| d.run_of(*n) == ri) {
                            lease_item(i, 1, &mut out);
                        }
                    }
                }
            }
        }
        NavList::Chains => {
            for i in 0..an.chains.len() {
                chain_item(i, 0, &mut out);
            }
        }
        NavList::Findings => {
            for (i, f) in d.findings.iter().enumerate() {
                if filtered && !d.nodes_of(f).iter().any(|n| state.passes(*n)) {
                    continue;
                }
                out.push(item(0, NavTarget::Finding(i), 0, false));
            }
        }
        NavList::Leases => {
            for i in 0..an.leases.summaries.len() {
                lease_item(i, 0, &mut out);
            }
        }
    }
    out
}

/// The text of a navigator row (built only for the rows on screen), sanitised.
pub fn nav_text(state: &State, item: &NavItem) -> String {
    if let NavTarget::LoadError(i) = item.target {
        let e = state.errors.get(i).map_or("", String::as_str);
        return format!("⚠ {}", sanitize(e));
    }
    let Some(d) = state.data.as_ref() else {
        return String::new();
    };
    let an = &d.analysis;
    let g = &an.graph;
    let action_id = |n: NodeId| {
        g.action(&d.corpus, n)
            .and_then(|(_, a)| a.id())
            .unwrap_or("(no id)")
    };
    let text = match item.target {
        NavTarget::LoadError(_) => String::new(),
        NavTarget::Run(ri) => {
            let run = &g.runs[ri];
            format!(
                "{} · {} rec · {} act · chain {}",
                if run.id.is_empty() {
                    "(no run_id)"
                } else {
                    &run.id
                },
                run.records.len(),
                run.nodes.len(),
                chain_status(d, ri)
            )
        }
        NavTarget::Chain(i) => {
            let c = &an.chains[i];
            match c.kind {
                ChainKind::DenyReapproval => format!(
                    "⊘→ {} ({}) {}",
                    c.actions().join(" → "),
                    c.steps.len(),
                    c.ended.as_deref().unwrap_or("")
                ),
                ChainKind::Causal => format!("causal {} ({})", c.id, c.steps.len()),
            }
        }
        NavTarget::Step(i, n) => {
            let step = an.chains[i].steps.iter().find(|s| s.node == n);
            format!(
                "{} {} {}",
                action_id(n),
                step.and_then(|s| s.tool.as_deref()).unwrap_or("?"),
                step.and_then(|s| s.decision.as_deref())
                    .unwrap_or("no decision")
            )
        }
        NavTarget::Finding(i) => {
            let f = &d.findings[i];
            let mark = match f.severity {
                crate::model::finding::Severity::High => "▲",
                crate::model::finding::Severity::Medium => "■",
                _ => "·",
            };
            let ids: Vec<_> = f.action_ids.iter().map(|a| show_id(a)).collect();
            format!("{mark} {} {} {}", f.id, ids.join(","), f.message)
        }
        NavTarget::Lease(i) => {
            let l = &an.leases.summaries[i];
            let outside = l
                .nodes
                .iter()
                .filter(|n| d.flags[**n as usize] & flag::LEASE_OUT != 0)
                .count();
            let source = l.source.name();
            format!(
                "⧗ {} ({} uses, {source}){}",
                l.lease_id,
                l.nodes.len(),
                if outside > 0 {
                    format!(" ⌛ {outside} outside")
                } else {
                    String::new()
                }
            )
        }
        NavTarget::LeaseUse(_, n) => {
            let verdict = an
                .leases
                .by_node
                .get(&n)
                .map(|v| v.verdict.name())
                .unwrap_or("?");
            format!("{} {verdict}", action_id(n))
        }
    };
    sanitize(&text).into_owned()
}

/// The chain verdict of a run's records, as text with a glyph.
pub fn chain_status(d: &Data, run: usize) -> String {
    let Some(report) = d.report.as_ref() else {
        return "…".into();
    };
    let run = &d.analysis.graph.runs[run];
    let mut worst: Option<crate::verify::chain::ChainStatus> = None;
    for &r in &run.records {
        if let Some(s) = report.records.get(r as usize).and_then(|x| x.chain.status) {
            worst = Some(worst.map_or(s, |w| w.max(s)));
        }
    }
    match worst {
        None => "—".into(),
        Some(s) => {
            let glyph = if matches!(
                s,
                crate::verify::chain::ChainStatus::Intact
                    | crate::verify::chain::ChainStatus::NotPresent
            ) {
                "✓"
            } else {
                "✗"
            };
            format!("{glyph} {}", s.name())
        }
    }
}

/// Nodes with a problem flag, in run then time order.
fn problem_nodes(state: &State) -> Vec<NodeId> {
    let Some(d) = state.data.as_ref() else {
        return Vec::new();
    };
    d.analysis
        .graph
        .runs
        .iter()
        .flat_map(|r| r.nodes.iter().copied())
        .filter(|n| d.flags[*n as usize] & flag::PROBLEM != 0 && state.passes(*n))
        .collect()
}

/// The next (or previous) node of `list` after the selection, in run/time order, wrapping.
fn next_in(state: &State, list: &[NodeId], forward: bool) -> Option<NodeId> {
    let d = state.data.as_ref()?;
    if list.is_empty() {
        return None;
    }
    let rank = |n: NodeId| -> (usize, usize) { (d.run_of(n), d.rank[n as usize] as usize) };
    let Some(cur) = state.node else {
        return list.first().copied();
    };
    let here = rank(cur);
    let ranked: Vec<((usize, usize), NodeId)> = list.iter().map(|n| (rank(*n), *n)).collect();
    if forward {
        ranked
            .iter()
            .filter(|(r, _)| *r > here)
            .min_by_key(|(r, _)| *r)
            .or_else(|| ranked.iter().min_by_key(|(r, _)| *r))
            .map(|x| x.1)
    } else {
        ranked
            .iter()
            .filter(|(r, _)| *r < here)
            .max_by_key(|(r, _)| *r)
            .or_else(|| ranked.iter().max_by_key(|(r, _)| *r))
            .map(|x| x.1)
    }
}

/// Fuzzy matches of the search text among the current run's rows (per keystroke).
fn search_run(state: &mut State) {
    state.search_hits.clear();
    let Some(d) = state.data.as_ref() else { return };
    let q = state.search.text.to_lowercase();
    if q.is_empty() {
        return;
    }
    let m = SkimMatcherV2::default();
    let Some(run) = d.analysis.graph.runs.get(state.run) else {
        return;
    };
    state.search_hits = run
        .nodes
        .iter()
        .copied()
        .filter(|n| m.fuzzy_match(&d.haystacks[*n as usize], &q).is_some())
        .collect();
}

/// Fuzzy matches among all actions (on submit), in parallel; returns the best match.
fn search_all(state: &mut State) -> Option<NodeId> {
    state.search_all.clear();
    let d = state.data.as_ref()?;
    let q = state.search.text.to_lowercase();
    if q.is_empty() {
        return None;
    }
    let scored: Vec<(NodeId, i64)> = (0..d.haystacks.len() as NodeId)
        .into_par_iter()
        .filter_map(|n| {
            SkimMatcherV2::default()
                .fuzzy_match(&d.haystacks[n as usize], &q)
                .map(|score| (n, score))
        })
        .collect();
    let best = scored
        .iter()
        .max_by_key(|(n, score)| (*score, std::cmp::Reverse(*n)))
        .map(|(n, _)| *n);
    state.search_all = scored.into_iter().map(|(n, _)| n).collect();
    best
}

/// One term of the filter language.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    pub negated: bool,
    pub key: Option<String>,
    pub value: String,
}

/// Parses `tool:x decision:deny !class:read lease:after-expiry finding:F-STATE run:r word`.
pub fn parse_filter(text: &str) -> Result<Vec<Term>, String> {
    text.split_whitespace()
        .map(|w| {
            let (negated, w) = match w.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, w),
            };
            match w.split_once(':') {
                Some((k, v)) => {
                    if !["tool", "decision", "class", "lease", "finding", "run"].contains(&k) {
                        return Err(format!(
                            "unknown filter key {k:?} (tool, decision, class, lease, finding, run)"
                        ));
                    }
                    Ok(Term {
                        negated,
                        key: Some(k.to_string()),
                        value: v.to_lowercase(),
                    })
                }
                None => Ok(Term {
                    negated,
                    key: None,
                    value: w.to_lowercase(),
                }),
            }
        })
        .collect()
}

fn apply_filter(state: &mut State) {
    state.filter_error = None;
    let terms = match parse_filter(&state.filter.text) {
        Ok(t) => t,
        Err(e) => {
            state.filter_error = Some(e);
            return;
        }
    };
    let Some(d) = state.data.as_ref() else { return };
    if terms.is_empty() {
        state.filter_pass = None;
        rebuild_nav(state);
        return;
    }
    let g = &d.analysis.graph;
    let mut finding_ids: HashMap<NodeId, Vec<&str>> = HashMap::new();
    for f in &d.findings {
        for n in d.nodes_of(f) {
            finding_ids.entry(n).or_default().push(f.id);
        }
    }
    let pass: Vec<bool> = (0..g.nodes.len() as NodeId)
        .map(|n| {
            let Some((_, a)) = g.action(&d.corpus, n) else {
                return false;
            };
            terms.iter().all(|t| {
                let lower = |s: Option<&str>| s.map(str::to_lowercase).unwrap_or_default();
                let hit = match t.key.as_deref() {
                    Some("tool") => lower(a.tool()).contains(&t.value),
                    Some("decision") => lower(a.decision().and_then(|x| x.outcome())) == t.value,
                    Some("class") => {
                        lower(Some(a.side_effect_class().unwrap_or("unknown"))) == t.value
                    }
                    Some("lease") => d.analysis.leases.by_node.get(&n).is_some_and(|l| {
                        l.verdict.name() == t.value || l.lease_id.to_lowercase().contains(&t.value)
                    }),
                    Some("finding") => finding_ids.get(&n).is_some_and(|ids| {
                        ids.iter().any(|id| id.to_lowercase().contains(&t.value))
                    }),
                    Some("run") => g.runs[d.run_of(n)].id.to_lowercase().contains(&t.value),
                    _ => d.haystacks[n as usize].contains(&t.value),
                };
                hit != t.negated
            })
        })
        .collect();
    let count = pass.iter().filter(|p| **p).count();
    state.message = Some(format!("filter: {count} of {} actions", pass.len()));
    state.filter_pass = Some(pass);
    state.nav_cursor = 0;
    rebuild_nav(state);
}

fn open_copy_menu(state: &mut State) {
    let Some(d) = state.data.as_ref() else { return };
    let Some(node) = state.node else { return };
    let Some((_, a)) = d.analysis.graph.action(&d.corpus, node) else {
        return;
    };
    let mut items = Vec::new();
    if let Some(id) = a.id() {
        items.push(CopyTarget::Value("action id".into(), id.to_string()));
    }
    for key in [
        "arguments_digest",
        "pre_state_digest",
        "post_state_digest",
        "result_digest",
    ] {
        if let Some(v) = a.str_field(key) {
            items.push(CopyTarget::Value(key.replace('_', " "), v.to_string()));
        }
    }
    items.extend([
        CopyTarget::ActionJson,
        CopyTarget::RecordJson,
        CopyTarget::CanonicalBytes,
    ]);
    state.overlay = Overlay::Copy(items, 0);
}

/// One line of the Raw tab's JSON tree.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonLine {
    pub path: String,
    pub depth: usize,
    pub text: String,
    pub foldable: bool,
    pub folded: bool,
}

/// The Raw tab's lines: the selected action's record as a foldable tree (other actions
/// folded by default), or its canonical bytes.
pub fn raw_lines(state: &State) -> Vec<JsonLine> {
    let Some(d) = state.data.as_ref() else {
        return Vec::new();
    };
    let Some(node) = state.node else {
        return Vec::new();
    };
    let n = &d.analysis.graph.nodes[node as usize];
    let record = d.corpus.record(n.record as usize);
    if state.show_canonical {
        let bytes = canonical_bytes_without(&record.json, CHAIN_EXCLUDED, Variant::C1);
        let text = String::from_utf8_lossy(&bytes);
        return text
            .as_bytes()
            .chunks(96)
            .enumerate()
            .map(|(i, c)| JsonLine {
                path: format!("#{i}"),
                depth: 0,
                text: sanitize(&String::from_utf8_lossy(c)).into_owned(),
                foldable: false,
                folded: false,
            })
            .collect();
    }
    let own = format!("$.actions[{}]", n.pos);
    let mut out = Vec::new();
    walk_json(
        &record.json,
        "$",
        None,
        0,
        &own,
        &state.raw_folded,
        &mut out,
    );
    out
}

fn walk_json(
    v: &Json,
    path: &str,
    key: Option<String>,
    depth: usize,
    own: &str,
    toggled: &HashSet<String>,
    out: &mut Vec<JsonLine>,
) {
    let label = key
        .map(|k| format!("{}: ", sanitize(&k)))
        .unwrap_or_default();
    let (open, close, len) = match v {
        Json::Object(o) => ("{", "}", o.members.len()),
        Json::Array(a) => ("[", "]", a.len()),
        other => {
            let text = match other {
                Json::String(s) => format!("{label}\"{}\"", sanitize(&s.lossy())),
                Json::Number(n) => format!("{label}{}", sanitize(&n.raw)),
                other => format!(
                    "{label}{}",
                    serde_json::to_string(other).unwrap_or_default()
                ),
            };
            out.push(JsonLine {
                path: path.to_string(),
                depth,
                text,
                foldable: false,
                folded: false,
            });
            return;
        }
    };
    // Default: everything open on the way to the selected action, other actions and
    // signature material folded; a toggle flips the default.
    let default_folded = depth >= 2 && !own.starts_with(path)
        || (depth == 1 && (path.ends_with(".signature") || path.ends_with(".dsse_envelope")));
    let folded = default_folded != toggled.contains(path);
    if folded || len == 0 {
        out.push(JsonLine {
            path: path.to_string(),
            depth,
            text: format!(
                "{label}{open}{}{close}",
                if len == 0 {
                    String::new()
                } else {
                    format!(" … {len} ")
                }
            ),
            foldable: len > 0,
            folded: len > 0,
        });
        return;
    }
    out.push(JsonLine {
        path: path.to_string(),
        depth,
        text: format!("{label}{open}"),
        foldable: true,
        folded: false,
    });
    match v {
        Json::Object(o) => {
            for (k, child) in &o.members {
                let key = k.lossy().into_owned();
                walk_json(
                    child,
                    &format!("{path}.{key}"),
                    Some(key),
                    depth + 1,
                    own,
                    toggled,
                    out,
                );
            }
        }
        Json::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                walk_json(
                    child,
                    &format!("{path}[{i}]"),
                    None,
                    depth + 1,
                    own,
                    toggled,
                    out,
                );
            }
        }
        _ => {}
    }
    out.push(JsonLine {
        path: format!("{path}#end"),
        depth,
        text: close.to_string(),
        foldable: false,
        folded: false,
    });
}
