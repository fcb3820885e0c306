//! The timeline: the selected run's actions in tree order, folding, selection with
//! history, parent/child moves and the next/previous problem.

use super::*;

/// The timeline: the selected run and action, its rows in tree order, folds, zoom and
/// pan, and the selection history. Only the state module changes it; views and tests
/// read it through the methods.
#[derive(Debug)]
pub struct Timeline {
    /// Selected run (index into the graph's runs).
    pub(super) run: usize,
    pub(super) rows: Vec<Row>,
    pub(super) row_of: HashMap<NodeId, usize>,
    pub(super) folded: HashSet<NodeId>,
    pub(super) node: Option<NodeId>,
    pub(super) zoom: f64,
    /// Pan as a fraction of the zoomed axis.
    pub(super) pan: f64,
    pub(super) history: Vec<NodeId>,
    pub(super) history_pos: usize,
    /// The child `c` last went to, per parent.
    pub(super) child_seen: HashMap<NodeId, usize>,
    /// The run's emitter chains in order of their first action (a lane each), when it
    /// has more than one; each as its first action.
    pub(super) lanes: Vec<NodeId>,
    /// A capture gap `e` stopped at (a span of the run's telemetry with no action: its
    /// index among the capture's spans), shown instead of the selected action.
    pub(super) gap: Option<u32>,
}

impl Default for Timeline {
    fn default() -> Timeline {
        Timeline {
            run: 0,
            rows: Vec::new(),
            row_of: HashMap::new(),
            folded: HashSet::new(),
            node: None,
            zoom: 1.0,
            pan: 0.0,
            lanes: Vec::new(),
            gap: None,
            history: Vec::new(),
            history_pos: 0,
            child_seen: HashMap::new(),
        }
    }
}

impl Timeline {
    /// The selected run (index into the graph's runs).
    pub fn run(&self) -> usize {
        self.run
    }

    /// The selected action.
    pub fn node(&self) -> Option<NodeId> {
        self.node
    }

    /// The rows shown, in tree order.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// Zoom factor (1 = the whole run).
    pub fn zoom(&self) -> f64 {
        self.zoom
    }

    /// Pan as a fraction of the zoomed axis.
    pub fn pan(&self) -> f64 {
        self.pan
    }

    /// The run's emitter chains, one lane each (empty when it has one): each as its
    /// first action.
    pub fn lanes(&self) -> &[NodeId] {
        &self.lanes
    }

    /// The capture gap `e` stopped at, when one is shown (its span's index).
    pub fn gap(&self) -> Option<u32> {
        self.gap
    }
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
    /// The lane of the node's emitter chain ([`Timeline::lanes`]).
    pub lane: u16,
}

pub(super) fn timeline_command(state: &mut State, c: Command) {
    let Some(data) = state.data.as_ref() else {
        return;
    };
    let cur = state.cursor_row().unwrap_or(0);
    let last = state.timeline.rows.len().saturating_sub(1);
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
        if let Some(row) = state.timeline.rows.get(r) {
            let n = row.node;
            select(state, n, false);
        }
        return;
    }
    let Some(node) = state.timeline.node else {
        return;
    };
    let g = &data.analysis.graph;
    match c {
        Command::Toggle => {
            if !state.timeline.folded.remove(&node) {
                state.timeline.folded.insert(node);
            }
            rebuild_rows(state);
        }
        Command::Left => {
            state.timeline.pan = (state.timeline.pan - 0.1 / state.timeline.zoom).max(0.0);
        }
        Command::Right => {
            state.timeline.pan = (state.timeline.pan + 0.1 / state.timeline.zoom)
                .min(1.0 - 1.0 / state.timeline.zoom);
        }
        Command::ZoomIn | Command::ZoomOut => {
            // Centred on the selected action when it has a time.
            let centre = g.nodes[node as usize]
                .time()
                .map(|t| super::axis::run_axis(state, data).frac(t));
            state.timeline.zoom = if c == Command::ZoomIn {
                (state.timeline.zoom * 2.0).min(1024.0)
            } else {
                (state.timeline.zoom / 2.0).max(1.0)
            };
            let pan = centre.map_or(state.timeline.pan, |f| f - 0.5 / state.timeline.zoom);
            state.timeline.pan = pan.min(1.0 - 1.0 / state.timeline.zoom).max(0.0);
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
                    .timeline
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
    pub(super) fn child_cycle(&mut self, node: NodeId, count: usize) -> usize {
        let key = node;
        let entry = self.timeline.child_seen.entry(key).or_insert(usize::MAX);
        *entry = entry.wrapping_add(1) % count;
        *entry
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
    let mut changed = run != state.timeline.run;
    for p in unfold {
        changed |= state.timeline.folded.remove(&p);
    }
    state.timeline.run = run;
    if changed || state.timeline.rows.is_empty() {
        rebuild_rows(state);
        search_run(state);
    }
    // The navigator follows a jump to another run (`e`/`E`, search, history).
    if changed
        && state.focus != Pane::Navigator
        && let Some(i) = state
            .nav
            .items()
            .iter()
            .position(|i| i.target == NavTarget::Run(run))
    {
        state.nav.set_cursor(i);
    }
    if state.timeline.node != Some(node) || state.timeline.gap.is_some() {
        state.detail.new_action();
    }
    state.timeline.gap = None;
    state.timeline.node = Some(node);
    if record {
        state.timeline.history.truncate(state.timeline.history_pos);
        if state.timeline.history.last() != Some(&node) {
            state.timeline.history.push(node);
        }
        state.timeline.history_pos = state.timeline.history.len();
    } else if state.timeline.history.is_empty() {
        state.timeline.history.push(node);
        state.timeline.history_pos = 1;
    }
}

/// Rebuilds the timeline rows of the selected run: tree order, folded subtrees hidden;
/// with a filter applied, only the actions it passes and their ancestors (drawn dimmed,
/// for the tree's sake).
pub fn rebuild_rows(state: &mut State) {
    state.timeline.rows.clear();
    state.timeline.row_of.clear();
    let Some(data) = state.data.as_ref() else {
        return;
    };
    let g = &data.analysis.graph;
    let Some(run) = g.runs.get(state.timeline.run) else {
        return;
    };
    let run_idx = state.timeline.run as u32;
    let in_run = |n: NodeId| g.nodes[n as usize].run == run_idx;
    // A lane per emitter chain (two emitters sharing the run, each branch of a fork):
    // trees grouped by the lane of their root, in order of each lane's first action.
    let mut lane_of: HashMap<u32, u16> = HashMap::new();
    let mut lanes: Vec<NodeId> = Vec::new();
    let emitter = |n: NodeId| g.lineages.emitter(g.nodes[n as usize].chain);
    for &n in &run.nodes {
        lane_of.entry(emitter(n)).or_insert_with(|| {
            lanes.push(n);
            (lanes.len() - 1) as u16
        });
    }
    let lane = |n: NodeId| lane_of[&emitter(n)];
    let mut roots: Vec<NodeId> = run
        .nodes
        .iter()
        .copied()
        .filter(|n| g.nodes[*n as usize].parent.is_none_or(|p| !in_run(p)))
        .collect();
    roots.sort_by_cached_key(|&n| lane(n));
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
    // With a filter: the nodes it passes and every ancestor of one.
    let shown: Option<HashSet<NodeId>> = state.filter.is_applied().then(|| {
        let mut keep = HashSet::new();
        for &(n, _) in order.iter().rev() {
            if keep.contains(&n) || state.filter.passes(n) {
                keep.insert(n);
                if let Some(p) = g.nodes[n as usize].parent.filter(|&p| in_run(p)) {
                    keep.insert(p);
                }
            }
        }
        keep
    });
    let mut hidden_below: Option<u16> = None;
    for &(n, depth) in &order {
        if shown.as_ref().is_some_and(|k| !k.contains(&n)) {
            continue;
        }
        if let Some(d) = hidden_below {
            if depth > d {
                continue;
            }
            hidden_below = None;
        }
        let folded = state.timeline.folded.contains(&n);
        if folded {
            hidden_below = Some(depth);
        }
        state.timeline.row_of.insert(n, state.timeline.rows.len());
        state.timeline.rows.push(Row {
            node: n,
            depth,
            has_children: has_children.contains(&n),
            folded,
            subtree: subtree.get(&n).copied().unwrap_or(0),
            lane: lane(n),
        });
    }
    state.timeline.lanes = if lanes.len() > 1 { lanes } else { Vec::new() };
}

/// Nodes with a problem flag, in run then time order.
pub(super) fn problem_nodes(state: &State) -> Vec<NodeId> {
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

/// Where `e`/`E` stop: an action with a problem, or a capture gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Node(NodeId),
    /// A span of a traced run with no action (its index among the capture's spans).
    Gap(u32),
}

/// The next (or previous) problem after the selection in run, then time order, wrapping:
/// the problem actions and the capture gaps (each placed after the run's actions that
/// come no later than it).
pub(super) fn next_problem(state: &State, forward: bool) -> Option<Stop> {
    let d = state.data.as_ref()?;
    // In a run, the action of rank r sorts at 2r + 1 and a gap after k actions at 2k.
    let key = |n: NodeId| (d.run_of(n), 2 * d.rank[n as usize] as usize + 1);
    let mut stops: Vec<((usize, usize), Stop)> = (problem_nodes(state).into_iter())
        .map(|n| (key(n), Stop::Node(n)))
        .collect();
    if let Some(c) = d.capture.as_deref() {
        for (r, run) in d.analysis.graph.runs.iter().enumerate() {
            for g in c.gaps_in(r as u32) {
                let at = c.evidence_time(g);
                let before = (run.nodes.iter())
                    .filter(|n| {
                        d.analysis.graph.nodes[**n as usize]
                            .time()
                            .is_some_and(|t| t <= at)
                    })
                    .count();
                stops.push(((r, 2 * before), Stop::Gap(g)));
            }
        }
    }
    if stops.is_empty() {
        return None;
    }
    let here = match (state.timeline.gap, state.timeline.node) {
        (Some(g), _) => stops
            .iter()
            .find(|(_, s)| *s == Stop::Gap(g))
            .map(|(k, _)| *k),
        (None, Some(n)) => Some(key(n)),
        _ => None,
    };
    let Some(here) = here else {
        return stops.iter().min_by_key(|(k, _)| *k).map(|x| x.1);
    };
    if forward {
        (stops
            .iter()
            .filter(|(k, _)| *k > here)
            .min_by_key(|(k, _)| *k))
        .or_else(|| stops.iter().min_by_key(|(k, _)| *k))
        .map(|x| x.1)
    } else {
        (stops
            .iter()
            .filter(|(k, _)| *k < here)
            .max_by_key(|(k, _)| *k))
        .or_else(|| stops.iter().max_by_key(|(k, _)| *k))
        .map(|x| x.1)
    }
}

/// Shows capture gap `g`: its run's timeline with the last action before it selected
/// (the first when none is earlier), and the gap described in the detail pane.
pub(super) fn select_gap(state: &mut State, g: u32) {
    let Some(d) = state.data.as_ref() else {
        return;
    };
    let Some(c) = d.capture.as_deref() else {
        return;
    };
    let Some(run) = c.span_runs.get(g as usize).copied().flatten() else {
        return;
    };
    let at = c.evidence_time(g);
    let graph = &d.analysis.graph;
    let nodes = &graph.runs[run as usize].nodes;
    let before = (nodes.iter().copied())
        .filter(|n| graph.nodes[*n as usize].time().is_some_and(|t| t <= at))
        .max_by_key(|n| d.rank[*n as usize]);
    let Some(node) = before.or_else(|| nodes.first().copied()) else {
        return;
    };
    select(state, node, true);
    state.timeline.gap = Some(g);
    state.message = Some(
        "a tool call the agent's telemetry saw and no action records (e: next problem)".into(),
    );
}

/// The next (or previous) node of `list` after the selection, in run/time order, wrapping.
pub(super) fn next_in(state: &State, list: &[NodeId], forward: bool) -> Option<NodeId> {
    let d = state.data.as_ref()?;
    if list.is_empty() {
        return None;
    }
    let rank = |n: NodeId| -> (usize, usize) { (d.run_of(n), d.rank[n as usize] as usize) };
    let Some(cur) = state.timeline.node else {
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
